import { describeValue } from '../core/options/option.messages.js';

/** Every text of the testing kit: what went wrong, naming the breaker and the state, and what to do. @internal */
export const testingMessages = {
  badClockTime: (what: string, value: unknown) =>
    `ManualClock: ${what} must be a finite number of milliseconds${what === 'advance(ms)' ? ', 0 or more' : ''}, got ${describeValue(value)}.`,
  noTimer: (timeoutMs: number) =>
    `ManualClock: no timer was set within ${timeoutMs} ms of real time: nothing waits on a deadline or an injected latency. Check that the call was started and that its breaker has a deadline (timeoutMs) or a latency.`,
  badState: (breaker: string, state: unknown, states: readonly string[]) =>
    `CircuitBreakerTester.waitFor("${breaker}"): ${describeValue(state)} is not a state of a breaker. Wait for one of: ${states.join(', ')}.`,
  waitTimedOut: (
    breaker: string,
    awaited: string,
    state: string,
    timeoutMs: number,
    history: string,
  ) =>
    `CircuitBreakerTester.waitFor("${breaker}", '${awaited}'): the breaker is still ${state} after ${timeoutMs} ms of real time. ${history} Move the manual clock (clock.advance()) or make the calls that would get it there.`,
  noHistory: () => 'It has not changed state since the test module started.',
  lastChanges: (changes: string) => `Its transitions so far: ${changes}.`,
  optionsDiffer: (breaker: string, differences: readonly string[]) =>
    `Circuit breaker "${breaker}": its effective options differ from what the test expects:\n  - ${differences.join('\n  - ')}`,
  unknownForceOption: (breaker: string, key: string, suggestion: string | undefined) =>
    `CircuitBreakerTester.force("${breaker}"): no option "${key}".` +
    (suggestion === undefined ? '' : ` Did you mean "${suggestion}"?`) +
    ' Its options are reason, untilMs and key; nothing was forced.',
  unknownOption: (breaker: string, path: string) =>
    `Circuit breaker "${breaker}": expectOptions() names "${path}", which is not an effective option of a breaker. Compare with describe("${breaker}").options.`,
  notAManualClock: (method: string, clock: unknown) =>
    `CircuitBreakerTestingModule.${method}: option "clock" must be a ManualClock from nestjs-circuit-breaker/testing, got ${describeValue(clock)}. Pass new ManualClock(start), or leave it out for one starting at 2026-01-01T00:00:00Z.`,
  outsideTestRunner: () =>
    `CircuitBreakerTestingModule is in use outside a test runner (none of VITEST, JEST_WORKER_ID, NODE_TEST_CONTEXT or NODE_ENV=test is set, no global describe() and it()): every breaker runs on a ManualClock, so deadlines never fire and open breakers never recover unless the clock is moved. Import CircuitBreakerModule in an application that serves traffic; if this is a test, set NODE_ENV=test.`,
  asyncNeedsFactory: () =>
    `CircuitBreakerTestingModule.forRootAsync() takes { useFactory, inject?, imports? }: the testing module adds its manual clock to what the factory returns. Turn a useClass or useExisting provider into useFactory: (factory) => factory.createCircuitBreakerOptions(), inject: [YourFactory].`,
};
