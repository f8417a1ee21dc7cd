import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { CircuitBreakerHttpOptions } from './interfaces/circuit-breaker-http-options.interface.js';
import type { CircuitBreakerModuleOptions } from './interfaces/circuit-breaker-module-options.interface.js';

/** Options that shape the module itself rather than the breakers. @publicApi */
export interface CircuitBreakerModuleExtras {
  /** Register the module globally. Default `true`. */
  isGlobal?: boolean;
  /**
   * Register `CircuitBreakerExceptionFilter` globally (503 + `Retry-After`, 504),
   * with bodies that name no breaker; `{ details: true }` adds the breaker's
   * name and reason, `{ body }` builds the body. Default `false`. A catch-all
   * filter registered with `app.useGlobalFilters()` takes precedence over it:
   * delegate to the filter from there (see `CircuitBreakerExceptionFilter`).
   */
  httpFilter?: boolean | CircuitBreakerHttpOptions;
}

export const {
  ConfigurableModuleClass: ConfigurableCircuitBreakerModule,
  MODULE_OPTIONS_TOKEN: CIRCUIT_BREAKER_MODULE_OPTIONS,
  OPTIONS_TYPE: CIRCUIT_BREAKER_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: CIRCUIT_BREAKER_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<CircuitBreakerModuleOptions>({
  moduleName: 'CircuitBreaker',
  // Namespaced like every token of the package (Nest's default would be 'CIRCUIT_BREAKER_MODULE_OPTIONS').
  optionsInjectionToken: 'CIRCUIT_BREAKER:MODULE_OPTIONS',
})
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createCircuitBreakerOptions')
  .setExtras<CircuitBreakerModuleExtras>(
    { isGlobal: true, httpFilter: false },
    (definition, extras) => ({
      ...definition,
      global: extras.isGlobal,
    }),
  )
  .build();
