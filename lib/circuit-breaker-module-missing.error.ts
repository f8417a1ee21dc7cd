import { circuitBreakerMessages } from './circuit-breaker.messages.js';

/**
 * Something that needs `CircuitBreakerModule` runs in an application (or a
 * module) that does not import it: a class with `@CircuitBreaker()` methods,
 * `CircuitBreakerHealthModule`, `CircuitBreakerMetricsModule`,
 * `CircuitBreakerTelemetryModule`. Thrown at start-up where Nest lets the
 * package see it (`app.init()`, `compile()` for the integration modules), and
 * otherwise by the first decorated call. The message names what needs the
 * module and ends with the import to add.
 *
 * @publicApi
 */
export class CircuitBreakerModuleMissingError extends Error {
  declare readonly name: 'CircuitBreakerModuleMissingError';
  readonly code = 'CIRCUIT_BREAKER_MODULE_MISSING' as const;

  constructor(
    message: string,
    /** What needs the module: a class (`PaymentsService`), a method (`PaymentsService.charge`) or an integration module. */
    readonly requiredBy: string,
  ) {
    super(message);
  }
}
Object.defineProperty(CircuitBreakerModuleMissingError.prototype, 'name', {
  value: 'CircuitBreakerModuleMissingError',
});

/**
 * What Nest injected for an enhancer's registry (guard, interceptor), or the
 * error that fails start-up where it is used without the module: Nest builds
 * an enhancer in the module that uses it. @internal
 */
export function requireModule<R>(
  registry: R | undefined,
  integration: string,
  className: string,
): R {
  if (registry === undefined)
    throw new CircuitBreakerModuleMissingError(
      circuitBreakerMessages.integrationWithoutModule(integration),
      className,
    );
  return registry;
}
