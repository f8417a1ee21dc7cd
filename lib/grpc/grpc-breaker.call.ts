import {
  Metadata,
  status as Status,
  type InterceptingListener,
  type InterceptorOptions,
  type NextCall,
  type StatusObject,
} from '@grpc/grpc-js';
import {
  BreakerHookError,
  InjectedFaultError,
  isCallRejected,
  type Breaker,
  type CallPermit,
} from '../core/index.js';
import { keyFor } from '../circuit-key.js';
import { grpcMessages } from './grpc.messages.js';
import { settleByStatus } from './grpc-status.outcome.js';
import type { GrpcRequest } from './grpc-circuit-breaker-options.interface.js';

/** The call `nextCall` makes (grpc-js does not export its interface by name). */
type InterceptingCallInterface = ReturnType<NextCall>;

/** What `withCircuitBreaker()` checked once, for every call it intercepts. @internal */
export interface GrpcBreakerSettings {
  readonly breaker: Breaker;
  /** Whether `breaker` is a per-key family: each call goes to the child of its key. */
  readonly family: boolean;
  readonly key: ((request: GrpcRequest) => string | undefined) | undefined;
  readonly skip: ((request: GrpcRequest) => boolean) | undefined;
}

/** Where a call's key function was given, in the messages of its faults. */
const KEY_SITE = 'withCircuitBreaker()';

type Listener = Partial<InterceptingListener>;

/** What grpc-js passes with a message: its `callback` tells the caller's stream the write is done. */
interface MessageContext {
  callback?: (error?: Error | null) => void;
}

/**
 * One gRPC call under a breaker, the innermost call of its interceptor: at
 * `start` it asks the breaker, and either makes the real call (through
 * `nextCall`) with a permit settled by the call's status, or answers the
 * listener itself with `UNAVAILABLE`, so that a refused call never reaches
 * the channel, let alone the server. The breaker's deadline (and a probe it
 * gives up on) cancels the real call; the caller's own cancel releases the
 * permit (ignored).
 *
 * @internal
 */
export class GrpcBreakerCall implements InterceptingCallInterface {
  private inner: InterceptingCallInterface | undefined;
  private permit: CallPermit | undefined;
  /** A cancel that came before `start`: the status the call ends with, without being made. */
  private cancelled: StatusObject | undefined;
  /** The caller's listener, for a call that ends without being made. */
  private listener: Listener | undefined;
  /** During a fault's latency: what the caller sent, for the call once it is made. */
  private waiting: ((inner: InterceptingCallInterface) => void)[] | undefined;
  /** The contexts of the messages `waiting` holds: their write callbacks, for a call never made. */
  private held: MessageContext[] | undefined;
  /** Whether the caller has been answered without the call being made. */
  private ended = false;

  constructor(
    private readonly options: InterceptorOptions,
    private readonly nextCall: NextCall,
    private readonly settings: GrpcBreakerSettings,
  ) {}

  start(metadata: Metadata, listener: Listener = {}): void {
    if (this.cancelled !== undefined) return answer(listener, this.cancelled);
    const request = requestOf(this.options, metadata);
    if (skipped(this.settings, request)) {
      this.inner = this.nextCall(this.options);
      return this.inner.start(metadata, listener);
    }
    const target = this.targetOf(request);
    let permit: CallPermit;
    try {
      permit = target.acquire(deadlineOf(this.options, Date.now()));
    } catch (refusal) {
      return answer(listener, refusalStatus(target, refusal));
    }
    this.permit = permit;
    this.listener = listener;
    this.endWhenBreakerDecides(permit);
    let made = false;
    let started: void | PromiseLike<void>;
    try {
      // Through the permit: an injected fault (faultInjection) applies here, before the call is made.
      started = permit.perform(() => {
        made = true;
        this.makeCall(metadata, listener, request, target, permit);
      });
    } catch (error) {
      if (made) throw error;
      return this.endUnmade(error);
    }
    if (started === undefined) return;
    // A fault's latency first: what the caller sends meanwhile waits for the call, which may never be made.
    this.waiting ??= [];
    started.then(undefined, (error: unknown) => {
      if (!made) return this.endUnmade(error);
      // grpc-js could not start the call after the latency (counted by makeCall()): nobody to throw to.
      this.ended = true;
      this.dropWaiting();
      const details = grpcMessages.startFailed(target.name, error);
      answer(listener, { code: Status.INTERNAL, details, metadata: new Metadata() });
    });
  }

  cancelWithStatus(status: Status, details: string): void {
    const inner = this.inner;
    if (inner === undefined) {
      this.cancelled ??= { code: status, details, metadata: new Metadata() };
      if (this.waiting === undefined || this.ended) return;
      // During a fault's latency: the call is never made, and the caller hears its own status.
      this.ended = true;
      this.dropWaiting();
      this.permit!.release();
      return answer(this.listener!, this.cancelled);
    }
    // The caller (or an interceptor above) gave up: says nothing about the dependency.
    this.permit?.release();
    inner.cancelWithStatus(status, details);
  }

  getPeer(): string {
    return this.inner?.getPeer() ?? '';
  }

  sendMessageWithContext(context: MessageContext, message: unknown): void {
    this.send((inner) => inner.sendMessageWithContext(context, message), context);
  }

  sendMessage(message: unknown): void {
    this.send((inner) => inner.sendMessage(message));
  }

  startRead(): void {
    this.send((inner) => inner.startRead());
  }

  halfClose(): void {
    this.send((inner) => inner.halfClose());
  }

  getAuthContext(): ReturnType<InterceptingCallInterface['getAuthContext']> {
    return this.inner?.getAuthContext() ?? null;
  }

  /**
   * Hands `step` to the call, or keeps it, in order, while a fault's latency
   * delays the call. A message for a call that is never made (refused,
   * ended during the latency) is done at once: grpc-js completes the writes
   * of a call that failed too, and a caller's stream waits for each write's
   * callback before the next one, its end and its `finish`.
   */
  private send(step: (inner: InterceptingCallInterface) => void, context?: MessageContext): void {
    if (this.waiting !== undefined) {
      this.waiting.push(step);
      if (context !== undefined) (this.held ??= []).push(context);
    } else if (this.inner !== undefined) step(this.inner);
    else if (context !== undefined) written([context]);
  }

  /** Forgets what the caller sent during a latency, for a call that is never made: its writes are done. */
  private dropWaiting(): void {
    this.waiting = undefined;
    const held = this.held;
    this.held = undefined;
    if (held !== undefined) written(held);
  }

  /** The real call, with `permit` settled by its status; then what the caller sent during a latency. */
  private makeCall(
    metadata: Metadata,
    listener: Listener,
    request: GrpcRequest,
    target: Breaker,
    permit: CallPermit,
  ): void {
    try {
      this.inner = this.nextCall(this.options);
      this.inner.start(metadata, {
        onReceiveMetadata: (received: Metadata) => listener.onReceiveMetadata?.(received),
        onReceiveMessage: (message: unknown) => listener.onReceiveMessage?.(message),
        onReceiveStatus: (status: StatusObject) => {
          try {
            settleByStatus(permit, request.method, status, target.clock.now());
          } catch (error) {
            // Metadata that cannot be read: the call still counts, and the caller still gets its status.
            permit.fail(error);
          }
          listener.onReceiveStatus?.(status);
        },
      });
    } catch (error) {
      permit.fail(error);
      throw error;
    }
    const waiting = this.waiting;
    this.waiting = undefined;
    this.held = undefined;
    for (const step of waiting ?? []) step(this.inner);
  }

  /**
   * Ends a call the permit's `perform()` did not make: the breaker's deadline
   * (or a probe it gave up on) during a fault's latency answers
   * `DEADLINE_EXCEEDED` (counted already); an injected failure is counted and
   * answered with the status a real failure of its kind has (`injectedStatus`).
   */
  private endUnmade(error: unknown): void {
    this.dropWaiting();
    if (this.ended) return;
    this.ended = true;
    const permit = this.permit!;
    const signal = permit.signal;
    if (signal.aborted && error === signal.reason)
      return answer(this.listener!, {
        code: Status.DEADLINE_EXCEEDED,
        details: reasonText(error),
        metadata: new Metadata(),
      });
    permit.fail(error);
    answer(this.listener!, injectedStatus(error));
  }

  /** The breaker itself, or the child of the call's key in a per-key family. */
  private targetOf(request: GrpcRequest): Breaker {
    const { breaker, family, key } = this.settings;
    if (!family) return breaker;
    if (key === undefined) return breaker.forKey(request.method);
    return breaker.forKey(keyFor(breaker, KEY_SITE, key, request));
  }

  /**
   * The breaker's deadline (one timer for the process, armed by the permit)
   * and a probe the breaker gives up on abort the permit's signal: the breaker
   * has counted the call, so the real one is cancelled (the server sees its
   * stream reset) and the caller gets `DEADLINE_EXCEEDED`.
   */
  private endWhenBreakerDecides(permit: CallPermit): void {
    if (permit.timeoutMs === undefined && !permit.probe) return;
    permit.signal.addEventListener(
      'abort',
      () => {
        // release() aborts the signal too: the caller's cancel, already on its way.
        if (permit.outcome === 'ignored') return;
        // Before the call is made (a fault's latency), the end of the wait answers the caller: endUnmade().
        this.inner?.cancelWithStatus(Status.DEADLINE_EXCEEDED, reasonText(permit.signal.reason));
      },
      { once: true },
    );
    // The breaker's deadline on its one timer: the permit's signal aborts, which cancels the call above.
    permit.watchDeadline(() => undefined);
  }
}

// The longest deadline a timer can wait for: a call's deadline further away than this is capped.
const MAX_DEADLINE_MS = 2_147_483_647;

/**
 * The call's own `deadline` (a `Date` or milliseconds since the epoch), as
 * the breaker's deadline for that call: the time left until it, so that a
 * call given 30 s is not cut at the breaker's 2 s, and one given 100 ms is
 * counted a timeout by the breaker. Measured against `Date.now()`, as grpc-js
 * measures it (not the breaker's clock, which tests may hold). No deadline, `Infinity` (grpc-js's none:
 * a call cannot remove the breaker's) and one already past (grpc-js ends the
 * call at once, and its `DEADLINE_EXCEEDED` counts): the breaker's.
 */
function deadlineOf(options: InterceptorOptions, now: number): { timeoutMs: number } | undefined {
  const deadline: unknown = options.deadline;
  const at = deadline instanceof Date ? deadline.getTime() : deadline;
  if (typeof at !== 'number' || !Number.isFinite(at)) return undefined;
  const left = Math.ceil(at - now);
  return left > 0 ? { timeoutMs: Math.min(left, MAX_DEADLINE_MS) } : undefined;
}

function requestOf(options: InterceptorOptions, metadata: Metadata): GrpcRequest {
  const method = options.method_definition.path;
  const slash = method.lastIndexOf('/');
  return { method, service: method.slice(1, slash), metadata, options };
}

/** Whether the call bypasses the breaker; a `skip` that throws is reported and skips nothing. */
function skipped(settings: GrpcBreakerSettings, request: GrpcRequest): boolean {
  const skip = settings.skip;
  if (skip === undefined) return false;
  try {
    return skip(request) === true;
  } catch (fault) {
    const breaker = settings.breaker;
    breaker.reportHookError(
      `skip@${KEY_SITE}`,
      new BreakerHookError(grpcMessages.skipThrew(breaker.name, fault), fault),
    );
    return false;
  }
}

/**
 * The status of a call the breaker refused: `UNAVAILABLE`, the code gRPC
 * gives a call that was not sent and may be retried later, with the
 * rejection's message as details and, in trailing metadata, its code
 * (`CIRCUIT_OPEN`, `BULKHEAD_FULL`), reason and `retry-after-ms`: the
 * metadata this package's server-side filters send, so `classifyGrpcError()`
 * of a caller further up reads it as a breaker's answer.
 */
function refusalStatus(target: Breaker, refusal: unknown): StatusObject {
  const metadata = new Metadata();
  if (!isCallRejected(refusal))
    return {
      code: Status.INTERNAL,
      details: grpcMessages.startFailed(target.name, refusal),
      metadata,
    };
  metadata.set('circuit-breaker-code', refusal.code);
  metadata.set('circuit-breaker-reason', refusal.reason);
  if (refusal.retryAfterMs !== undefined)
    metadata.set('retry-after-ms', String(refusal.retryAfterMs));
  return { code: Status.UNAVAILABLE, details: refusal.message, metadata };
}

/**
 * The status of a call an injected fault failed, as a real failure of its
 * kind ends: `UNAVAILABLE` for a failure (the server could not be reached or
 * could not serve, the code the status table counts against it); for an
 * overload, `UNAVAILABLE` with `grpc-retry-pushback-ms` (gRPC's own pause,
 * gRFC A6) when it asks for a pause, `RESOURCE_EXHAUSTED` when it does not:
 * both read as an overload by the table, in a caller further up as here.
 * An error of the user's own (`fail: error`) ends as a server handler's error
 * does in grpc-js: its gRPC `code` if it has one, else `UNKNOWN`.
 */
function injectedStatus(error: unknown): StatusObject {
  const metadata = new Metadata();
  if (error instanceof InjectedFaultError) {
    const details = error.message;
    if (error.fault === 'failure') return { code: Status.UNAVAILABLE, details, metadata };
    if (error.retryAfterMs === undefined)
      return { code: Status.RESOURCE_EXHAUSTED, details, metadata };
    metadata.set('grpc-retry-pushback-ms', String(error.retryAfterMs));
    return { code: Status.UNAVAILABLE, details, metadata };
  }
  const { code, details } = (typeof error === 'object' && error !== null ? error : {}) as {
    code?: unknown;
    details?: unknown;
  };
  return {
    code:
      typeof code === 'number' && Number.isInteger(code) && code > 0 && code <= 16
        ? code
        : Status.UNKNOWN,
    details: typeof details === 'string' ? details : reasonText(error),
    metadata,
  };
}

/**
 * Ends a call that was never made: grpc-js's own calls report their status
 * after `start` returns (the caller has its call object and its listeners by
 * then), and so does this one.
 */
function answer(listener: Listener, status: StatusObject): void {
  process.nextTick(() => listener.onReceiveStatus?.(status));
}

/** Tells the caller's stream that these writes are done, on the next tick, as grpc-js does. */
function written(contexts: MessageContext[]): void {
  process.nextTick(() => {
    for (const context of contexts) context.callback?.();
  });
}

function reasonText(reason: unknown): string {
  return reason instanceof Error ? reason.message : String(reason);
}
