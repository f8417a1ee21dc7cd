import type { Dispatcher } from 'undici';
import { describe, expect, it } from 'vitest';
import { Breaker } from '../../lib/core/index.js';
import { ManualClock } from '../../lib/testing/manual-clock.js';
import { withCircuitBreaker } from '../../lib/undici/index.js';

// A failure's body (FailureBody) as each handler API hears it: undici is a stub driven by hand, so each step
// (headers, chunks, end, the caller's pause and resume) happens exactly when the test says.

const TOO_LARGE =
  'Circuit breaker "upstream" counted this response as a failure and read its body for the caller so as not to hold the connection, but the body passed 4 bytes ("failureBodyLimit"), so the request was aborted. Raise failureBodyLimit if such bodies must reach the caller whole.';

/** One request as the test drives it: what undici says, what the caller does, and what each heard. */
interface Exchange {
  /** What the caller's handler heard, in order. */
  readonly heard: string[];
  /** What the breaker did to undici's request: `pause`, `abort: <message>`. */
  readonly upstream: string[];
  respond(status: number): void;
  data(text: string): void;
  end(): void;
  callerPausesNext(): void;
  callerResumes(): void;
  callerAborts(reason: Error): void;
  callerThrowsNext(error: Error): void;
}

/** Only what the caller's handler does next: pause on, or throw at, the next chunk it hears. */
interface Next {
  pause: boolean;
  error: Error | undefined;
}

function breaker(): Breaker {
  return new Breaker('upstream', { timeoutMs: false }, { clock: new ManualClock() });
}

/** undici's newer handler API (onResponseStart...), through the interceptor. */
function newerApi(b: Breaker): Exchange {
  const heard: string[] = [];
  const upstream: string[] = [];
  const next: Next = { pause: false, error: undefined };
  let inner!: Dispatcher.DispatchHandler;
  let caller!: Dispatcher.DispatchController;
  const controller = {
    aborted: false,
    paused: false,
    reason: null,
    abort: (reason: Error) => upstream.push(`abort: ${reason.message}`),
    pause: () => upstream.push('pause'),
    // The caller's resume reaches undici's request whatever it was: not what these tests follow.
    resume: () => {},
  };
  const dispatch = withCircuitBreaker({ breaker: b, failureBodyLimit: 4 })((_options, handler) => {
    inner = handler;
    return true;
  });
  dispatch(
    { origin: 'http://upstream.test', path: '/', method: 'GET' },
    {
      onRequestStart: (given) => (caller = given),
      onResponseStart: (_c, status) => heard.push(`head ${status}`),
      onResponseData: (_c, chunk) => {
        heard.push(`data ${chunk.toString()}`);
        if (next.error !== undefined) throw next.error;
        if (next.pause) caller.pause();
        next.pause = false;
      },
      onResponseEnd: () => heard.push('end'),
      onResponseError: (_c, error) => heard.push(`error: ${error.message}`),
    },
  );
  inner.onRequestStart!(controller, {});
  return {
    heard,
    upstream,
    respond: (status) => inner.onResponseStart!(controller, status, {}, ''),
    data: (text) => inner.onResponseData!(controller, Buffer.from(text)),
    end: () => inner.onResponseEnd!(controller, {}),
    callerPausesNext: () => (next.pause = true),
    callerResumes: () => caller.resume(),
    callerAborts: (reason) => caller.abort(reason),
    callerThrowsNext: (error) => (next.error = error),
  };
}

/** undici's older handler API (onHeaders...), which fetch and request() give the dispatcher form. */
function olderApi(b: Breaker): Exchange {
  const heard: string[] = [];
  const upstream: string[] = [];
  const next: Next = { pause: false, error: undefined };
  let inner!: Dispatcher.DispatchHandler;
  let callerAbort!: (reason?: Error) => void;
  let callerResume!: () => void;
  const stub = {
    dispatch: (_options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler) => {
      inner = handler;
      return true;
    },
  } as unknown as Dispatcher;
  const pausedNow = (): boolean => {
    const paused = next.pause;
    next.pause = false;
    return !paused;
  };
  withCircuitBreaker(stub, { breaker: b, failureBodyLimit: 4 }).dispatch(
    { origin: 'http://upstream.test', path: '/', method: 'GET' },
    {
      onConnect: (abort) => (callerAbort = abort),
      onHeaders: (status, _headers, resume) => {
        heard.push(`head ${status}`);
        callerResume = resume;
        return pausedNow();
      },
      onData: (chunk) => {
        heard.push(`data ${chunk.toString()}`);
        if (next.error !== undefined) throw next.error;
        return pausedNow();
      },
      onComplete: () => heard.push('end'),
      onError: (error) => heard.push(`error: ${error.message}`),
    },
  );
  inner.onConnect!((reason) => upstream.push(`abort: ${reason!.message}`));
  return {
    heard,
    upstream,
    respond: (status) => {
      if (inner.onHeaders!(status, [], () => {}, '') === false) upstream.push('pause');
    },
    data: (text) => {
      if (inner.onData!(Buffer.from(text)) === false) upstream.push('pause');
    },
    end: () => inner.onComplete!([]),
    callerPausesNext: () => (next.pause = true),
    callerResumes: () => callerResume(),
    callerAborts: (reason) => callerAbort(reason),
    callerThrowsNext: (error) => (next.error = error),
  };
}

describe.each([
  ['newer', newerApi],
  ['older', olderApi],
] as const)("a failure's body through undici's %s handler API", (_api, exchangeOf) => {
  it('is held while the caller is paused, and given on resume in order, with its end', () => {
    const b = breaker();
    const exchange = exchangeOf(b);
    exchange.respond(500);
    exchange.data('a');
    exchange.callerPausesNext();
    exchange.data('b');
    exchange.data('c');
    exchange.end();
    expect(exchange.heard).toEqual(['head 500', 'data a', 'data b']);

    exchange.callerResumes();
    expect(exchange.heard).toEqual(['head 500', 'data a', 'data b', 'data c', 'end']);
    // The body kept coming: undici's request was never paused.
    expect(exchange.upstream.filter((step) => step === 'pause')).toEqual([]);
    expect(b.snapshot().totals.failures.total).toBe(1);
  });

  it('a caller that pauses again while given what was held hears the rest on its next resume', () => {
    const exchange = exchangeOf(breaker());
    exchange.respond(500);
    exchange.callerPausesNext();
    exchange.data('a');
    exchange.data('b');
    exchange.data('c');
    exchange.end();
    exchange.callerPausesNext();
    exchange.callerResumes();
    expect(exchange.heard).toEqual(['head 500', 'data a', 'data b']);

    exchange.callerResumes();
    expect(exchange.heard).toEqual(['head 500', 'data a', 'data b', 'data c', 'end']);
  });

  it('a caller that gives up while the end is held hears its own abort, and the failure stays counted', () => {
    const b = breaker();
    const exchange = exchangeOf(b);
    exchange.respond(503);
    exchange.callerPausesNext();
    exchange.data('a');
    exchange.data('b');
    exchange.end();

    exchange.callerAborts(new Error('gave up'));
    exchange.callerResumes();
    expect(exchange.heard).toEqual(['head 503', 'data a', 'error: gave up']);
    expect(exchange.upstream).toEqual(['abort: gave up']);
    expect(b.snapshot().totals.failures.total).toBe(1);
    expect(b.snapshot().totals.ignored).toBe(0);
  });

  it('a caller that throws while given what was held: the request is aborted, and it hears its error once', () => {
    const exchange = exchangeOf(breaker());
    exchange.respond(500);
    exchange.callerPausesNext();
    exchange.data('a');
    exchange.data('b');
    exchange.end();
    exchange.callerThrowsNext(new Error('handler broke'));

    exchange.callerResumes();
    expect(exchange.heard).toEqual(['head 500', 'data a', 'data b', 'error: handler broke']);
    expect(exchange.upstream).toEqual(['abort: handler broke']);
  });

  it('past failureBodyLimit, held or not: the request is aborted, and the caller hears why, once', () => {
    const exchange = exchangeOf(breaker());
    exchange.respond(500);
    exchange.callerPausesNext();
    exchange.data('ab');
    exchange.data('cd');
    exchange.data('e');
    exchange.end();
    exchange.callerResumes();
    expect(exchange.heard).toEqual(['head 500', 'data ab', `error: ${TOO_LARGE}`]);
    expect(exchange.upstream).toEqual([`abort: ${TOO_LARGE}`]);
  });

  it("a success's body is not held: the caller's pause reaches undici's request", () => {
    const b = breaker();
    const exchange = exchangeOf(b);
    exchange.respond(200);
    exchange.callerPausesNext();
    exchange.data('abcdefgh');
    exchange.end();
    expect(exchange.heard).toEqual(['head 200', 'data abcdefgh', 'end']);
    expect(exchange.upstream).toEqual(['pause']);
    expect(b.snapshot().totals.successes).toBe(1);
  });
});
