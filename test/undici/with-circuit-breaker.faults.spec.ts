import { Agent, request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Breaker, InjectedFaultError } from '../../lib/core/index.js';
import { ManualClock } from '../../lib/testing/manual-clock.js';
import { withCircuitBreaker } from '../../lib/undici/index.js';
import { startCountingServer, type CountingServer } from './counting-server.js';

// Injected faults (deps.faultInjection) through the dispatcher: acquire() gives the interceptor a permit whose
// perform() applies the fault before anything is sent. Before, the request went out and its real answer counted.

/** The two forms: the interceptor for compose(), and the dispatcher wrapping the Agent. */
const FORMS = ['compose', 'dispatcher'] as const;
let form: (typeof FORMS)[number] = 'compose';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function server(): Promise<CountingServer> {
  const started = await startCountingServer();
  cleanups.push(() => started.close());
  return started;
}

function setup(clock = new ManualClock()) {
  const breaker = new Breaker('upstream', { timeoutMs: 2_000 }, { clock, faultInjection: true });
  const agent = new Agent();
  cleanups.push(() => agent.destroy());
  const dispatcher =
    form === 'compose'
      ? agent.compose(withCircuitBreaker({ breaker }))
      : withCircuitBreaker(agent, { breaker });
  return { breaker, clock, dispatcher };
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe.each(FORMS)('withCircuitBreaker() with an injected fault (%s form)', (each) => {
  beforeEach(() => {
    form = each;
  });

  it('fails fetch and request() with the injected error, counts the failure, and sends nothing', async () => {
    const upstream = await server();
    const { breaker, dispatcher } = setup();
    const fault = breaker.injectFault({ fail: true });

    const viaFetch = await fetch(`${upstream.origin}/ok`, { dispatcher } as RequestInit).catch(
      (error: TypeError) => error.cause,
    );
    const viaRequest = await request(`${upstream.origin}/ok`, { dispatcher }).catch(
      (e: unknown) => e,
    );

    expect([
      viaFetch instanceof InjectedFaultError,
      viaRequest instanceof InjectedFaultError,
    ]).toEqual([true, true]);
    expect([upstream.total(), fault.injected, breaker.snapshot().totals.failures.total]).toEqual([
      0, 2, 2,
    ]);
  });

  it("sends the request after the fault's latency, on the breaker's clock", async () => {
    const upstream = await server();
    const { breaker, clock, dispatcher } = setup();
    breaker.injectFault({ latencyMs: 500 });

    const answer = request(`${upstream.origin}/ok`, { dispatcher });
    await tick();
    clock.advance(499);
    await tick();
    expect(upstream.total()).toBe(0);
    clock.advance(1);
    const response = await answer;
    expect([response.statusCode, await response.body.text(), upstream.total()]).toEqual([
      200,
      'ok',
      1,
    ]);
    expect(breaker.snapshot().totals.successes).toBe(1);
  });

  it('sends nothing when the deadline passes in the same clock step as the latency ends', async () => {
    const upstream = await server();
    const { breaker, clock, dispatcher } = setup();
    breaker.injectFault({ latencyMs: 1_500 });

    const answer = request(`${upstream.origin}/ok`, { dispatcher }).catch((e: unknown) => e);
    await tick();
    // One synchronous step: the latency ends at 1.5 s, the deadline at 2 s, before either one's callbacks run.
    clock.advance(2_000);
    const error = (await answer) as Error;
    await tick();
    await tick();
    expect([error.name, upstream.connections.opened, upstream.total()]).toEqual([
      'CallTimeoutError',
      0,
      0,
    ]);
  });

  it('ends a latency past the deadline with the timeout, and sends nothing', async () => {
    const upstream = await server();
    const { breaker, clock, dispatcher } = setup();
    breaker.injectFault({ latencyMs: 5_000 });

    const answer = request(`${upstream.origin}/ok`, { dispatcher }).catch((e: unknown) => e);
    await tick();
    clock.advance(2_000);
    const error = (await answer) as Error;
    clock.advance(3_000);
    await tick();
    expect([error.name, upstream.total(), breaker.snapshot().totals.timeouts]).toEqual([
      'CallTimeoutError',
      0,
      1,
    ]);
  });

  it("hears the caller's abort during the fault's latency at once, counted as ignored", async () => {
    const upstream = await server();
    const { breaker, clock, dispatcher } = setup();
    breaker.injectFault({ latencyMs: 1_000 });
    const caller = new AbortController();
    let heard: unknown = 'nothing yet';

    void request(`${upstream.origin}/ok`, { dispatcher, signal: caller.signal }).then(
      () => (heard = 'a response'),
      (error: unknown) => (heard = error),
    );
    await tick();
    const reason = new Error('the caller gave up');
    caller.abort(reason);
    await tick();
    await tick();
    // Heard on no clock at all: not after the latency (1 s), nor at the deadline (2 s) as a timeout.
    expect(heard).toBe(reason);
    clock.advance(2_000);
    await tick();
    const { totals } = breaker.snapshot();
    expect([upstream.total(), totals.ignored, totals.timeouts, totals.failures.total]).toEqual([
      0, 1, 0, 0,
    ]);
  });
});
