import {
  Catch,
  Inject,
  Injectable,
  Logger,
  Optional,
  type ArgumentsHost,
  type ExceptionFilter,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { CallTimeoutError, CallRejectedError } from './core/index.js';
import {
  toHttpResponse,
  breakerErrorIn,
  isBreakerHttpError,
  resolveHttpOptions,
  type CircuitBreakerHttpResponse,
} from './circuit-breaker-http.mapping.js';
import { transportAnswers } from './circuit-breaker-transport.answers.js';
import { toErrorPayload } from './circuit-breaker-transport.mapping.js';
import { CIRCUIT_BREAKER_HTTP_OPTIONS } from './circuit-breaker.constants.js';
import { circuitBreakerMessages } from './circuit-breaker.messages.js';
import type { CircuitBreakerHttpOptions } from './interfaces/circuit-breaker-http-options.interface.js';

/**
 * What Nest's filter selection (`exception instanceof` each `@Catch()` type)
 * sees as a breaker error wrapped by fetch: `fetch()` through a dispatcher
 * with a breaker rejects with `TypeError('fetch failed')`, its cause the
 * breaker's error. Any other error, another `TypeError` or an application's
 * own exception with a breaker error as its cause, is not one, so the filter
 * takes nothing from the application's own filters.
 */
// A class, as `@Catch()` takes: only its `instanceof` test is ever used.
// oxlint-disable-next-line typescript/no-extraneous-class
class WrappedBreakerError {
  static [Symbol.hasInstance](value: unknown): boolean {
    return !isBreakerHttpError(value) && breakerErrorIn(value) !== undefined;
  }
}

/**
 * Answers a `CallRejectedError` or a `CallTimeoutError` as the transport of
 * the request expects, without importing any transport's package; also one
 * that a `TypeError` wraps as its `cause` (as `fetch()` does through the
 * `nestjs-circuit-breaker/undici` dispatcher):
 *
 * - HTTP (Express and Fastify, through the HTTP adapter): **503 Service
 *   Unavailable** with a `Retry-After` header (whole seconds, rounded up, at
 *   most 86,400; none for an isolated breaker), or **504 Gateway Timeout**. The bodies name nothing
 *   internal unless `httpFilter: { details: true }`; `httpFilter: { body }`
 *   builds them.
 * - Microservices (`rpc`): the error the client gets is a
 *   `CircuitBreakerErrorPayload` (`{ status: 'error', code: 'CIRCUIT_OPEN' |
 *   'CALL_TIMEOUT', message, retryAfterMs? }`), as for an `RpcException`;
 *   over gRPC the status `UNAVAILABLE` or `DEADLINE_EXCEEDED`.
 * - WebSockets (`ws`): an `exception` message whose data is that payload, as
 *   for a `WsException`.
 * - GraphQL (`graphql`): the field fails with an error whose `extensions`
 *   carry `code` and `retryAfterMs`; the other fields of the query resolve.
 *
 * Register it with `forRoot({ httpFilter: true })` (it then answers every
 * transport of the application), or delegate to it from a catch-all filter:
 * Nest gives an exception to the global filter registered **last** that
 * matches it, however specific its `@Catch()`, so a catch-all registered with
 * `app.useGlobalFilters()` hides this one. `catch()` returns `false` for any
 * other error, and otherwise what the transport needs back (`true` over HTTP
 * and WebSockets, an Observable over RPC, the error over GraphQL):
 *
 * ```ts
 * const answer = this.breakerFilter.catch(exception, host);
 * if (answer !== false) return answer;
 * ```
 *
 * The module provides it (with its `httpFilter` options) whether or not
 * `httpFilter` is on: `app.get(CircuitBreakerExceptionFilter)` or inject it;
 * `@UseFilters(CircuitBreakerExceptionFilter)` binds that one to a gateway,
 * a resolver or a microservice controller. Built by hand,
 * `new CircuitBreakerExceptionFilter(app.get(HttpAdapterHost), { details? })`;
 * with no adapter host (`new CircuitBreakerExceptionFilter()`, in an
 * application that serves no HTTP) it answers every transport but HTTP, and
 * leaves a breaker error of an HTTP request to Nest's own handling.
 *
 * @publicApi
 */
@Injectable()
@Catch(CallRejectedError, CallTimeoutError, WrappedBreakerError)
export class CircuitBreakerExceptionFilter implements ExceptionFilter<unknown> {
  private readonly logger = new Logger('CircuitBreaker');
  private readonly options: CircuitBreakerHttpOptions;

  constructor(
    @Optional() private readonly adapterHost?: HttpAdapterHost,
    @Optional() @Inject(CIRCUIT_BREAKER_HTTP_OPTIONS) options?: CircuitBreakerHttpOptions,
  ) {
    // Built by hand (`new`), the options have not been through the module's start-up check.
    this.options = resolveHttpOptions(options ?? true) ?? {};
  }

  catch(thrown: unknown, host: ArgumentsHost): unknown {
    const exception = breakerErrorIn(thrown);
    if (exception === undefined) return false;
    const type = host.getType<string>();
    if (type !== 'http') {
      const answer = transportAnswers[type as keyof typeof transportAnswers];
      // A transport we do not know (a custom one): its own handling applies.
      if (answer === undefined) throw thrown;
      return answer(toErrorPayload(exception, this.options)!, host);
    }
    const adapter = this.adapterHost?.httpAdapter;
    // Built by hand without the HTTP adapter: nothing here can write the response.
    if (adapter === undefined) throw thrown;
    const answer = this.answerFor(exception);
    const response = host.switchToHttp().getResponse<unknown>();
    for (const [name, value] of Object.entries(answer.headers))
      adapter.setHeader(response, name, value);
    adapter.reply(response, answer.body, answer.status);
    return true;
  }

  /** Which of the body factory's errors were logged: each once, as the engine reports a hook's errors. */
  private readonly logged = new Set<'threw' | 'not-json'>();

  /** @internal The answer for a breaker error, with the module's options; `@RequireCircuitBreaker()` answers with it too. */
  answerFor(exception: CallRejectedError | CallTimeoutError): CircuitBreakerHttpResponse {
    let answer: CircuitBreakerHttpResponse;
    try {
      answer = toHttpResponse(exception, this.options)!;
    } catch (fault) {
      return this.defaultAnswer(exception, 'threw', fault);
    }
    if (this.options.body === undefined) return answer;
    try {
      // A body the adapter could not serialize (a cycle, a BigInt, a getter that throws) would fail in reply()
      // and become a 500: what is sent is a plain JSON copy, made here where a failure can still be answered.
      return { ...answer, body: JSON.parse(JSON.stringify(answer.body) as string) as unknown };
    } catch (fault) {
      return this.defaultAnswer(exception, 'not-json', fault);
    }
  }

  /** The client must still get its 503/504: a faulty envelope must not turn it into a 500. */
  private defaultAnswer(
    exception: CallRejectedError | CallTimeoutError,
    kind: 'threw' | 'not-json',
    fault: unknown,
  ): CircuitBreakerHttpResponse {
    if (!this.logged.has(kind)) {
      this.logged.add(kind);
      this.logger.error(
        kind === 'threw'
          ? circuitBreakerMessages.httpBodyFactoryThrew(fault)
          : circuitBreakerMessages.httpBodyNotJson(fault),
      );
    }
    return toHttpResponse(exception)!;
  }
}
