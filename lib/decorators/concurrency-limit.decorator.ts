import { UseInterceptors } from '@nestjs/common';
import { CONCURRENCY_LIMIT_METADATA } from '../circuit-breaker.constants.js';
import { checkLimitUse, setCriticality } from '../concurrency-limit-use.js';
import { concurrencyLimitMessages } from '../concurrency-limit.messages.js';
import { ConcurrencyLimitInterceptor } from '../concurrency-limit.interceptor.js';
import type { ConcurrencyLimitMethodOptions } from '../interfaces/concurrency-limit-options.interface.js';
import { decorationSite } from './decoration-site.js';

/**
 * Runs the handler under the concurrency limiter `name` (defined in
 * `CircuitBreakerModule.forRoot({ limiters })`; without a name, the limiter
 * named `'default'`): a request takes a place before pipes and the handler
 * run, and frees it when the handler's result settles. Beyond the limit (and
 * the limiter's queue), the request is refused with 503 and the header
 * `circuit-breaker-code: LOAD_SHED` (no `Retry-After`) over HTTP, the
 * `CallRejectedError` elsewhere.
 *
 * On a method, or a class (every handler; a method's own name wins). Binds
 * `ConcurrencyLimitInterceptor`; with the interceptor also global, a request
 * still takes one place. `criticality` is as `@Criticality()`.
 *
 * @publicApi
 */
export function ConcurrencyLimit(
  name?: string,
  options: ConcurrencyLimitMethodOptions = {},
): ClassDecorator & MethodDecorator {
  return ((target: object, propertyKey?: string | symbol, descriptor?: PropertyDescriptor) => {
    const site = decorationSite('@ConcurrencyLimit()', target, propertyKey);
    const use = checkLimitUse(site, name, options);
    const on = (descriptor === undefined ? target : descriptor.value) as object;
    if (Reflect.getOwnMetadata(CONCURRENCY_LIMIT_METADATA, on) !== undefined)
      throw new TypeError(concurrencyLimitMessages.limitTwice(site));
    Reflect.defineMetadata(CONCURRENCY_LIMIT_METADATA, { name: use.name, site }, on);
    if (use.criticality !== undefined) setCriticality(site, on, use.criticality);
    if (descriptor === undefined) {
      UseInterceptors(ConcurrencyLimitInterceptor)(target as never);
      return;
    }
    UseInterceptors(ConcurrencyLimitInterceptor)(target, propertyKey!, descriptor);
    return descriptor;
  }) as ClassDecorator & MethodDecorator;
}
