// `nestjs-circuit-breaker/testing`: the testing kit. The root entry never imports it.
export { CircuitBreakerTestingModule } from './circuit-breaker-testing.module.js';
export type {
  CircuitBreakerTestingModuleAsyncOptions,
  CircuitBreakerTestingModuleOptions,
} from './circuit-breaker-testing.module.js';
export { CircuitBreakerTester } from './circuit-breaker.tester.js';
export type { RecordedTransition, TesterTarget, WaitForOptions } from './circuit-breaker.tester.js';
export { ManualClock } from './manual-clock.js';
export type {
  BreakerDescriptor,
  DescribedBreakerOptions,
  ExpectedBreakerOptions,
} from './breaker-descriptor.js';
