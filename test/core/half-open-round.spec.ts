import { describe, expect, it } from 'vitest';
import { HalfOpenRound } from '../../lib/core/recovery/half-open-round.js';

const budget = { maxProbes: 3, maxConcurrentProbes: 2, successesToClose: 2, probeMaxWaitMs: 1_000 };

describe('HalfOpenRound (the probe budget of one half-open period)', () => {
  it('admits up to maxConcurrent at once and maxProbes in all', () => {
    const round = new HalfOpenRound(budget);
    const a = round.admit(0);
    round.admit(10);
    expect([round.full, round.inFlight, round.admitted]).toEqual([true, 2, 2]);
    expect(round.remove(a)).toBe(true);
    expect(round.full).toBe(false);
    round.admit(20);
    expect([round.full, round.inFlight, round.admitted]).toEqual([true, 2, 3]);
  });

  it('removes a probe once: a second settlement of the same id finds nothing', () => {
    const round = new HalfOpenRound(budget);
    const id = round.admit(0);
    expect([round.remove(id), round.remove(id), round.inFlight]).toEqual([true, false, 0]);
  });

  it('hints at the oldest probe’s deadline to a caller it turns away', () => {
    const round = new HalfOpenRound(budget);
    expect(round.retryAfter(0)).toBe(0);
    round.admit(100);
    round.admit(400);
    expect(round.retryAfter(600)).toBe(500);
    expect(round.retryAfter(5_000)).toBe(0);
  });

  it('expires the oldest probe only once it has waited probeMaxWaitMs, oldest first', () => {
    const round = new HalfOpenRound(budget);
    const first = round.admit(0);
    const second = round.admit(500);
    expect(round.takeExpired(999)).toBeUndefined();
    expect(round.takeExpired(1_000)?.id).toBe(first);
    expect(round.takeExpired(1_000)).toBeUndefined();
    expect(round.takeExpired(1_500)?.id).toBe(second);
    expect(round.inFlight).toBe(0);
  });

  it('says when closing has become impossible (maxProbes 3, successesToClose 2: the second failure)', () => {
    const round = new HalfOpenRound(budget);
    expect(round.fail()).toBe(false);
    expect(round.fail()).toBe(true);
  });

  it('says when enough probes succeeded to close', () => {
    const round = new HalfOpenRound(budget);
    expect([round.succeed(), round.succeed()]).toEqual([false, true]);
    expect(round.snapshot()).toEqual({
      probesAdmitted: 0,
      probesInFlight: 0,
      probesSucceeded: 2,
      probesFailed: 0,
    });
  });

  it('tells the attached call when its probe is taken as expired', () => {
    const round = new HalfOpenRound(budget);
    const id = round.admit(0);
    const call = { abandon: () => undefined };
    round.attach(id, call);
    expect(round.takeExpired(1_000)?.call).toBe(call);
  });
});
