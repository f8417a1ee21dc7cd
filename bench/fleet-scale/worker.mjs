// One Node process of the fleet-scale bench: several replicas (a
// RedisBreakerStore each, with its own two connections and instance id), each
// with the same M shared breakers. Driven over IPC by bench/fleet-scale.mjs.

import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { Breaker } from '../../dist/core/index.js';
import { RedisBreakerStore } from '../../dist/redis/index.js';

/** Wall-clock milliseconds with sub-millisecond resolution, comparable across the processes of one machine. */
const now = () => performance.timeOrigin + performance.now();
const down = () => Promise.reject(new Error('down'));

/** @type {{ id: string, store: RedisBreakerStore, redis: Redis, breakers: Map<string, Breaker> }[]} */
let replicas = [];
/** name -> adoption times (shared-open) on this process's replicas. */
const adopted = new Map();

const commands = {
  async start({ ids, m, port, prefix, intervalMs, openDurationMs }) {
    replicas = ids.map((id) => {
      const redis = new Redis(port, '127.0.0.1', { retryStrategy: () => 50 });
      redis.on('error', () => undefined);
      const store = new RedisBreakerStore({
        redis,
        keyPrefix: prefix,
        instanceId: id,
        reconcileIntervalMs: intervalMs,
        operationTimeoutMs: 5_000,
        hydrateTimeoutMs: 30_000,
        logger: false,
      });
      const breakers = new Map();
      for (let i = 0; i < m; i++) {
        const name = `b${i}`;
        const breaker = new Breaker(
          name,
          {
            consecutiveFailures: 1,
            openDurationMs,
            halfOpen: { maxWaitMs: 1_000 },
            timeoutMs: false,
            share: { quorum: 2 },
          },
          { coordinator: store.coordinator },
        );
        breaker.on('stateChange', (change) => {
          if (change.reason !== 'shared-open') return;
          const at = now();
          const list = adopted.get(name);
          if (list === undefined) adopted.set(name, [at]);
          else list.push(at);
        });
        breakers.set(name, breaker);
      }
      return { id, store, redis, breakers };
    });
    const started = now();
    await Promise.all(replicas.map((r) => r.store.hydrate([...r.breakers.values()])));
    return { hydrateMs: now() - started };
  },

  /** Fails `names` once on replica `index` of this process: its own transitions, dated. */
  async trip({ index, names }) {
    const replica = replicas[index];
    const at = {};
    for (const name of names) {
      await replica.breakers
        .get(name)
        .execute(down)
        .catch(() => undefined);
      at[name] = now();
    }
    return at;
  },

  /** How many of this process's replicas adopted each of `names`, and the latest time. */
  adoptions({ names }) {
    return Object.fromEntries(
      names.map((name) => {
        const list = adopted.get(name) ?? [];
        return [name, { count: list.length, last: list.length === 0 ? 0 : Math.max(...list) }];
      }),
    );
  },

  /** Every replica here resets `names` (a withdrawal each), and forgets their adoptions. */
  reset({ names }) {
    for (const r of replicas) for (const name of names) r.breakers.get(name).reset();
    for (const name of names) adopted.delete(name);
    return {};
  },

  /** Every replica here calls `name` with a failing dependency every `everyMs`, for `forMs`. */
  async outage({ name, everyMs, forMs }) {
    const until = now() + forMs;
    let calls = 0;
    await Promise.all(
      replicas.map(async (r) => {
        const breaker = r.breakers.get(name);
        while (now() < until) {
          calls++;
          await breaker.execute(down).catch(() => undefined);
          await new Promise((resolve) => setTimeout(resolve, everyMs));
        }
      }),
    );
    return { calls };
  },

  /** What every reconcile cost before the change log: a read of every breaker. */
  async fullReconcile() {
    await Promise.all(replicas.map((r) => r.store.reconcile()));
    return {};
  },

  async stop() {
    for (const r of replicas) {
      await r.store.close();
      r.redis.disconnect();
    }
    replicas = [];
    setImmediate(() => process.exit(0));
    return {};
  },
};

process.on('message', async ({ id, command, args }) => {
  try {
    process.send({ id, result: await commands[command](args) });
  } catch (error) {
    process.send({ id, error: error instanceof Error ? error.stack : String(error) });
  }
});
process.send({ ready: true });
