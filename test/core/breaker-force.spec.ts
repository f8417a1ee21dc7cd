import { describe, expect, it } from 'vitest';
import { Breaker, CallRejectedError, type StateChangeEvent } from '../../lib/core/index.js';
import { ManualClock } from '../helpers/manual-clock.js';

function breakerOn(clock: ManualClock, options: ConstructorParameters<typeof Breaker>[1] = {}) {
  return new Breaker(
    'payments',
    { timeoutMs: false, consecutiveFailures: 1, ...options },
    { clock },
  );
}

const fail = () => Promise.reject(new Error('down'));

describe('Breaker.force() and release()', () => {
  it('forced open rejects every call, and says what, why, by whom and until when', async () => {
    const clock = new ManualClock(1_000_000);
    const breaker = breakerOn(clock);
    const changes: StateChangeEvent[] = [];
    breaker.on('stateChange', (change) => changes.push(change));
    breaker.force('open', { reason: 'payments maintenance', by: 'ops', untilMs: 1_060_000 });
    clock.advance(10_000);
    const rejection = await breaker.execute(() => 'ok').catch((error: unknown) => error);
    expect(rejection).toBeInstanceOf(CallRejectedError);
    expect([
      (rejection as CallRejectedError).reason,
      (rejection as CallRejectedError).retryAfterMs,
    ]).toEqual(['isolated', 50_000]);
    expect(breaker.snapshot().forced).toEqual({
      state: 'open',
      reason: 'payments maintenance',
      by: 'ops',
      since: 1_000_000,
      until: 1_060_000,
    });
    expect(changes).toEqual([
      {
        from: 'closed',
        to: 'isolated',
        reason: 'forced',
        at: 1_000_000,
        forced: { state: 'open', reason: 'payments maintenance', by: 'ops' },
      },
    ]);
  });

  it('ends by itself at untilMs, on the next look, dated when it was due', async () => {
    const clock = new ManualClock(1_000_000);
    const breaker = breakerOn(clock);
    breaker.force('open', { reason: 'deploy', untilMs: 1_005_000 });
    clock.advance(9_000);
    await expect(breaker.execute(() => 'ok')).resolves.toBe('ok');
    const snapshot = breaker.snapshot();
    expect([
      snapshot.state,
      snapshot.forced,
      snapshot.lastTransition?.reason,
      snapshot.lastTransition?.at,
    ]).toEqual(['closed', undefined, 'released', 1_005_000]);
  });

  it("metrics-only lets every call through and counts it, without ever tripping; force('closed') is its alias", async () => {
    for (const given of ['metrics-only', 'closed'] as const) {
      const breaker = breakerOn(new ManualClock());
      breaker.force(given, { reason: 'the upstream is flaky but we must try' });
      for (let i = 0; i < 5; i++) await breaker.execute(fail).catch(() => undefined);
      const snapshot = breaker.snapshot();
      expect([
        snapshot.state,
        snapshot.totals.failures.total,
        snapshot.window.failures,
        snapshot.forced?.state,
      ]).toEqual(['metrics-only', 5, 5, 'metrics-only']);
    }
  });

  it('forced disabled lets every call through and records nothing: no counter, no window, no event', async () => {
    const breaker = breakerOn(new ManualClock(), { timeoutMs: 1 });
    const seen: string[] = [];
    for (const event of ['success', 'failure', 'rejected', 'timeout'] as const)
      breaker.on(event, () => seen.push(event));
    breaker.force('disabled', { reason: 'breaker suspected, bypass it' });
    await expect(breaker.execute(() => 'ok')).resolves.toBe('ok');
    await expect(breaker.execute(fail)).rejects.toThrow('down');
    // No deadline either: the call is the caller's alone.
    await expect(
      breaker.execute(() => new Promise((resolve) => setTimeout(() => resolve('late'), 20))),
    ).resolves.toBe('late');
    const permit = breaker.acquire();
    expect([permit.succeed('x'), permit.outcome, permit.probe]).toEqual([
      'ignored',
      'ignored',
      false,
    ]);
    const snapshot = breaker.snapshot();
    expect([
      snapshot.totals.admitted,
      snapshot.totals.successes,
      snapshot.totals.failures.total,
      snapshot.window.calls,
    ]).toEqual([0, 0, 0, 0]);
    expect(seen).toEqual([]);
  });

  it('release() closes a forced breaker with an empty window; without a force it does nothing', async () => {
    const breaker = breakerOn(new ManualClock());
    const reasons: string[] = [];
    breaker.on('stateChange', (change) => reasons.push(change.reason));
    breaker.release();
    breaker.force('closed', { reason: 'test' });
    await breaker.execute(fail).catch(() => undefined);
    breaker.release();
    expect([
      breaker.state,
      breaker.snapshot().window.failures,
      breaker.snapshot().forced,
      reasons,
    ]).toEqual(['closed', 0, undefined, ['forced', 'released']]);
  });

  it("isolate() and disable() are exact aliases of force('open') and force('disabled'); release() and reset() end either", async () => {
    // Each pair of twins gets the same calls: the alias and the force must be indistinguishable.
    const twins = async (alias: (b: Breaker) => void, forced: (b: Breaker) => void) => {
      const run = async (hold: (b: Breaker) => void) => {
        const clock = new ManualClock();
        const breaker = breakerOn(clock);
        const changes: StateChangeEvent[] = [];
        breaker.on('stateChange', (change) => changes.push(change));
        await breaker.execute(() => 'before');
        hold(breaker);
        const held = breaker.snapshot();
        const outcomes = [];
        for (const fn of [() => 'ok', fail])
          outcomes.push(
            await breaker.execute(fn).then(
              (value) => value,
              (error: Error) => error.message,
            ),
          );
        const after = breaker.snapshot();
        breaker.release();
        return [
          held.state,
          held.forced,
          outcomes,
          after.totals,
          after.window,
          changes,
          breaker.state,
        ];
      };
      const [viaAlias, viaForce] = [await run(alias), await run(forced)];
      expect(viaAlias).toEqual(viaForce);
      return viaAlias;
    };
    const isolated = await twins(
      (b) => b.isolate(),
      (b) => b.force('open', { reason: 'isolate()' }),
    );
    expect([isolated[0], isolated[1], isolated[6]]).toEqual([
      'isolated',
      { state: 'open', reason: 'isolate()', since: 1_000_000 },
      'closed',
    ]);
    const disabled = await twins(
      (b) => b.disable(),
      (b) => b.force('disabled', { reason: 'disable()' }),
    );
    // Disabled counts nothing: the two calls made while it held are in no total.
    expect([disabled[0], disabled[2], (disabled[3] as { admitted: number }).admitted]).toEqual([
      'disabled',
      ['ok', 'down'],
      1,
    ]);
    const breaker = breakerOn(new ManualClock());
    breaker.disable();
    breaker.reset();
    expect([breaker.state, breaker.snapshot().forced]).toEqual(['closed', undefined]);
    breaker.force('metrics-only', { reason: 'c' });
    breaker.isolate();
    expect([breaker.state, breaker.snapshot().forced?.reason]).toEqual(['isolated', 'isolate()']);
  });

  it('a probe admitted before the force cannot move the forced breaker when it settles', async () => {
    const clock = new ManualClock();
    const breaker = breakerOn(clock, { openDurationMs: 1_000 });
    await breaker.execute(fail).catch(() => undefined);
    clock.advance(1_000);
    const probe = breaker.acquire();
    expect(probe.probe).toBe(true);
    breaker.force('open', { reason: 'incident' });
    probe.succeed('ok');
    expect(breaker.state).toBe('isolated');
  });

  it('refuses what it cannot hold, saying what to pass', () => {
    const clock = new ManualClock(1_000);
    const breaker = breakerOn(clock);
    expect(() => breaker.force('half-open' as never, { reason: 'x' })).toThrow(
      new TypeError(
        `Circuit breaker "payments": force() takes 'open', 'metrics-only' or 'disabled' (or 'closed', an alias of 'metrics-only'), got "half-open". Pass one of them, e.g. force('open', { reason: 'maintenance' }).`,
      ),
    );
    expect(() => breaker.force('open', undefined as never)).toThrow(
      `Circuit breaker "payments": force() needs options with a reason, got undefined. Pass e.g. force('open', { reason: 'payments maintenance', by: 'ops' }).`,
    );
    expect(() => breaker.force('open', { reason: ' ' })).toThrow(
      `option "reason" must be a non-empty string, got " ". Say why`,
    );
    expect(() => breaker.force('open', { reason: 'x', by: 7 as never })).toThrow(
      `option "by" must be a string, got 7.`,
    );
    expect(() => breaker.force('open', { reason: 'x', untilMs: 1_000 })).toThrow(
      `Circuit breaker "payments": force() option "untilMs" must be a time of the breaker's clock after now (1000), got 1000. Pass e.g. Date.now() + 15 * 60_000, or leave it out to force until release().`,
    );
    expect(breaker.state).toBe('closed');
  });

  it('a per-key family forces its gate and every child it holds, and releases them alike', async () => {
    const family = new Breaker(
      'hosts',
      { timeoutMs: false, perKey: { maxKeys: 10 } },
      { clock: new ManualClock() },
    );
    const a = family.forKey('a');
    family.force('open', { reason: 'all hosts in maintenance' });
    await expect(a.execute(() => 'ok')).rejects.toBeInstanceOf(CallRejectedError);
    await expect(family.forKey('b').execute(() => 'ok')).rejects.toMatchObject({
      reason: 'isolated',
      breakerName: 'hosts',
    });
    expect([a.state, a.snapshot().forced?.reason]).toEqual([
      'isolated',
      'all hosts in maintenance',
    ]);
    family.release();
    await expect(a.execute(() => 'ok')).resolves.toBe('ok');
    expect([family.state, a.state]).toEqual(['closed', 'closed']);
  });

  it('forced disabled still ends the wait when the caller aborts, and its permits can be cancelled', async () => {
    const breaker = breakerOn(new ManualClock());
    breaker.force('disabled', { reason: 'bypass' });
    const controller = new AbortController();
    const hung = breaker.execute(() => new Promise<string>(() => undefined), {
      signal: controller.signal,
    });
    controller.abort(new Error('caller gave up'));
    await expect(hung).rejects.toThrow('caller gave up');
    const permit = breaker.acquire() as unknown as { cancel(): void; outcome: unknown };
    permit.cancel();
    expect([permit.outcome, breaker.snapshot().totals.admitted]).toEqual(['ignored', 0]);
  });

  it('forcing a family with an aggregate rule does not first open it by ratio', () => {
    const family = new Breaker('hosts', {
      timeoutMs: false,
      perKey: { maxKeys: 10 },
      aggregate: { openWhenOpenRatio: 0.5, minKeys: 1 },
    });
    family.forKey('a');
    const reasons: string[] = [];
    family.on('stateChange', (change) =>
      reasons.push(`${change.from}->${change.to}:${change.reason}`),
    );
    family.force('open', { reason: 'maintenance' });
    expect(reasons).toEqual(['closed->isolated:forced']);
  });

  it('children a family creates while it is forced metrics-only or disabled, or creates again after eviction, are forced alike', async () => {
    const family = new Breaker(
      'hosts',
      { timeoutMs: false, consecutiveFailures: 1, perKey: { maxKeys: 1 } },
      { clock: new ManualClock() },
    );
    family.forKey('a');
    family.force('closed', { reason: 'keep flowing' });
    const b = family.forKey('b');
    await b.execute(fail).catch(() => undefined);
    expect([b.state, b.snapshot().forced?.reason]).toEqual(['metrics-only', 'keep flowing']);
    const a = family.forKey('a');
    expect([a === family.forKey('a'), a.snapshot().forced?.state]).toEqual([true, 'metrics-only']);
    family.release();
    expect([a.state, a.snapshot().forced]).toEqual(['closed', undefined]);
  });

  it('dates the end of a force exactly at the untilMs it was given, though wall time is read in whole milliseconds', () => {
    // A real clock's wall reading is truncated to the millisecond while the monotonic one is not, so the
    // offset between them moves by up to 1 ms from one reading to the next: here 995 when forced, 995.7 at the end.
    let monotonic = 5;
    const clock = { now: () => Math.floor(monotonic + 995.9), monotonic: () => monotonic };
    const breaker = new Breaker('payments', { timeoutMs: false }, { clock });
    const changes: StateChangeEvent[] = [];
    breaker.on('stateChange', (change) => changes.push(change));
    breaker.force('disabled', { reason: 'game day', untilMs: 2_000 });
    expect(breaker.snapshot().forced?.until).toBe(2_000);

    monotonic = 1_006.3;
    expect(breaker.state).toBe('closed');
    expect(changes.at(-1)).toMatchObject({ reason: 'released', at: 2_000 });
  });
});
