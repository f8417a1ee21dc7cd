import { Redis } from 'ioredis';
import type { BreakerOptions } from '../../../lib/core/index.js';
import { RedisServer } from './redis-server.js';
import { ReplicaProcess, type ReplicaConfig } from './replica-process.js';
import { Upstream } from './upstream.js';

/** A redis-server, an upstream and replicas in processes of their own: one scenario's world. */
export interface Fleet {
  server: RedisServer;
  upstream: Upstream;
  /** A connection of the test's own, to look at what the replicas wrote. */
  admin: Redis;
  replicas: ReplicaProcess[];
  keyPrefix: string;
  /** Starts one more replica of the same application (a restart uses the same instance id). */
  startReplica(instanceId: string): Promise<ReplicaProcess>;
  close(): Promise<void>;
}

export async function startFleet(options: {
  ids: string[];
  breakers: Record<string, BreakerOptions>;
  store?: ReplicaConfig['store'];
}): Promise<Fleet> {
  const server = await RedisServer.start();
  const upstream = await Upstream.start();
  const admin = new Redis(server.port, '127.0.0.1', {
    retryStrategy: () => 100,
    maxRetriesPerRequest: 1,
  });
  admin.on('error', () => undefined);
  const keyPrefix = 'shop:';
  const all: ReplicaProcess[] = [];
  const startReplica = async (instanceId: string) => {
    const replica = await ReplicaProcess.start({
      instanceId,
      redisPort: server.port,
      keyPrefix,
      upstreamUrl: upstream.url,
      breakers: options.breakers,
      store: options.store,
    });
    all.push(replica);
    return replica;
  };
  const fleet: Fleet = {
    server,
    upstream,
    admin,
    keyPrefix,
    replicas: [],
    startReplica,
    async close() {
      // Everything is released even when a replica fails to stop; that failure is reported afterwards.
      const stopped = await Promise.allSettled(all.map((replica) => replica.stop()));
      await upstream.close();
      admin.disconnect();
      await server.kill();
      const failure = stopped.find((result) => result.status === 'rejected');
      if (failure !== undefined) throw failure.reason;
    },
  };
  try {
    fleet.replicas = await Promise.all(options.ids.map(startReplica));
  } catch (error) {
    await fleet.close();
    throw error;
  }
  return fleet;
}

/** Median and 99th percentile (nearest rank) of `values`. */
export function percentiles(values: number[]): { median: number; p99: number; max: number } {
  // toSorted() is in Node 20 but not in the ES2022 lib the project compiles against: insert in order instead.
  const sorted: number[] = [];
  for (const value of values) {
    let i = sorted.length;
    while (i > 0 && sorted[i - 1]! > value) i--;
    sorted.splice(i, 0, value);
  }
  const rank = (q: number) =>
    sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
  return { median: rank(0.5), p99: rank(0.99), max: sorted[sorted.length - 1]! };
}
