import type { Dispatcher } from 'undici';
import { describe, expect, it } from 'vitest';
import { Breaker } from '../../lib/core/index.js';
import { ManualClock } from '../../lib/testing/manual-clock.js';
import { withCircuitBreaker } from '../../lib/undici/index.js';

// A dispatch undici would not even take (it throws) says nothing about the dependency: the permit is given
// back. A counted call's permit sends the request at once (the caller gets the error as thrown); with a
// fault in place, it is sent through perform(), after the fault's latency (the caller hears the error).

const refused = new Error('undici refused the request');
const throwing = (): boolean => {
  throw refused;
};

const REQUEST: Dispatcher.DispatchOptions = {
  origin: 'http://upstream.test',
  path: '/',
  method: 'GET',
};

/** Both forms, each with a handler of the API it is given, recording the caller's last word. */
const FORMS = {
  interceptor: (breaker: Breaker, heard: string[]) =>
    withCircuitBreaker({ breaker })(throwing)(REQUEST, {
      onRequestStart: () => {},
      onResponseError: (_controller, error) => heard.push(error.message),
    }),
  dispatcher: (breaker: Breaker, heard: string[]) =>
    withCircuitBreaker({ dispatch: throwing } as unknown as Dispatcher, { breaker }).dispatch(
      REQUEST,
      { onError: (error) => heard.push(error.message) },
    ),
};

describe.each(Object.keys(FORMS) as (keyof typeof FORMS)[])(
  'a dispatcher that throws (the %s form)',
  (form) => {
    it('a counted call: the error is thrown, and the permit given back (ignored)', () => {
      const breaker = new Breaker('upstream', { timeoutMs: 1_000 }, { clock: new ManualClock() });
      const heard: string[] = [];
      expect(() => FORMS[form](breaker, heard)).toThrow(refused);
      expect(heard).toEqual([]);
      expect(breaker.snapshot().totals.ignored).toBe(1);
      expect(breaker.snapshot().totals.failures.total).toBe(0);
    });

    it("after a fault's latency: the caller hears the error, and the permit is given back (ignored)", async () => {
      const clock = new ManualClock();
      const breaker = new Breaker(
        'upstream',
        { timeoutMs: 1_000 },
        { clock, faultInjection: true },
      );
      breaker.injectFault({ latencyMs: 100 });
      const heard: string[] = [];
      expect(FORMS[form](breaker, heard)).toBe(true);
      clock.advance(100);
      await new Promise<void>((resolve) => setImmediate(resolve));
      expect(heard).toEqual([refused.message]);
      expect(breaker.snapshot().totals.ignored).toBe(1);
      expect(breaker.snapshot().totals.failures.total).toBe(0);
    });
  },
);
