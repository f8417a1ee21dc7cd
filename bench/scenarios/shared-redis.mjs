// Shared state on Redis (issue 6): what sharing costs a call, and how fast the
// fleet hears about an outage.
//
// 1. The closed path of a breaker that shares its state through
//    RedisBreakerStore, side by side with an in-memory one: admission reads only
//    local state, so the ratio should be ~1 (target: at most 1.2x).
// 2. The rejection of a replica that waits for another replica's fleet probe
//    (open past its period, permit held elsewhere), beside an in-memory open
//    rejection: still local, one map lookup more.
// 3. Adoption latency on loopback: three stores (own connections, own instance
//    ids) stand for three replicas; replicas a and b open a breaker, c adopts.
//    Measured from b's own transition (the one that makes the quorum) to c's
//    adoption, over many outages (one breaker each), as median and p99.
//
// Needs a `redis-server` binary on PATH (it starts its own on a free loopback
// port and stops it); without one it returns { skipped } and measures nothing.
//
// Standalone: npm run build && node --expose-gc bench/scenarios/shared-redis.mjs [--quick]

import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { Breaker } from '../../dist/core/index.js';
import { RedisBreakerStore } from '../../dist/redis/index.js';
import { compileBatch, quantile, runInterleaved } from '../harness.mjs';

export const SHARED_REDIS_TARGET = 1.2;

export async function sharedRedis({
  batchSize = 20_000,
  rounds = 100,
  warmupRounds = 3,
  seed = 44,
  transitions = 200,
} = {}) {
  const probe = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  if (probe.error !== undefined || probe.status !== 0) {
    return {
      title: 'Shared state on Redis',
      skipped: 'no redis-server on PATH (apt-get install -y redis-server)',
    };
  }
  const server = await startRedis();
  const admin = new Redis(server.port, '127.0.0.1');
  const opened = [];
  const store = (instanceId) => {
    const redis = new Redis(server.port, '127.0.0.1');
    const s = new RedisBreakerStore({ redis, instanceId, keyPrefix: 'bench:', logger: false });
    opened.push({ redis, store: s });
    return s;
  };
  try {
    const paths = await measurePaths(store('hot'), admin, {
      batchSize,
      rounds,
      warmupRounds,
      seed,
    });
    const adoption = await measureAdoption(
      [store('a'), store('b'), store('c')],
      admin,
      transitions,
    );
    const ratio = paths.rows.find((r) => r.id === 'shared').ratioToMemory.median;
    return {
      title: 'Shared state on Redis',
      description:
        'await b.execute(() => Promise.resolve(1)) with a RedisBreakerStore coordinator, beside an in-memory breaker; adoption latency on loopback',
      ...paths,
      adoption,
      target: {
        label: `closed path with a shared breaker at most ${SHARED_REDIS_TARGET}x the in-memory one`,
        limit: SHARED_REDIS_TARGET,
        value: ratio,
        status: ratio <= SHARED_REDIS_TARGET ? 'pass' : 'fail',
      },
      redis: probe.stdout.trim(),
    };
  } finally {
    for (const { redis, store: s } of opened) {
      await s.close();
      redis.disconnect();
    }
    admin.disconnect();
    await server.stop();
  }
}

async function measurePaths(store, admin, { batchSize, rounds, warmupRounds, seed }) {
  const ok = () => Promise.resolve(1);
  const reject = () => Promise.reject(new Error('never called: the breaker is open'));
  const memory = new Breaker('bench-memory');
  const shared = new Breaker('bench-shared', {}, { coordinator: store.coordinator });
  // Open for an hour: the in-memory rejection path.
  const memoryOpen = new Breaker('bench-memory-open', {
    consecutiveFailures: 1,
    openDurationMs: 3_600_000,
  });
  await memoryOpen.execute(reject).catch(() => undefined);
  // Open past its period in an open fleet whose probe permit "elsewhere" holds: every call is rejected after asking the coordinator.
  // quorum 1: its own report opens the fleet.
  const sharedWaiting = new Breaker(
    'bench-shared-waiting',
    {
      consecutiveFailures: 1,
      openDurationMs: 1,
      halfOpen: { maxWaitMs: 3_600_000 },
      share: { quorum: 1 },
    },
    { coordinator: store.coordinator },
  );
  await store.hydrate([shared, sharedWaiting]);
  await admin.set('bench:{bench-shared-waiting}:probe', 'elsewhere', 'PX', 3_600_000);
  await sharedWaiting.execute(reject).catch(() => undefined);
  // The coordinator's record of the breaker (internal, read here only to know the setup is complete): permit 3 = lost.
  const record = store.coordinator.records.get(sharedWaiting);
  // Only an admission asks for the fleet's probe permit (reading the state does not): keep calling until it is lost.
  await waitFor(async () => {
    await sharedWaiting.execute(reject).catch(() => undefined);
    return record.fleetOpen && sharedWaiting.state === 'open' && record.permit === 3;
  });

  const entries = [
    { id: 'memory', label: 'in-memory (closed)', kind: 'value', target: memory, dep: ok },
    { id: 'shared', label: 'shared on Redis (closed)', kind: 'value', target: shared, dep: ok },
    {
      id: 'memoryOpen',
      label: 'in-memory (open)',
      kind: 'reject',
      target: memoryOpen,
      dep: reject,
    },
    {
      id: 'sharedWaiting',
      label: 'shared, waiting for the fleet probe (open)',
      kind: 'reject',
      target: sharedWaiting,
      dep: reject,
    },
  ].map((e) => ({ ...e, ...compileBatch(e.kind, 'target.execute(dep)', e.target, e.dep) }));
  const result = await runInterleaved(entries, { batchSize, rounds, warmupRounds, seed });
  const problems = [];
  if (shared.state !== 'closed') problems.push('the shared breaker is not closed after the run');
  if (sharedWaiting.state !== 'open' || record.permit !== 3)
    problems.push('the waiting shared breaker did not keep waiting for the fleet probe');
  if (shared.snapshot().coordination?.shared !== true)
    problems.push('the shared breaker was not sharing during the run');
  return {
    batchSize,
    rounds,
    rows: entries.map((e) => ({
      id: e.id,
      label: e.label,
      nsPerCall: result.nsPerCall[e.id],
      ...(e.id === 'shared' ? { ratioToMemory: result.ratio('shared', 'memory') } : {}),
      ...(e.id === 'sharedWaiting'
        ? { ratioToMemory: result.ratio('sharedWaiting', 'memoryOpen') }
        : {}),
    })),
    problems,
  };
}

async function measureAdoption(stores, admin, transitions) {
  const [a, b, c] = stores;
  const latencies = [];
  for (let i = 0; i < transitions; i++) {
    // One breaker per outage: nothing left over from the one before.
    const name = `adopt-${i}`;
    const [ba, bb, bc] = stores.map(
      (s) =>
        new Breaker(
          name,
          { consecutiveFailures: 1, openDurationMs: 60_000 },
          { coordinator: s.coordinator },
        ),
    );
    await Promise.all([a.hydrate([ba]), b.hydrate([bb]), c.hydrate([bc])]);
    await ba.execute(() => Promise.reject(new Error('down'))).catch(() => undefined);
    // a's report must be in Redis before b opens, so that b's is the one that makes the quorum.
    await waitFor(async () => (await admin.zcard(`bench:{${name}}:opens`)) === 1);
    let quorumAt = 0;
    bb.on('stateChange', () => (quorumAt = performance.now()));
    const adopted = new Promise((resolve) =>
      bc.on(
        'stateChange',
        (change) => change.reason === 'shared-open' && resolve(performance.now()),
      ),
    );
    await bb.execute(() => Promise.reject(new Error('down'))).catch(() => undefined);
    latencies.push((await adopted) - quorumAt);
  }
  return {
    n: latencies.length,
    medianMs: quantile(latencies, 0.5),
    p99Ms: quantile(latencies, 0.99),
    maxMs: Math.max(...latencies),
  };
}

async function waitFor(condition, timeoutMs = 5_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('shared-redis bench: timed out waiting for Redis');
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

export async function startRedis() {
  const port = await new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject).listen(0, '127.0.0.1', () => {
      const { port: p } = s.address();
      s.close(() => resolve(p));
    });
  });
  const child = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      tmpdir(),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      if (out.includes('Ready to accept connections')) resolve();
    });
    child.once('exit', (code) =>
      reject(new Error(`redis-server exited (${code}) before it was ready:\n${out}`)),
    );
  });
  child.stdout.resume();
  return {
    port,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', resolve);
        child.kill('SIGKILL');
      }),
  };
}

// Standalone run.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const quick = process.argv.includes('--quick');
  const result = await sharedRedis(quick ? { rounds: 20, transitions: 50 } : {});
  console.log(JSON.stringify(result, null, 2));
}
