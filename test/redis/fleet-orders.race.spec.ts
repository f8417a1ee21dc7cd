import { describe, expect, it } from 'vitest';
import { Breaker } from '../../lib/core/index.js';
import { SharedBreaker } from '../../lib/redis/redis-breaker.coordinator.js';
import { FleetOrders } from '../../lib/redis/redis-breaker.fleet-orders.js';
import type { ForceRecord } from '../../lib/redis/redis-breaker.fleet-records.js';
import { ManualClock } from '../helpers/manual-clock.js';

// The replica's side of fleet orders in process, no Redis: the order in which
// this replica hears signals and the answers to its own writes is set by the
// test, to reach the interleavings a real Redis produces only now and then.

const ORDER = { reason: 'maintenance', by: 'ops' };

function replica() {
  const clock = new ManualClock(1_800_000_000_000);
  const breaker = new Breaker('payments', { timeoutMs: false }, { clock });
  const record = new SharedBreaker(breaker, 'cb:');
  const orders = new FleetOrders({
    logger: undefined,
    restore: () => undefined,
    refuse: () => undefined,
  });
  // What the coordinator does on every transition of a shared breaker.
  breaker.on('stateChange', (change) => orders.transitioned(record, change));
  const signal = (generation: number, state: ForceRecord['state'], reason = ''): ForceRecord => ({
    kind: 'force',
    name: 'payments',
    state,
    reason,
    by: undefined,
    until: 0,
    generation,
    origin: 'elsewhere',
    at: generation,
  });
  return { clock, breaker, record, orders, signal };
}

describe('fleet orders given here while older orders are still being heard', () => {
  it('keeps its own force when an older release is heard before Redis answered the force, whenever its own signal comes', () => {
    for (const ownSignalFirst of [true, false]) {
      const { clock, breaker, record, orders, signal } = replica();
      const generation = clock.now();
      // Another replica's release, written before this force: its signal reaches this replica while the force is on its way.
      const mine = orders.forceHere(record, 'open', ORDER);
      orders.begin(record);
      orders.apply(record, signal(generation - 500, 'released'));
      const own = { ...signal(generation, 'open', ORDER.reason), by: ORDER.by };
      if (ownSignalFirst) orders.apply(record, own);
      orders.forceWritten(record, generation, mine);
      if (!ownSignalFirst) orders.apply(record, own);
      expect([ownSignalFirst, breaker.snapshot().forced]).toMatchObject([
        ownSignalFirst,
        { state: 'open', ...ORDER },
      ]);
    }
  });

  it('keeps its own release when an older force is heard before Redis answered the release', () => {
    const { clock, breaker, record, orders, signal } = replica();
    orders.apply(record, signal(clock.now() - 1_000, 'disabled', 'load test'));
    expect(breaker.snapshot().forced?.state).toBe('disabled');
    clock.advance(10);
    const generation = clock.now();
    const mine = orders.releaseHere(record);
    orders.begin(record);
    orders.apply(record, signal(generation - 5, 'open', 'older'));
    orders.forceWritten(record, generation, mine);
    orders.apply(record, signal(generation, 'released'));
    expect([breaker.state, breaker.snapshot().forced]).toEqual(['closed', undefined]);
  });

  it("leaves a force of this replica's own, given after the older order was heard, as it is", () => {
    const { clock, breaker, record, orders, signal } = replica();
    const generation = clock.now();
    const mine = orders.forceHere(record, 'open', ORDER);
    orders.begin(record);
    orders.apply(record, signal(generation - 500, 'released'));
    breaker.force('closed', { reason: 'by hand, here' });
    orders.forceWritten(record, generation, mine);
    // force('closed') is the alias of metrics-only.
    expect(breaker.snapshot().forced).toMatchObject({
      state: 'metrics-only',
      reason: 'by hand, here',
    });
  });

  it('obeys a newer order heard before Redis answered its own, and keeps it', () => {
    const { clock, breaker, record, orders, signal } = replica();
    const generation = clock.now();
    const mine = orders.forceHere(record, 'open', ORDER);
    orders.begin(record);
    orders.apply(record, signal(generation + 5, 'disabled', 'newer'));
    orders.forceWritten(record, generation, mine);
    expect(breaker.snapshot().forced).toMatchObject({ state: 'disabled', reason: 'newer' });
  });
});
