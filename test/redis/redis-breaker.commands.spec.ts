import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { Breaker } from '../../lib/core/index.js';
import { changeKeys, MARK_SCRIPT } from '../../lib/redis/redis-breaker.changes.js';
import {
  evalEach,
  markCall,
  outcome,
  permitCall,
  renewCall,
  writeCall,
} from '../../lib/redis/redis-breaker.commands.js';
import { KEY_TTL_MS } from '../../lib/redis/redis-breaker.constants.js';
import { SharedBreaker } from '../../lib/redis/redis-breaker.coordinator.js';
import { permitTtlMs } from '../../lib/redis/redis-breaker.durations.js';
import { REDIS_BREAKER_SCRIPTS as SCRIPTS } from '../../lib/redis/redis-breaker.scripts.js';

// The wire contract of the scripts: which KEYS and ARGV each call carries, in
// the order the Lua reads them, and how a batch goes out. No Redis needed.

const writer = {
  instanceId: 'pod-a',
  channel: 'cb:signals',
  prefix: 'cb:',
  sharded: false,
  changes: changeKeys('cb:'),
  marksInScript: true,
};
const record = new SharedBreaker(new Breaker('pay ments', { share: { quorum: 3 } }), 'cb:');
const KEYS = ['cb:{pay%20ments}:state', 'cb:{pay%20ments}:opens', 'cb:{pay%20ments}:probe'];
const CHANGES = ['cb:{~changes}:version', 'cb:{~changes}:log'];
const REPLICAS = 'cb:{~replicas}:seen';

describe('script calls', () => {
  it('encodes an open report, a reopen verdict, a close verdict and a withdrawal', () => {
    expect(
      writeCall(writer, record, { kind: 'open', openUntil: 5_000, at: 4_000, reopen: false }),
    ).toEqual([
      SCRIPTS.open,
      [...KEYS, ...CHANGES, REPLICAS],
      ['pod-a', 5_000, 4_000, 3, '0', 'cb:signals', 'pay ments', KEY_TTL_MS, '0'],
    ]);
    expect(
      writeCall(writer, record, { kind: 'open', openUntil: 5_000, at: 4_000, reopen: true })[2][4],
    ).toBe('1');
    expect(writeCall(writer, record, { kind: 'close', at: 6_000 })).toEqual([
      SCRIPTS.close,
      [...KEYS, ...CHANGES],
      ['pod-a', 6_000, 'cb:signals', 'pay ments', KEY_TTL_MS],
    ]);
    expect(writeCall(writer, record, { kind: 'withdraw' })).toEqual([
      SCRIPTS.withdraw,
      KEYS.slice(1),
      ['pod-a'],
    ]);
  });

  it("publishes with SPUBLISH on a channel in the breaker's slot when sharded, with PUBLISH on the prefix's channel otherwise", () => {
    const sharded = { ...writer, sharded: true };
    const [script, keys, args] = writeCall(sharded, record, { kind: 'close', at: 6_000 });
    expect(args).toEqual(['pod-a', 6_000, 'cb:{pay%20ments}:signals', 'pay ments', KEY_TTL_MS]);
    expect(keys).toEqual([...KEYS, ...CHANGES]);
    expect(script).toBe(SCRIPTS.close.replace("redis.call('PUBLISH'", "redis.call('SPUBLISH'"));
    expect(script).not.toContain("'PUBLISH'");
    expect(SCRIPTS.close).not.toContain('SPUBLISH');
    const open = writeCall(sharded, record, {
      kind: 'open',
      openUntil: 5_000,
      at: 4_000,
      reopen: false,
    });
    expect(open[0]).toContain("redis.call('SPUBLISH', ARGV[6]");
    expect(open[2][5]).toBe('cb:{pay%20ments}:signals');
  });

  it('marks a change in the log from the script on one slot, and apart on a Cluster whose prefix has no hash tag', () => {
    const apart = { ...writer, marksInScript: false };
    expect(writeCall(apart, record, { kind: 'close', at: 6_000 })[1]).toEqual(KEYS);
    expect(markCall(apart, 7_000, ['pay ments', 'search'])).toEqual([
      MARK_SCRIPT,
      CHANGES,
      [7_000, 'pod-a', 'pay ments', 'search'],
    ]);
  });

  it("sends the quorum 'auto' as the replicas last counted make it, and lets the script count them where the registry is in reach", () => {
    const auto = new SharedBreaker(new Breaker('pay ments', {}), 'cb:');
    const open = { kind: 'open', openUntil: 5_000, at: 4_000, reopen: false } as const;
    // [quorum sent, 'auto' flag] for: not counted yet, 1, 2 and 3 replicas listed.
    expect(
      [undefined, 1, 2, 3].map((listed) => {
        const args = writeCall(writer, auto, open, listed)[2];
        return [args[3], args[8]];
      }),
    ).toEqual([
      [2, '1'],
      [1, '1'],
      [1, '1'],
      [2, '1'],
    ]);
    expect(writeCall(writer, auto, open)[1]).toEqual([...KEYS, ...CHANGES, REPLICAS]);
    // A Cluster whose prefix has no hash tag: the registry is in another slot, and the count sent is the one used.
    expect(writeCall({ ...writer, marksInScript: false }, auto, open, 2)[1]).toEqual(KEYS);
  });

  it('encodes a permit request and a renewal on the probe key alone', () => {
    // With the longest permit this replica writes: one with more time left is cut to it.
    expect(permitCall(writer, record, 1_000)).toEqual([
      SCRIPTS.permit,
      [KEYS[2]],
      ['pod-a', 1_000, permitTtlMs(record.breaker.config)],
    ]);
    expect(renewCall(writer, record, 2_500)).toEqual([SCRIPTS.renew, [KEYS[2]], ['pod-a', 2_500]]);
  });
});

describe('evalEach', () => {
  const calls = [
    writeCall(writer, record, { kind: 'withdraw' }),
    permitCall(writer, record, 1_000),
  ];

  it('sends one pipeline to a single node, and answers one error (or undefined) per call', async () => {
    const sent: unknown[][] = [];
    const boom = new Error('WRONGTYPE');
    const redis = {
      isCluster: false,
      pipeline: () => ({
        eval: (...args: unknown[]) => sent.push(args),
        exec: () =>
          Promise.resolve([
            [null, 1],
            [boom, null],
          ]),
      }),
    } as unknown as Redis;
    expect(await evalEach(redis, calls)).toEqual([undefined, boom]);
    expect(sent).toEqual([
      [SCRIPTS.withdraw, 2, KEYS[1], KEYS[2], 'pod-a'],
      [SCRIPTS.permit, 1, KEYS[2], 'pod-a', 1_000, permitTtlMs(record.breaker.config)],
    ]);
  });

  it('sends call by call to a cluster (a pipeline must stay within one slot)', async () => {
    const sent: unknown[][] = [];
    const boom = new Error('CLUSTERDOWN');
    const redis = {
      isCluster: true,
      eval: (...args: unknown[]) => {
        sent.push(args);
        return sent.length === 1 ? Promise.resolve(1) : Promise.reject(boom);
      },
    } as unknown as Redis;
    expect(await evalEach(redis, calls)).toEqual([undefined, boom]);
    expect(sent).toHaveLength(2);
  });

  it('counts a command rejected with nothing as an error', async () => {
    expect(await outcome(Promise.reject(undefined))).toEqual({
      error: new Error('failed without an error'),
    });
    expect(await outcome(Promise.resolve(7))).toEqual({ value: 7 });
  });
});
