/** Metadata key of a method decorated with `@CircuitBreaker()`. @internal */
export const CIRCUIT_BREAKER_METADATA = 'circuit-breaker:method';

/**
 * The property through which Nest injects the registry into instances whose
 * class has a decorated method, per application: two applications in one
 * process never share a breaker.
 *
 * @internal
 */
export const REGISTRY_PROPERTY = Symbol.for('nestjs-circuit-breaker.registry');

/**
 * Prefix of the DI token of a named breaker. Every string token of the package
 * starts with `CIRCUIT_BREAKER:`, as the official packages namespace theirs
 * (`'THROTTLER:MODULE_OPTIONS'`). Applications use `getCircuitBreakerToken(name)`.
 *
 * @internal
 */
export const CIRCUIT_BREAKER_TOKEN_PREFIX = 'CIRCUIT_BREAKER:BREAKER:';

/** DI token of the resolved `httpFilter` options (`undefined` when the filter is off). @internal */
export const CIRCUIT_BREAKER_HTTP_OPTIONS = Symbol.for('nestjs-circuit-breaker.http-options');

/** DI token of the tag each `forRoot()` / `forRootAsync()` call provides, to find the modules that import it. @internal */
export const CIRCUIT_BREAKER_ROOT = Symbol.for('nestjs-circuit-breaker.root');

/** Metadata key of the breaker names a class injects with `@InjectCircuitBreaker()`. @internal */
export const INJECTED_BREAKERS_METADATA = 'circuit-breaker:injected';

/** Metadata key of the breakers `@RequireCircuitBreaker()` requires, on a handler or a class. @internal */
export const REQUIRED_CIRCUITS_METADATA = 'circuit-breaker:required';

/** Metadata key of the breaker `@UseCircuitBreaker()` runs a handler (or every handler of a class) through. @internal */
export const CIRCUIT_INTERCEPTOR_METADATA = 'circuit-breaker:interceptor';

/**
 * DI token of the registry before its orchestrator is built: what the
 * orchestrator injects. The application injects `CircuitBreakerRegistry`,
 * provided through the orchestrator, so that whoever receives the registry
 * finds the module's breakers in it, whatever the order Nest builds providers in.
 *
 * @internal
 */
export const CIRCUIT_BREAKER_LOOKUP = Symbol.for('nestjs-circuit-breaker.registry-lookup');

/** Metadata key of the limiter `@ConcurrencyLimit()` names, on a handler or a class. @internal */
export const CONCURRENCY_LIMIT_METADATA = 'circuit-breaker:concurrency-limit';

/** Metadata key of the criticality `@Criticality()` (or `@ConcurrencyLimit(name, { criticality })`) gives a handler or a class. @internal */
export const CRITICALITY_METADATA = 'circuit-breaker:criticality';

/** The limiter of a route under `ConcurrencyLimitInterceptor` that names none. @internal */
export const DEFAULT_LIMITER = 'default';
