import { HttpException, type ExecutionContext } from '@nestjs/common';
import type { HttpAdapterHost } from '@nestjs/core';
import type { CallRejectedError } from './core/index.js';
import { CircuitBreakerExceptionFilter } from './circuit-breaker.exception-filter.js';
import { circuitBreakerMessages } from './circuit-breaker.messages.js';

/**
 * The filter a guard or an interceptor answers a refused HTTP request with.
 * Nest always injects `HttpAdapterHost`: without it the class was built by
 * hand (`new`) with two arguments, and would answer 500 instead of 503,
 * unnoticed until an outage, so it fails here. Without the module's filter
 * (Nest built it beside a `CircuitBreakerRegistry` of the application's own,
 * a unit test's stand-in, or it was built by hand with three arguments), it
 * answers as the filter does by default. @internal
 */
export function answererOf(
  adapterHost: HttpAdapterHost | undefined,
  filter: CircuitBreakerExceptionFilter | undefined,
  className: string,
): CircuitBreakerExceptionFilter {
  if (adapterHost === undefined)
    throw new TypeError(circuitBreakerMessages.answeringMissing(className));
  return filter ?? new CircuitBreakerExceptionFilter(adapterHost);
}

/**
 * What a guard or an interceptor refuses a request with, before its handler
 * runs: over HTTP, the filter's answer (503, `Retry-After`, the `httpFilter`
 * body) as an `HttpException` whose `cause` is the `CallRejectedError`, so it
 * needs no filter of its own; over other transports the `CallRejectedError`
 * itself, for the transport's filter.
 *
 * @internal
 */
export function refusalOf(
  context: ExecutionContext,
  rejection: CallRejectedError,
  adapterHost: HttpAdapterHost | undefined,
  filter: CircuitBreakerExceptionFilter | undefined,
): Error {
  const adapter = adapterHost?.httpAdapter;
  if (context.getType() !== 'http' || adapter === undefined || filter === undefined)
    return rejection;
  const response = filter.answerFor(rejection);
  const reply = context.switchToHttp().getResponse<unknown>();
  // The exception filter that sends the body (Nest's, or the application's) keeps what is already set.
  for (const [name, value] of Object.entries(response.headers))
    adapter.setHeader(reply, name, value);
  return answerWithoutStack(response.body as Record<string, unknown>, response.status, rejection);
}

/**
 * The 503 as an `HttpException`, built without capturing a stack: a
 * local rejection has no failing code to point at (`CallRejectedError` has no
 * stack either), and capturing one cost about 12 µs per rejected request,
 * more than the rest of the answer (bench:http, guard open).
 */
function answerWithoutStack(
  body: Record<string, unknown>,
  status: number,
  cause: CallRejectedError,
): HttpException {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return new HttpException(body, status, { cause });
  } finally {
    Error.stackTraceLimit = limit;
  }
}
