import { afterEach, describe, expect, it, vi } from 'vitest';
import { Breaker, type BreakerOptions } from '../../lib/core/index.js';
import {
  RedisBreakerCoordinator,
  type FleetLink,
  type SharedBreaker,
  type WriteOp,
} from '../../lib/redis/redis-breaker.coordinator.js';
import {
  longestOpenMs,
  permitMarginMs,
  permitTtlMs,
} from '../../lib/redis/redis-breaker.durations.js';
import type { FleetState } from '../../lib/redis/redis-breaker.signal.js';
import { nextMoment } from '../../lib/redis/redis-breaker.moments.js';
import { deferred } from '../helpers/deferred.js';
import { ManualClock } from '../helpers/manual-clock.js';
import {
  GENERATION_MAX_LEAD_MS,
  GENERATION_TRUSTED_LEAD_MS,
  PERMIT_RETRY_MIN_MS,
} from '../../lib/redis/redis-breaker.constants.js';

/** The store's side, recorded: what was written and which permits were asked for. */
class FakeLink implements FleetLink {
  shared = true;
  readonly writes: string[] = [];
  readonly permits: { record: SharedBreaker; ttlMs: number }[] = [];
  readonly renewals: number[] = [];
  isShared(): boolean {
    return this.shared;
  }
  storeErrors(): number {
    return 4;
  }
  write(record: SharedBreaker, op: WriteOp): void {
    this.writes.push(`${record.name} ${JSON.stringify(op)}`);
  }
  requestPermit(record: SharedBreaker, ttlMs: number): void {
    this.permits.push({ record, ttlMs });
  }
  renewPermit(_record: SharedBreaker, ttlMs: number): void {
    this.renewals.push(ttlMs);
  }
  transitioned(): void {}
}

const OPTIONS: BreakerOptions = {
  consecutiveFailures: 1,
  openDurationMs: 1_000,
  halfOpen: { maxWaitMs: 300 },
};
const fail = (b: Breaker) =>
  b.execute(() => Promise.reject(new Error('down'))).catch((e: unknown) => e);
const fleet = (
  state: 'open' | 'closed',
  generation: number,
  openUntil = 0,
  at = 0,
): FleetState => ({ name: 'payments', state, openUntil, generation, origin: 'other', at });

function setup(options: BreakerOptions = OPTIONS) {
  const clock = new ManualClock(10_000);
  const link = new FakeLink();
  const coordinator = new RedisBreakerCoordinator('cb:', link);
  const breaker = new Breaker('payments', options, { clock, coordinator });
  const record = coordinator.register(breaker)!;
  const reasons: string[] = [];
  breaker.on('stateChange', (change) =>
    reasons.push(`${change.from}->${change.to} (${change.reason})`),
  );
  return { clock, link, coordinator, breaker, record, reasons };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('RedisBreakerCoordinator: own transitions become writes, adopted ones never do', () => {
  it('writes a trip as a report, a failed probe as a reopen, a good probe as a close, a reset as a withdrawal', async () => {
    const { clock, link, breaker } = setup();
    await fail(breaker);
    clock.advance(1_000);
    await fail(breaker); // the probe fails
    clock.advance(1_000);
    await breaker.execute(() => 'ok'); // the probe succeeds
    await fail(breaker);
    breaker.reset();
    expect(link.writes).toEqual([
      'payments {"kind":"open","openUntil":11000,"at":10000,"reopen":false}',
      'payments {"kind":"open","openUntil":12000,"at":11000,"reopen":true}',
      'payments {"kind":"close","at":12000}',
      'payments {"kind":"open","openUntil":13000,"at":12000,"reopen":false}',
      'payments {"kind":"withdraw"}',
    ]);
  });

  it('writes nothing for an adopted open or close, isolation or disabling', () => {
    const { coordinator, link, breaker, reasons } = setup();
    coordinator.apply(fleet('open', 1, 15_000));
    coordinator.apply(fleet('closed', 2));
    breaker.isolate();
    breaker.disable();
    expect(reasons).toEqual([
      'closed->open (shared-open)',
      'open->closed (shared-close)',
      'closed->isolated (forced)',
      'isolated->disabled (forced)',
    ]);
    expect(link.writes).toEqual([]);
  });

  it('does not share per-key children: they decide locally, and only the family is described', async () => {
    const clock = new ManualClock(0);
    const link = new FakeLink();
    const coordinator = new RedisBreakerCoordinator('cb:', link);
    const family = new Breaker('hosts', { ...OPTIONS, perKey: {} }, { clock, coordinator });
    const child = family.forKey('a');
    await fail(child);
    expect(child.state).toBe('open');
    expect(link.writes).toEqual([]);
    expect(coordinator.register(child)).toBeUndefined();
    expect(coordinator.mayProbe(child)).toBe(true);
    expect(coordinator.coordinationOf(child)).toBeUndefined();
    expect(coordinator.coordinationOf(family)).toEqual({ shared: true, storeErrors: 4 });
  });
});

describe('RedisBreakerCoordinator: adopting the fleet state', () => {
  it('adopts a newer fleet open until the shared time, extends an open breaker, and ignores older generations', () => {
    const { coordinator, breaker, reasons } = setup();
    coordinator.apply(fleet('open', 5, 14_000));
    expect(breaker.snapshot()).toMatchObject({ state: 'open', openUntil: 14_000 });
    coordinator.apply(fleet('open', 6, 16_000));
    expect(breaker.snapshot().openUntil).toBe(16_000);
    coordinator.apply(fleet('closed', 6));
    coordinator.apply(fleet('closed', 3));
    expect(breaker.state).toBe('open');
    expect(reasons).toEqual(['closed->open (shared-open)']);
  });

  it('ignores a fleet open that is already over', () => {
    const { coordinator, breaker } = setup();
    coordinator.apply(fleet('open', 1, 9_000));
    expect(breaker.state).toBe('closed');
  });

  it('cuts an open-until further away than any open period this breaker could choose (a replica with a wrong clock)', () => {
    const { coordinator, breaker } = setup({ ...OPTIONS, maxRetryAfterMs: 5_000 });
    expect(longestOpenMs(breaker.config)).toBe(5_000);
    coordinator.apply(fleet('open', 1, 10_000 + 3_600_000));
    expect(breaker.snapshot().openUntil).toBe(15_000);
  });

  it('closes on a fleet close verdict, but not a breaker that opened on its own evidence after the verdict was made', async () => {
    const { clock, coordinator, breaker } = setup();
    coordinator.apply(fleet('open', 1, 14_000));
    coordinator.apply(fleet('closed', 2, 0, 10_500));
    expect(breaker.state).toBe('closed');
    clock.advance(1_000);
    await fail(breaker); // opens on its own at 11,000
    coordinator.apply(fleet('closed', 3, 0, 10_900)); // a verdict made before that: late news
    expect(breaker.state).toBe('open');
    coordinator.apply(fleet('closed', 4, 0, 11_000));
    expect(breaker.state).toBe('closed');
  });
});

describe('RedisBreakerCoordinator: junk generations', () => {
  it('ignores a state whose generation is further ahead of its clock than any clock could be', () => {
    const { coordinator, reasons, record } = setup();
    coordinator.apply(fleet('open', 10_000 + GENERATION_MAX_LEAD_MS + 1, 15_000));
    coordinator.apply(fleet('open', 10_000 + GENERATION_MAX_LEAD_MS + 1, 15_000), true);
    expect(reasons).toEqual([]);
    expect(record.generation).toBe(0);
    coordinator.apply(fleet('open', 10_000 + GENERATION_MAX_LEAD_MS, 15_000));
    expect(reasons).toEqual(['closed->open (shared-open)']);
  });

  it('lets the state hash replace a generation far ahead of its clock that Redis does not hold (a forged signal)', () => {
    const { coordinator, reasons, record } = setup();
    coordinator.apply(fleet('closed', 10_000 + 3_600_000));
    // Another signal cannot undo it: only what Redis holds may.
    coordinator.apply(fleet('open', 10_500, 15_000));
    expect(reasons).toEqual([]);
    coordinator.apply(fleet('open', 10_500, 15_000), true);
    expect(reasons).toEqual(['closed->open (shared-open)']);
    expect(record.generation).toBe(10_500);
  });

  it("keeps a generation a little ahead of its clock (another replica's clock skew) against an older state hash", () => {
    const { coordinator, reasons } = setup();
    coordinator.apply(fleet('closed', 10_000 + GENERATION_TRUSTED_LEAD_MS));
    // A read sent before the change and answered after its signal: older, and no reason to distrust the signal.
    coordinator.apply(fleet('open', 10_500, 15_000), true);
    expect(reasons).toEqual([]);
  });
});

describe('RedisBreakerCoordinator: the fleet probe permit', () => {
  it('lets a lone opener and every breaker while Redis is unreachable probe locally', async () => {
    const { clock, link, breaker, coordinator } = setup();
    await fail(breaker);
    clock.advance(1_000);
    // The fleet is not open (below quorum): nobody else is waiting for a verdict.
    expect(coordinator.mayProbe(breaker)).toBe(true);
    coordinator.apply(fleet('open', 1, 11_000));
    link.shared = false;
    expect(coordinator.mayProbe(breaker)).toBe(true);
    expect(link.permits).toEqual([]);
  });

  it('asks once for the permit, stays open while asking, and half-opens when it is won', async () => {
    const { clock, link, breaker, coordinator, record } = setup();
    await fail(breaker);
    coordinator.apply(fleet('open', 1, 11_000));
    clock.advance(1_000);
    const first = await breaker.execute(() => 'probe').catch((e: unknown) => e);
    expect(first).toMatchObject({ reason: 'open', retryAfterMs: 300 });
    await breaker.execute(() => 'probe').catch(() => undefined);
    expect(link.permits).toEqual([{ record, ttlMs: 300 }]);
    coordinator.onPermit(record, true, 300);
    await expect(breaker.execute(() => 'probe')).resolves.toBe('probe');
    expect(breaker.state).toBe('closed');
  });

  it('keeps rejecting while another replica holds the permit, and asks again when it lapses', async () => {
    const { clock, link, breaker, coordinator, record } = setup();
    await fail(breaker);
    coordinator.apply(fleet('open', 1, 11_000));
    clock.advance(1_000);
    expect(coordinator.mayProbe(breaker)).toBe(false);
    coordinator.onPermit(record, false, 250);
    clock.advance(249);
    expect(coordinator.mayProbe(breaker)).toBe(false);
    expect(link.permits).toHaveLength(1);
    clock.advance(1);
    expect(coordinator.mayProbe(breaker)).toBe(false);
    expect(link.permits).toHaveLength(2);
  });

  it('drops a permit answer that arrives after the fleet moved on, and asks again after a failed request', async () => {
    const { clock, link, breaker, coordinator, record } = setup();
    await fail(breaker);
    coordinator.apply(fleet('open', 1, 11_000));
    clock.advance(1_000);
    expect(coordinator.mayProbe(breaker)).toBe(false);
    coordinator.onPermit(record, undefined, 0); // the request failed
    expect(coordinator.mayProbe(breaker)).toBe(false);
    expect(link.permits).toHaveLength(2);
    coordinator.apply(fleet('closed', 2, 0, 11_000));
    coordinator.onPermit(record, true, 300);
    expect(breaker.state).toBe('closed');
    expect(record.permit).toBe(0);
  });

  it('claims the permit for a second at most, and holds it for the whole probe deadline once the probe starts', async () => {
    const { clock, link, breaker, coordinator, record } = setup({
      ...OPTIONS,
      halfOpen: { maxWaitMs: 60_000 },
    });
    await fail(breaker);
    coordinator.apply(fleet('open', 1, 11_000));
    clock.advance(1_000);
    expect(coordinator.mayProbe(breaker)).toBe(false);
    // A replica that wins without traffic for the breaker must not block the fleet's probe for a minute.
    expect(link.permits.map((p) => p.ttlMs)).toEqual([1_000]);
    coordinator.onPermit(record, true, 1_000);
    expect(link.renewals).toEqual([]);
    await breaker.execute(() => 'probe');
    expect(link.renewals).toEqual([60_000]);
  });

  it('counts a won permit from when it was asked for, less a margin, not from when the answer arrived', async () => {
    const { clock, link, breaker, coordinator, record } = setup({
      ...OPTIONS,
      halfOpen: { maxWaitMs: 60_000 },
    });
    await fail(breaker);
    coordinator.apply(fleet('open', 1, 11_000));
    clock.advance(1_000);
    expect(coordinator.mayProbe(breaker)).toBe(false); // asked at 11,000 for a claim of 1,000 ms
    // The answer takes 400 ms: Redis started the expiry when it ran the request, so the claim ends by 12,000 whatever the delay.
    clock.advance(400);
    coordinator.onPermit(record, true, 1_000);
    expect(permitMarginMs(1_000)).toBe(250);
    clock.set(11_749);
    expect(coordinator.mayProbe(breaker)).toBe(true);
    expect(link.permits).toHaveLength(1);
    // From here on the renewal sent on half-opening might reach Redis after the claim expired: ask again instead.
    clock.set(11_750);
    expect(coordinator.mayProbe(breaker)).toBe(false);
    expect(link.permits).toHaveLength(2);
    // A short permit keeps three quarters of itself.
    expect(permitMarginMs(300)).toBe(75);
  });

  it("counts a lost permit from when it was asked for too, and asks again when the holder's permit lapses", async () => {
    const { clock, link, breaker, coordinator, record } = setup();
    await fail(breaker);
    coordinator.apply(fleet('open', 1, 11_000));
    clock.advance(1_000);
    expect(coordinator.mayProbe(breaker)).toBe(false);
    clock.advance(100);
    coordinator.onPermit(record, false, 250); // the holder had 250 ms left when Redis ran the request, at 11,000 or later
    clock.set(11_249);
    expect(coordinator.mayProbe(breaker)).toBe(false);
    expect(link.permits).toHaveLength(1);
    clock.set(11_250);
    expect(coordinator.mayProbe(breaker)).toBe(false);
    expect(link.permits).toHaveLength(2);
  });

  it('stops probing when the renewal finds the permit taken by another replica, and waits for its verdict as a non-holder', async () => {
    const { clock, link, breaker, coordinator, record, reasons } = setup({
      ...OPTIONS,
      halfOpen: { maxWaitMs: 5_000, maxProbes: 2 },
    });
    await fail(breaker);
    coordinator.apply(fleet('open', 1, 11_000));
    clock.advance(1_000);
    expect(coordinator.mayProbe(breaker)).toBe(false);
    coordinator.onPermit(record, true, 1_000);
    const probe = breaker
      .execute(() => new Promise<string>(() => undefined))
      .catch((e: unknown) => e);
    expect(breaker.state).toBe('half-open');
    expect(link.renewals).toEqual([10_000]);
    // Not renewed: the claim had lapsed, and another replica holds the permit for 700 ms more.
    coordinator.onRenewed(record, record.episode, false, 700);
    expect(breaker.snapshot()).toMatchObject({ state: 'open', openUntil: 11_700 });
    expect(reasons.at(-1)).toBe('half-open->open (shared-open)');
    // No second probe here, and no verdict of this replica's: the other replica's is awaited.
    expect(await breaker.execute(() => 'second probe').catch((e: unknown) => e)).toMatchObject({
      reason: 'open',
    });
    expect(link.writes).toHaveLength(1);
    void probe;
    // When the other permit lapses without a verdict, this replica asks again.
    clock.set(11_700);
    expect(coordinator.mayProbe(breaker)).toBe(false);
    expect(link.permits).toHaveLength(2);
  });

  it('ignores a renewal answer that is stale: renewed, of an earlier request, or after the probe ended', async () => {
    const { clock, breaker, coordinator, record } = setup();
    await fail(breaker);
    coordinator.apply(fleet('open', 1, 11_000));
    clock.advance(1_000);
    coordinator.mayProbe(breaker);
    coordinator.onPermit(record, true, 300);
    const gate = deferred<string>();
    const probe = breaker.execute(() => gate.promise);
    coordinator.onRenewed(record, record.episode, true, 300);
    coordinator.onRenewed(record, record.episode - 1, false, 300);
    expect(breaker.state).toBe('half-open');
    gate.resolve('ok');
    await probe;
    coordinator.onRenewed(record, record.episode, false, 300);
    expect(breaker.state).toBe('closed');
  });

  it('lasts the whole half-open period: every probe of the budget in turn, each within its deadline', () => {
    expect(
      permitTtlMs(
        new Breaker('a', { halfOpen: { maxProbes: 3, maxConcurrent: 2, maxWaitMs: 100 } }).config,
      ),
    ).toBe(200);
    expect(
      permitTtlMs(new Breaker('b', { halfOpen: { maxProbes: 1, maxWaitMs: 2_500 } }).config),
    ).toBe(2_500);
  });

  it("never asks again at once when a lost answer says the holder's permit has no time left (or no expiry: -1)", async () => {
    vi.useFakeTimers({ now: 10_000 });
    const { clock, link, coordinator, record } = setup();
    coordinator.apply(fleet('open', 1, 11_000));
    clock.advance(1_000);
    vi.advanceTimersByTime(1_000);
    expect(link.permits).toHaveLength(1);
    coordinator.onPermit(record, false, -1);
    // A zero back-off made the wake timer fire and ask again in the same millisecond, forever.
    vi.advanceTimersByTime(0);
    expect(link.permits).toHaveLength(1);
    clock.advance(PERMIT_RETRY_MIN_MS - 1);
    vi.advanceTimersByTime(PERMIT_RETRY_MIN_MS - 1);
    expect(coordinator.mayProbe(record.breaker)).toBe(false);
    expect(link.permits).toHaveLength(1);
    clock.advance(1);
    vi.advanceTimersByTime(1);
    expect(link.permits).toHaveLength(2);
    coordinator.onPermit(record, false, 0);
    vi.advanceTimersByTime(0);
    expect(link.permits).toHaveLength(2);
    coordinator.close();
  });

  it("waits on another replica's permit at most halfOpen.maxWaitMs, however long Redis says it has left, then asks again", () => {
    vi.useFakeTimers({ now: 10_000 });
    const { clock, link, coordinator, record } = setup();
    coordinator.apply(fleet('open', 1, 11_000));
    clock.advance(1_000);
    vi.advanceTimersByTime(1_000);
    expect(link.permits).toHaveLength(1);
    // A permit set by hand with an hour (or 2^32 ms) to run: waited on for maxWaitMs (300), not for its whole TTL.
    coordinator.onPermit(record, false, 3_600_000);
    clock.advance(299);
    vi.advanceTimersByTime(299);
    expect(coordinator.mayProbe(record.breaker)).toBe(false);
    expect(link.permits).toHaveLength(1);
    clock.advance(1);
    vi.advanceTimersByTime(1);
    expect(link.permits).toHaveLength(2);
    coordinator.onPermit(record, false, 2 ** 32);
    clock.advance(300);
    vi.advanceTimersByTime(300);
    expect(link.permits).toHaveLength(3);
    coordinator.close();
  });

  it('a renewal lost to a permit with an hour left reopens the breaker for halfOpen.maxWaitMs, not the hour', async () => {
    const { clock, breaker, coordinator, record } = setup({
      ...OPTIONS,
      halfOpen: { maxWaitMs: 5_000, maxProbes: 2 },
    });
    await fail(breaker);
    coordinator.apply(fleet('open', 1, 11_000));
    clock.advance(1_000);
    expect(coordinator.mayProbe(breaker)).toBe(false);
    coordinator.onPermit(record, true, 1_000);
    void breaker.execute(() => new Promise<string>(() => undefined)).catch(() => undefined);
    expect(breaker.state).toBe('half-open');
    coordinator.onRenewed(record, record.episode, false, 3_600_000);
    expect(breaker.snapshot()).toMatchObject({ state: 'open', openUntil: 16_000 });
  });

  it('asks for the permit when the open period ends, before any call, with one timer for the store', async () => {
    vi.useFakeTimers({ now: 10_000 });
    const { clock, link, coordinator, record } = setup();
    coordinator.apply(fleet('open', 1, 11_000));
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(999);
    expect(link.permits).toHaveLength(0);
    clock.advance(1_000);
    vi.advanceTimersByTime(1);
    expect(link.permits).toEqual([{ record, ttlMs: 300 }]);
    coordinator.onPermit(record, false, 200);
    // Lost: the timer comes back when the holder's permit lapses, in case its verdict never arrives.
    clock.advance(200);
    vi.advanceTimersByTime(200);
    expect(link.permits).toHaveLength(2);
    coordinator.close();
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('RedisBreakerCoordinator: a state only heard, and a read that finds no state hash', () => {
  it('undoes an open heard and never read back, and keeps one that a read of its hash backed', () => {
    // Date.now() stands still: reads and signals are ordered by their moment, not their millisecond.
    vi.useFakeTimers({ now: 10_000 });
    const { clock, coordinator, breaker, record, reasons } = setup();
    const now = clock.now();
    const readBefore = nextMoment();
    coordinator.apply(fleet('open', now, now + 5_000, now));
    expect(breaker.state).toBe('open');
    // A read that went out before the signal was heard says nothing about it.
    coordinator.noneHeld(record, readBefore);
    expect(breaker.state).toBe('open');
    coordinator.noneHeld(record, nextMoment());
    expect([breaker.state, record.generation, record.fleetOpen]).toEqual(['closed', 0, false]);
    expect(reasons).toEqual(['closed->open (shared-open)', 'open->closed (shared-close)']);
    // Heard, then read back from its hash: Redis' state, which a hash lost later does not undo.
    coordinator.apply(fleet('open', now + 1, now + 5_000, now));
    coordinator.apply(fleet('open', now + 1, now + 5_000, now), true);
    coordinator.noneHeld(record, nextMoment());
    expect([breaker.state, record.generation, record.fleetOpen]).toEqual(['open', now + 1, true]);
    coordinator.close();
  });
});

describe('RedisBreakerCoordinator: replay after an outage', () => {
  it("replays each breaker's latest own transition while it still holds", async () => {
    const { clock, breaker, coordinator, record } = setup();
    expect(coordinator.replay()).toEqual([]);
    await fail(breaker);
    expect(coordinator.replay()).toEqual([
      [record, { kind: 'open', openUntil: 11_000, at: 10_000, reopen: false }],
    ]);
    clock.advance(1_000);
    // The report's open period is over: it would count for nothing.
    expect(coordinator.replay()).toEqual([]);
    await breaker.execute(() => 'ok');
    expect(coordinator.replay()).toEqual([[record, { kind: 'close', at: 11_000 }]]);
  });
});
