import { describe, expect, it } from 'vitest';
import type { SharedBreaker } from '../../lib/redis/redis-breaker.coordinator.js';
import { SlotOutages } from '../../lib/redis/redis-breaker.slots.js';

const record = (name: string) => ({ name }) as unknown as SharedBreaker;

function setup(cluster: boolean) {
  const failures: string[] = [];
  const ups: string[] = [];
  const slots = new SlotOutages({
    cluster,
    failed: (error) => failures.push((error as Error).message),
    up: (r) => ups.push(r.name),
    outage: (error) => failures.push(`store: ${(error as Error).message}`),
  });
  return { slots, failures, ups };
}

describe('SlotOutages', () => {
  const [a, b, c] = [record('a'), record('b'), record('c')];
  const keyError = Object.assign(
    new Error('WRONGTYPE Operation against a key holding the wrong kind of value'),
    {
      name: 'ReplyError',
    },
  );
  const down = new Error('CLUSTERDOWN Hash slot not served');

  it('on a Cluster, marks down the breakers whose command failed with anything but a key error, and brings each back on its own success', () => {
    const t = setup(true);
    expect(t.slots.sift([a, b, c], [undefined, down, keyError])).toEqual([
      undefined,
      undefined,
      keyError,
    ]);
    expect([t.slots.names(), t.slots.has(a), t.slots.has(b), t.failures, t.ups]).toEqual([
      ['b'],
      false,
      true,
      [down.message],
      [],
    ]);
    // Another breaker's success brings nothing back; b's own does, once.
    t.slots.sift([a], [undefined]);
    expect([t.slots.size, t.ups]).toEqual([1, []]);
    t.slots.sift([b, b], [undefined, undefined]);
    expect([t.slots.size, t.ups]).toEqual([0, ['b']]);
    t.slots.failed(c, down);
    t.slots.answered(c);
    expect([t.slots.size, t.ups, t.failures]).toEqual([
      0,
      ['b', 'c'],
      [down.message, down.message],
    ]);
  });

  it('on a single server, leaves every error to the store (an outage of all), marking nothing', () => {
    const t = setup(false);
    expect(t.slots.sift([a, b], [down, keyError])).toEqual([down, keyError]);
    expect([t.slots.size, t.failures, t.ups]).toEqual([0, [], []]);
  });

  it("a failed operation on one breaker's keys (a fleet order, a key repair): its slot on a Cluster, the store on a single server", () => {
    const cluster = setup(true);
    cluster.slots.keysFailed(a, down);
    expect([cluster.slots.names(), cluster.failures]).toEqual([['a'], [down.message]]);
    const single = setup(false);
    single.slots.keysFailed(a, down);
    expect([single.slots.size, single.failures]).toEqual([0, [`store: ${down.message}`]]);
  });
});
