// Fleet mode at scale (issue 19): what N replicas x M shared breakers cost one
// Redis, measured by Redis itself (INFO commandstats), and how fast an open
// state reaches the whole fleet.
//
// For every N in {3, 10, 50} and M in {10, 1,000}: N replicas (a
// RedisBreakerStore each, with its own connections and instance id) spread
// over at most 5 Node processes (bench/fleet-scale/worker.mjs), all sharing
// the same M breakers under one prefix, against a redis-server of its own on
// a free loopback port. Per combination:
//
// - steady state: nothing happens for a few reconcile intervals; commands/s,
//   and commands per replica and interval (the change log makes it 1);
// - a full read: what every interval cost before the change log (each
//   replica reading three hashes per breaker), counted the same way;
// - an outage of one dependency: every replica calls one breaker whose
//   dependency fails, every 20 ms, through several open periods;
// - adoption: replica a reports a breaker open, then replica b (another
//   process) makes the quorum; from b's transition to the last of the other
//   N - 2 replicas adopting it (p50, p99, max over 100 samples);
// - memory: every breaker opened fleet-wide, then MEMORY USAGE of every key
//   of the prefix (the change log's share included), per breaker.
//
// Bounded in time (about 2 minutes on 2 cores); not run by CI.
// npm run bench:fleet-scale [-- --quick | --only=N:M] (quick: N = 3 and 10, M = 10 and 1,000, shorter windows)

import { fork, spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { quantile } from './harness.mjs';

const quick = process.argv.includes('--quick');
// --only=50:1000 measures that one combination (N:M).
const only = process.argv
  .find((arg) => arg.startsWith('--only='))
  ?.slice(7)
  .split(':')
  .map(Number);
const NS = only ? [only[0]] : quick ? [3, 10] : [3, 10, 50];
const MS = only ? [only[1]] : [10, 1_000];
const PROCESSES = 5;
const INTERVAL_MS = 1_000;
const WINDOW_MS = quick ? 3_000 : 5_000;
const OPEN_MS = 1_000;
const SAMPLES = quick ? 20 : 100;
const PREFIX = 'scale:';
const WORKER = fileURLToPath(new URL('./fleet-scale/worker.mjs', import.meta.url));

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function startRedis() {
  const port = await new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject).listen(0, '127.0.0.1', () => {
      const { port: p } = s.address();
      s.close(() => resolve(p));
    });
  });
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: ['ignore', 'pipe', 'inherit'], cwd: tmpdir() },
  );
  await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      if (out.includes('Ready to accept connections')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`redis-server exited (${code}):\n${out}`)));
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

class Worker {
  constructor() {
    this.child = fork(WORKER, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.pending = new Map();
    this.seq = 0;
    this.ready = new Promise((resolve) => {
      this.child.on('message', (msg) => {
        if (msg.ready) return resolve();
        const waiting = this.pending.get(msg.id);
        this.pending.delete(msg.id);
        if (msg.error !== undefined) waiting.reject(new Error(msg.error));
        else waiting.resolve(msg.result);
      });
    });
  }

  call(command, args = {}) {
    const id = ++this.seq;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.child.send({ id, command, args });
    });
  }
}

/** Commands Redis ran since the last reset, the bench's own (INFO, CONFIG, MEMORY, SCAN...) left out. */
async function commandCalls(admin) {
  const text = String(await admin.info('commandstats'));
  const calls = {};
  for (const [, name, n] of text.matchAll(/cmdstat_([a-z_|]+):calls=(\d+)/g))
    if (!/^(info|config|memory|scan|flushall|zcard|dbsize|ping)/.test(name))
      calls[name] = Number(n);
  return calls;
}
const total = (calls) => Object.values(calls).reduce((a, b) => a + b, 0);

/**
 * What a replica's report to the registry of replicas (fleetView()) costs per
 * interval as Redis counts it: the EVAL and the seven commands it runs.
 */
const REPORT_CALLS = 8;

/**
 * Waits until the fleet is quiet (an interval with at most two commands per
 * replica beside its report): what a phase started still draining (a read of
 * everything, a retry) must not be counted in the next one. Answers how long it took.
 */
async function settle(admin, n, limitMs = 120_000) {
  const started = Date.now();
  for (;;) {
    await admin.config('RESETSTAT');
    await sleep(INTERVAL_MS);
    if (
      total(await commandCalls(admin)) <= (2 + REPORT_CALLS) * n ||
      Date.now() - started > limitMs
    )
      return Date.now() - started;
  }
}

async function measure(admin, port, n, m) {
  await admin.flushall();
  const processes = Math.min(n, PROCESSES);
  const workers = Array.from({ length: processes }, () => new Worker());
  await Promise.all(workers.map((w) => w.ready));
  // Replica i lives in process i % processes: replicas 0 and 1 are in different processes.
  const idsOf = (p) =>
    Array.from({ length: n }, (_, i) => i)
      .filter((i) => i % processes === p)
      .map((i) => `r${i}`);
  try {
    const hydration = await Promise.all(
      workers.map((w, p) =>
        w.call('start', {
          ids: idsOf(p),
          m,
          port,
          prefix: PREFIX,
          intervalMs: INTERVAL_MS,
          openDurationMs: OPEN_MS,
        }),
      ),
    );
    const settledAfterStart = await settle(admin, n);

    // Steady state: nothing changes.
    await admin.config('RESETSTAT');
    await sleep(WINDOW_MS);
    const steady = await commandCalls(admin);
    const intervals = WINDOW_MS / INTERVAL_MS;

    // What an interval cost before the change log: every replica reads every breaker.
    await admin.config('RESETSTAT');
    await Promise.all(workers.map((w) => w.call('fullReconcile')));
    // reconcile() resolves within operationTimeoutMs, the read may still be going: count it whole.
    for (let i = 0; i < 600 && ((await commandCalls(admin)).hgetall ?? 0) < 3 * m * n; i++)
      await sleep(100);
    const full = await commandCalls(admin);
    const settledAfterFull = await settle(admin, n);

    // An outage of one dependency: every replica keeps calling b0, which fails.
    await admin.config('RESETSTAT');
    const outage = await Promise.all(
      workers.map((w) => w.call('outage', { name: 'b0', everyMs: 20, forMs: WINDOW_MS })),
    );
    const duringOutage = await commandCalls(admin);
    await sleep(OPEN_MS);
    await settle(admin, n);

    // Adoption: a reports, b makes the quorum, the other n - 2 adopt.
    const pool = Array.from({ length: Math.min(m - 1, SAMPLES) }, (_, i) => `b${i + 1}`);
    const latencies = [];
    while (latencies.length < SAMPLES) {
      for (const name of pool) {
        if (latencies.length >= SAMPLES) break;
        await workers[0].call('trip', { index: 0, names: [name] });
        const reportKey = `${PREFIX}{${name}}:opens`;
        for (let i = 0; (await admin.zcard(reportKey)) < 1 && i < 2_000; i++) await sleep(1);
        const t0 = (await workers[1].call('trip', { index: 0, names: [name] }))[name];
        let last = 0;
        for (let waited = 0; waited < 10_000; waited += 2) {
          const seen = await Promise.all(
            workers.map((w) => w.call('adoptions', { names: [name] })),
          );
          const count = seen.reduce((a, s) => a + s[name].count, 0);
          if (count >= n - 2) {
            last = Math.max(...seen.map((s) => s[name].last));
            break;
          }
          await sleep(2);
        }
        if (n > 2) latencies.push(last === 0 ? Number.POSITIVE_INFINITY : last - t0);
      }
      // Another round over the same breakers: everyone resets them (a withdrawal each) first.
      await Promise.all(workers.map((w) => w.call('reset', { names: pool })));
    }
    latencies.sort((a, b) => a - b);

    // Memory: every breaker opened fleet-wide (a and b report it), then what its keys take.
    const names = Array.from({ length: m }, (_, i) => `b${i}`);
    await workers[0].call('reset', { names });
    await workers[1].call('reset', { names });
    await workers[0].call('trip', { index: 0, names });
    await workers[1].call('trip', { index: 0, names });
    // Written once each breaker has its state hash and its two reports: the change log's two keys besides.
    for (let i = 0; i < 600 && (await admin.dbsize()) < 2 * m + 2; i++) await sleep(100);
    let bytes = 0;
    let keys = 0;
    let cursor = '0';
    do {
      const [next, batch] = await admin.scan(cursor, 'MATCH', `${PREFIX}*`, 'COUNT', 1_000);
      cursor = next;
      for (const key of batch) {
        keys++;
        bytes += Number(await admin.memory('USAGE', key));
      }
    } while (cursor !== '0');

    return {
      n,
      m,
      processes,
      hydrateMs: Math.max(...hydration.map((h) => h.hydrateMs)),
      settledMs: { afterStart: settledAfterStart, afterFull: settledAfterFull },
      steady: {
        perSecond: total(steady) / (WINDOW_MS / 1_000),
        perReplicaPerInterval: total(steady) / n / intervals,
        calls: steady,
      },
      full: { perReplica: total(full) / n, calls: full },
      outage: {
        perSecond: total(duringOutage) / (WINDOW_MS / 1_000),
        calls: duringOutage,
        callsMade: outage.reduce((a, o) => a + o.calls, 0),
      },
      adoption: {
        samples: latencies.length,
        p50: quantile(latencies, 0.5),
        p99: quantile(latencies, 0.99),
        max: latencies.at(-1),
      },
      memory: { keys, bytesPerBreaker: bytes / m },
    };
  } finally {
    await Promise.all(workers.map((w) => w.call('stop').catch(() => undefined)));
  }
}

const fmt = (x, digits = 1) =>
  Number.isFinite(x) ? x.toLocaleString('en-US', { maximumFractionDigits: digits }) : String(x);

async function main() {
  const probe = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  if (probe.error !== undefined || probe.status !== 0) {
    console.error('fleet-scale: no redis-server on PATH (apt-get install -y redis-server)');
    process.exit(1);
  }
  const server = await startRedis();
  const admin = new Redis(server.port, '127.0.0.1');
  const rows = [];
  const started = Date.now();
  try {
    for (const n of NS)
      for (const m of MS) {
        const row = await measure(admin, server.port, n, m);
        rows.push(row);
        console.error(
          `N=${n} M=${m}: steady ${fmt(row.steady.perSecond)}/s, outage ${fmt(row.outage.perSecond)}/s, adoption p99 ${fmt(row.adoption.p99, 2)} ms`,
        );
      }
  } finally {
    admin.disconnect();
    await server.stop();
  }
  const lines = [
    `Machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), Node ${process.versions.node}, ${probe.stdout.trim().split(' ').slice(0, 3).join(' ')}; ${Math.round((Date.now() - started) / 1000)} s; reconcileIntervalMs ${INTERVAL_MS} (commands/s at the default 5,000 ms: a fifth of the steady figure).`,
    '',
    '| N replicas | M breakers | start-up: slowest hydration (ms) | steady commands/s | per replica per interval | before: full read per replica per interval | outage of one dependency, commands/s | adoption p50 / p99 / max (ms) | Redis memory per breaker |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.n} | ${fmt(r.m, 0)} | ${fmt(r.hydrateMs, 0)} | ${fmt(r.steady.perSecond)} | ${fmt(r.steady.perReplicaPerInterval, 2)} | ${fmt(r.full.perReplica, 0)} | ${fmt(r.outage.perSecond)} | ${fmt(r.adoption.p50, 2)} / ${fmt(r.adoption.p99, 2)} / ${fmt(r.adoption.max, 2)} (${r.adoption.samples}) | ${fmt(r.memory.bytesPerBreaker, 0)} B |`,
    ),
  ];
  console.log(lines.join('\n'));
  console.log('\n```json\n' + JSON.stringify(rows, null, 1) + '\n```');
}

await main();
