import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { CircuitBreakerModuleOptions } from './interfaces/circuit-breaker-module-options.interface.js';

export const {
  ConfigurableModuleClass: ConfigurableCircuitBreakerModule,
  MODULE_OPTIONS_TOKEN: CIRCUIT_BREAKER_MODULE_OPTIONS,
  OPTIONS_TYPE: CIRCUIT_BREAKER_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: CIRCUIT_BREAKER_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<Omit<CircuitBreakerModuleOptions, 'isGlobal' | 'httpFilter'>>({
  moduleName: 'CircuitBreaker',
  // Namespaced like every token of the package (Nest's default would be 'CIRCUIT_BREAKER_MODULE_OPTIONS').
  optionsInjectionToken: 'CIRCUIT_BREAKER:MODULE_OPTIONS',
})
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createCircuitBreakerOptions')
  .setExtras<Pick<CircuitBreakerModuleOptions, 'isGlobal' | 'httpFilter'>>(
    { isGlobal: true, httpFilter: false },
    (definition, extras) => ({
      ...definition,
      global: extras.isGlobal,
    }),
  )
  .build();
