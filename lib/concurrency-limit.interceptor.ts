import {
  Inject,
  Injectable,
  Optional,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { HttpAdapterHost, Reflector } from '@nestjs/core';
import type { Observable } from 'rxjs';
import { BreakerConfigError, type Criticality } from './core/index.js';
import { CONCURRENCY_LIMIT_METADATA, DEFAULT_LIMITER } from './circuit-breaker.constants.js';
import { CircuitBreakerExceptionFilter } from './circuit-breaker.exception-filter.js';
import { requireModule } from './circuit-breaker-module-missing.error.js';
import { CircuitBreakerRegistry } from './circuit-breaker.registry.js';
import type { ConcurrencyLimitUse } from './concurrency-limit-use.js';
import { concurrencyLimitMessages } from './concurrency-limit.messages.js';
import { answererOf, refusalOf } from './http-refusal.js';
import { limitedHandling, type ClientConnection } from './limited-handling.js';
import { criticalityReader } from './request-criticality.js';

/**
 * Protects the service's own work with a concurrency limiter of the module
 * (`CircuitBreakerModule.forRoot({ limiters })`): each request takes a place
 * before pipes and the handler run, and frees it when the handler's result
 * settles. Beyond the limit (and the limiter's queue, where the most important
 * request waits first), the request is refused: over HTTP 503 with the
 * header `circuit-breaker-code: LOAD_SHED`, no `Retry-After` (a place frees
 * as soon as any request ends), and the body of
 * `CircuitBreakerExceptionFilter`; elsewhere the `CallRejectedError` (reason
 * `'shed'`) for the transport's filter.
 *
 * Per route or controller with `@ConcurrencyLimit(name?)` (or
 * `@UseInterceptors(ConcurrencyLimitInterceptor)`), or for every route with
 * `APP_INTERCEPTOR` or `app.useGlobalInterceptors(app.get(ConcurrencyLimitInterceptor))`.
 * A route that names no limiter uses the one named `'default'`: without one,
 * start-up fails. Bound more than
 * once on a route, only the outermost binding takes a place.
 *
 * @publicApi
 */
@Injectable()
export class ConcurrencyLimitInterceptor implements NestInterceptor {
  private readonly registry: CircuitBreakerRegistry;
  private readonly filter: CircuitBreakerExceptionFilter;
  private readonly criticalityOf: (context: ExecutionContext) => Criticality;

  constructor(
    @Optional() @Inject(CircuitBreakerRegistry) registry: CircuitBreakerRegistry | undefined,
    @Inject(Reflector) private readonly reflector: Reflector,
    @Optional() @Inject(HttpAdapterHost) private readonly adapterHost: HttpAdapterHost | undefined,
    @Optional()
    @Inject(CircuitBreakerExceptionFilter)
    filter?: CircuitBreakerExceptionFilter,
  ) {
    // Nest builds the interceptor where it is used: without the module there, fail start-up saying so.
    this.registry = requireModule(
      registry,
      '@ConcurrencyLimit() (ConcurrencyLimitInterceptor)',
      'ConcurrencyLimitInterceptor',
    );
    this.filter = answererOf(adapterHost, filter, 'ConcurrencyLimitInterceptor');
    if (this.registry.limiterNames().length === 0)
      throw new BreakerConfigError(concurrencyLimitMessages.noLimiters(), DEFAULT_LIMITER);
    this.criticalityOf = criticalityReader(this.registry.orchestrator.criticality, reflector);
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    // Nest hands every interceptor of a route the same context: the bindings after this one see it taken.
    if (limited.has(context)) return next.handle();
    limited.add(context);
    const use = this.reflector.getAllAndOverride<ConcurrencyLimitUse | undefined>(
      CONCURRENCY_LIMIT_METADATA,
      [context.getHandler(), context.getClass()],
    );
    const limiter = this.registry.limiter(use?.name ?? DEFAULT_LIMITER);
    return limitedHandling(next, {
      limiter,
      criticality: this.criticalityOf(context),
      queues: limiter.mayQueue,
      connection: () => connectionOf(context),
      refuse: (rejection) => refusalOf(context, rejection, this.adapterHost, this.filter),
    });
  }
}

/** The contexts a binding of this interceptor already runs under a limiter. */
const limited = new WeakSet<ExecutionContext>();

/** The raw HTTP response of a request (Express's response, Fastify's `reply.raw`), or `undefined`. */
function connectionOf(context: ExecutionContext): ClientConnection | undefined {
  if (context.getType() !== 'http') return undefined;
  const response = context.switchToHttp().getResponse<{ raw?: unknown }>();
  const raw = (response?.raw ?? response) as Partial<ClientConnection> | undefined;
  return typeof raw?.once === 'function' && typeof raw.off === 'function'
    ? (raw as ClientConnection)
    : undefined;
}
