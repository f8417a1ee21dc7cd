// The HTTP benchmark of issue 18: what a breaker costs where users feel it.
//
//   npm run bench:http                full run (about 12 minutes on 2 cores); writes bench/http-results.json,
//                                     bench/HTTP-RESULTS.md, bench/http.svg and the results history
//   npm run bench:http -- --quick     short run (about 2.5 minutes): prints the table, logs the run locally
//   npm run bench:http -- --clients   the outbound client rows only (bench/http/clients.mjs, about 3 minutes)
//
// Directly (after npm run build): node bench/http.mjs [--quick] [--write] [--seconds S] [--rounds N]
//   [--adapters express,fastify] [--rows bare,decorated,...] [--connections C] [--clients | --no-clients]
//
// A run that writes and measures only one part (the Nest servers or the clients) keeps the other
// part of bench/http-results.json as it was.
//
// One Nest application per HTTP adapter (bench/http/server.mjs), each in a child
// process of its own on a loopback port chosen by the OS; autocannon runs here, so
// its CPU is not counted in the server's. Every round runs every row of every
// adapter right beside its baseline (a pair: row then baseline, or baseline then
// row, alternately), the pairs in a freshly shuffled order, each segment for the
// same duration; a ratio is taken within its pair and the median over rounds is
// reported with its 25th and 75th percentiles.
//
// Re-render a run's tables, chart and targets from its samples (after a change of the
// report): node bench/http.mjs --from bench/http-results.json
// The Redis rows need a `redis-server` on PATH (the run starts its own).

import { fork, spawnSync } from 'node:child_process';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { seededRandom, tick } from './harness.mjs';
import { ADAPTERS, ROWS } from './http/rows.mjs';
import { aggregate } from './http/aggregate.mjs';
import { evaluateHttpTargets } from './http/targets.mjs';
import { httpMarkdown, httpSvg, httpText } from './http/report.mjs';
import { aggregateClients } from './http/client-aggregate.mjs';
import { CLIENT_CONFIG } from './http/clients.mjs';
import { CLIENT_ROWS } from './http/client-rows.mjs';
import { DEFAULT_DEADLINE } from './implementations.mjs';
import { appendRun, environment, writeRelease } from './results/history.mjs';
import { readFileSync, writeFileSync } from 'node:fs';

const SERVER = fileURLToPath(new URL('./http/server.mjs', import.meta.url));
const CLIENTS = fileURLToPath(new URL('./http/clients.mjs', import.meta.url));
const KEYS = 10_000;

const CONFIG = {
  // Whole seconds: autocannon ends a run on its one-second tick (a `duration` of 0.5 runs for 1 s,
  // and neither `amount` nor `stop()` ends it sooner).
  full: { seconds: 1, warmupSeconds: 2, rounds: 12, connections: 10 },
  quick: { seconds: 1, warmupSeconds: 1, rounds: 2, connections: 10 },
};

function parseArgs(argv) {
  const value = (name) => {
    const i = argv.indexOf(name);
    return i === -1 ? undefined : argv[i + 1];
  };
  const quick = argv.includes('--quick');
  const cfg = { ...CONFIG[quick ? 'quick' : 'full'] };
  if (value('--seconds') !== undefined)
    cfg.seconds = Math.max(1, Math.ceil(Number(value('--seconds'))));
  if (value('--rounds') !== undefined) cfg.rounds = Number(value('--rounds'));
  if (value('--connections') !== undefined) cfg.connections = Number(value('--connections'));
  const list = (name) => value(name)?.split(',');
  const partial = list('--adapters') !== undefined || list('--rows') !== undefined;
  const clientsOnly = argv.includes('--clients');
  return {
    quick,
    cfg,
    inbound: !clientsOnly,
    clients: !argv.includes('--no-clients') && !partial,
    clientCfg: { ...CLIENT_CONFIG[quick ? 'quick' : 'full'] },
    adapters: list('--adapters') ?? ADAPTERS,
    rows: list('--rows'),
    // A full run of every row writes the committed files; anything else only prints, unless --write.
    write:
      argv.includes('--write') ||
      (!quick && !partial && !clientsOnly && value('--seconds') === undefined),
  };
}

/** A server child, driven over IPC. */
async function startServer(adapter, redisPort) {
  const child = fork(SERVER, [JSON.stringify({ adapter, redisPort })], {
    execArgv: [],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const waiting = new Map();
  let seq = 0;
  let ready;
  const readyPromise = new Promise((resolve, reject) => {
    ready = resolve;
    child.once('exit', (code, signal) =>
      reject(new Error(`the ${adapter} server exited (${code ?? signal}) before it was ready`)),
    );
  });
  child.on('message', (message) => {
    if (message.type === 'ready') ready(message);
    else waiting.get(message.id)?.(message);
  });
  const ask = (cmd) =>
    new Promise((resolve) => {
      const id = ++seq;
      waiting.set(id, (m) => (waiting.delete(id), resolve(m)));
      child.send({ cmd, id });
    });
  const { port, routes } = await readyPromise;
  return {
    adapter,
    port,
    routes,
    cpu: async () => (await ask('cpu')).cpu,
    check: async () => (await ask('check')).states,
    close: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      await ask('close');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000).unref())]);
      if (child.exitCode === null) child.kill('SIGKILL');
    },
    kill: () => child.kill('SIGKILL'),
  };
}

/** The client rows, in a child process of their own (which starts its own upstream): their samples. */
async function runClientRows(clientCfg, quick) {
  const t0 = performance.now();
  const args = Object.entries({
    rounds: clientCfg.rounds,
    'segment-ms': clientCfg.segmentMs,
    'warmup-ms': clientCfg.warmupMs,
    concurrency: clientCfg.concurrency,
  }).flatMap(([k, v]) => [`--${k}`, String(v)]);
  if (!clientCfg.pin) args.push('--no-pin');
  // The quick run (CI's) measures the wired rows only, with what they are compared with.
  if (quick)
    args.push(
      '--rows',
      CLIENT_ROWS.filter((r) => r.wired)
        .map((r) => r.id)
        .join(','),
    );
  const child = fork(CLIENTS, args, {
    execArgv: [],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const result = await new Promise((resolve, reject) => {
    child.once('message', (m) => resolve(m.result));
    child.once('exit', (code, signal) =>
      reject(new Error(`the client rows exited (${code ?? signal}) before their result`)),
    );
  });
  return { ...result, rows: aggregateClients(result.samples), durationMs: performance.now() - t0 };
}

/** One row on one server for `seconds`: requests, latencies (ms, exact), server CPU, statuses. */
// Per row and server: the ids carry on from one segment to the next, so every key is used whatever the rate.
const nextId = new Map();

async function segment(server, row, { seconds, connections }) {
  const counter = `${server.adapter}:${row.id}`;
  let i = nextId.get(counter) ?? 0;
  const latencies = [];
  const statuses = {};
  const cpu0 = await server.cpu();
  const t0 = performance.now();
  const result = await new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: `http://127.0.0.1:${server.port}`,
        connections,
        duration: seconds,
        requests: [
          {
            method: 'GET',
            setupRequest: (request) => {
              request.path = `/${row.id}/${i++ % KEYS}`;
              return request;
            },
          },
        ],
      },
      (error, r) => (error ? reject(error) : resolve(r)),
    );
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      latencies.push(responseTime);
      statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
    });
  });
  const elapsedS = (performance.now() - t0) / 1000;
  nextId.set(counter, i % KEYS);
  const cpu1 = await server.cpu();
  const requests = latencies.length;
  const cpuUs = cpu1.user - cpu0.user + (cpu1.system - cpu0.system);
  latencies.sort((a, b) => a - b);
  const q = (p) => latencies[Math.min(requests - 1, Math.floor(p * requests))];
  const wrong = requests - (statuses[row.status] ?? 0);
  return {
    requests,
    rps: requests / elapsedS,
    p50: q(0.5),
    p99: q(0.99),
    p999: q(0.999),
    cpuUsPerRequest: cpuUs / requests,
    wrongStatus: wrong,
    errors: result.errors + result.timeouts,
    statuses,
  };
}

function shuffled(items, random) {
  const out = items.slice();
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

function redisServerVersion() {
  const probe = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  return probe.error === undefined && probe.status === 0 ? probe.stdout.trim() : undefined;
}

/**
 * The part this run did not measure, from the committed results: a run of the clients alone keeps
 * the Nest servers' run (its environment heads the report) and records its own under
 * `environment.clients`; a run of the servers alone keeps the clients' rows with theirs.
 */
function carryOver(results, args) {
  const file = fileURLToPath(new URL('./http-results.json', import.meta.url));
  const previous = JSON.parse(readFileSync(file, 'utf8'));
  if (!args.inbound) {
    const own = results.environment;
    for (const key of [
      'mode',
      'config',
      'rows',
      'adapters',
      'samples',
      'environment',
      'durationMs',
    ])
      results[key] = previous[key];
    results.environment.clients = clientEnvironment(own, results.clients);
    results.problems.push(...previous.problems.filter((p) => !p.startsWith('clients: ')));
  } else if (previous.clients !== undefined) {
    results.clients = previous.clients;
    results.environment.clients =
      previous.environment.clients ?? clientEnvironment(previous.environment, previous.clients);
  }
}

const clientEnvironment = (env, clients) => ({
  date: env.date,
  commit: env.commit,
  dirty: env.dirty,
  loadAverageAtStart: env.loadAverageAtStart,
  loadAverageAtEnd: env.loadAverageAtEnd,
  durationMs: clients?.durationMs,
});

/** The files a full run writes, from its results. */
function writeReports(results) {
  const here = (name) => fileURLToPath(new URL(name, import.meta.url));
  writeFileSync(here('./http-results.json'), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(here('./HTTP-RESULTS.md'), httpMarkdown(results));
  writeFileSync(here('./http.svg'), httpSvg(results));
  console.log('wrote bench/http-results.json, bench/HTTP-RESULTS.md, bench/http.svg');
}

/** --from <file>: the same run's samples aggregated, judged and written again; nothing is measured or logged. */
function rerender(file) {
  const results = JSON.parse(readFileSync(file, 'utf8'));
  if (results.clients !== undefined)
    results.clients.rows = aggregateClients(results.clients.samples);
  const measured = new Set(results.samples.map((s) => s.row));
  results.adapters = aggregate(
    results.samples,
    ROWS.filter((r) => measured.has(r.id)),
    results.config.adapters,
  );
  results.targets = evaluateHttpTargets(results);
  console.log(httpText(results));
  writeReports(results);
}

async function main() {
  const argv = process.argv.slice(2);
  if (argv.includes('--from')) return rerender(argv[argv.indexOf('--from') + 1]);
  const args = parseArgs(argv);
  const { cfg } = args;
  const started = performance.now();
  const env = environment();
  const redisVersion = redisServerVersion();
  const rows = ROWS.filter(
    (r) =>
      r.pending === undefined &&
      (args.rows === undefined || args.rows.includes(r.id)) &&
      (redisVersion !== undefined || !r.redis),
  );
  // A row is always measured with its baseline (and the row it is also compared with).
  const wanted = new Set(rows.flatMap((r) => [r.id, r.baseline, r.also]));
  const ordered = args.inbound ? ROWS.filter((r) => wanted.has(r.id)) : [];
  const adapters = args.inbound ? args.adapters : [];

  let redis;
  if (redisVersion !== undefined && ordered.some((r) => r.redis)) {
    const { startRedis } = await import('./scenarios/shared-redis.mjs');
    redis = await startRedis();
  }
  const servers = [];
  // A run cut short (CI's timeout, Ctrl-C) leaves no server and no redis-server behind.
  for (const signal of ['SIGINT', 'SIGTERM'])
    process.once(signal, () => {
      for (const server of servers) server.kill();
      redis?.stop();
      process.exit(130);
    });
  const samples = [];
  const problems = [];
  try {
    for (const adapter of adapters) servers.push(await startServer(adapter, redis?.port));
    const random = seededRandom(18);
    const paired = ordered.filter((r) => r.baseline !== r.id);
    const total = (ordered.length + paired.length * cfg.rounds) * servers.length;
    let done = 0;
    // A progress line on a terminal; in a log (CI) one line per round.
    const progress = (what) => {
      done++;
      if (process.stderr.isTTY) process.stderr.write(`\r· ${what} ${done}/${total}      `);
      else if (
        done > ordered.length * servers.length &&
        (done - ordered.length * servers.length) % (paired.length * servers.length) === 0
      )
        process.stderr.write(`· ${what} done\n`);
    };
    // Warm-up: every row once, not recorded (JIT, connection pools, the per-key children's first use).
    for (const server of servers)
      for (const row of ordered) {
        await segment(server, row, { ...cfg, seconds: cfg.warmupSeconds });
        progress('warm-up');
      }
    // Each row runs right beside its baseline (a pair, in alternating order), so that both see the
    // same moment of a shared machine; the pairs of a round run in a fresh order.
    let pair = 0;
    for (let round = 0; round < cfg.rounds; round++) {
      for (const server of shuffled(servers, random)) {
        for (const row of shuffled(paired, random)) {
          const base = ordered.find((r) => r.id === row.baseline);
          pair++;
          for (const r of pair % 2 === 0 ? [row, base] : [base, row]) {
            const s = await segment(server, r, cfg);
            samples.push({ adapter: server.adapter, row: r.id, round, pair, ...s });
            await tick();
          }
          progress(`round ${round + 1}`);
        }
      }
    }
    if (process.stderr.isTTY) process.stderr.write('\n');
    for (const server of servers) {
      const states = await server.check();
      const expect = {
        'http.closed': 'closed',
        'http.operator': 'closed',
        'http.open': 'open',
        'http.guard': 'closed',
        'http.guard-open': 'open',
        'http.interceptor': 'closed',
        'http.per-key': 'closed',
        opossum: 'closed',
        cockatiel: 'closed',
        ...(redis ? { 'http.shared': 'closed', 'http.shared-open': 'open' } : {}),
      };
      for (const [name, state] of Object.entries(expect))
        if (states[name]?.state !== state)
          problems.push(
            `${server.adapter}: ${name} is ${states[name]?.state} after the run, expected ${state}`,
          );
      const family = states['http.per-key']?.family;
      if (wanted.has('per-key') && (family.keys !== KEYS || family.evicted !== 0))
        problems.push(
          `${server.adapter}: the per-key family holds ${family.keys} keys (${family.evicted} evicted), expected ${KEYS} and none`,
        );
      if (redis)
        for (const name of ['http.shared', 'http.shared-open'])
          if (states[name]?.shared !== true)
            problems.push(`${server.adapter}: ${name} was not sharing at the end of the run`);
    }
  } finally {
    for (const server of servers) await server.close().catch(() => server.kill());
    await redis?.stop();
  }
  let clients;
  if (args.clients) {
    process.stderr.write('· outbound clients…\n');
    clients = await runClientRows(args.clientCfg, args.quick);
    for (const p of clients.problems) problems.push(`clients: ${p}`);
  }
  for (const s of samples) {
    if (s.wrongStatus > 0 || s.errors > 0)
      problems.push(
        `${s.adapter} ${s.row} round ${s.round + 1}: ${s.wrongStatus} answers with another status, ${s.errors} errors (${JSON.stringify(s.statuses)})`,
      );
  }

  const results = {
    kind: 'http',
    mode: args.quick ? 'quick' : args.write ? 'full' : 'partial',
    environment: { ...env, redis: redisVersion ?? 'none' },
    config: { ...cfg, keys: KEYS, adapters: args.adapters, defaultDeadline: DEFAULT_DEADLINE },
    rows: ROWS.map(({ id, label, status, baseline, also, pending, peer, redis: r }) => ({
      id,
      label,
      status,
      baseline,
      also,
      pending:
        pending ??
        (r && redisVersion === undefined ? 'skipped: no redis-server on PATH' : undefined),
      peer,
    })),
    adapters: aggregate(samples, ordered, adapters),
    samples,
    problems,
    clients,
  };
  results.durationMs = performance.now() - started;
  results.environment.loadAverageAtEnd = os.loadavg().map((l) => Number(l.toFixed(2)));
  // A run that measured one part and writes the files keeps the other part of the last full run.
  if (args.write && (!args.inbound || !args.clients)) carryOver(results, args);
  results.targets = evaluateHttpTargets(results);

  console.log(httpText(results));
  console.log(`\nhttp ${results.mode} run: ${(results.durationMs / 1000).toFixed(1)} s`);
  // The logs and the release file hold the Nest servers' metrics: a run of the clients alone adds none.
  appendRun(results, { committed: args.write && args.inbound });
  if (args.write) {
    writeReports(results);
    if (args.inbound) writeRelease(results);
  }
  if (problems.length > 0) {
    for (const p of problems) console.log(`PROBLEM: ${p}`);
    process.exitCode = 1;
  }
}

await main();
