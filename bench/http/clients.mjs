// The client rows of the HTTP benchmark: what a breaker costs an outbound request, through this
// package's client integrations (global fetch and undici's request() through an Agent composed
// with `withCircuitBreaker()`, @nestjs/axios' HttpService with `provideAxiosCircuitBreaker()`),
// each beside the same client bare.
//
//   node bench/http/clients.mjs [--quick] [--rounds N] [--segment-ms M] [--rows a,b] [--concurrency C]
//
// Run by bench/http.mjs (a child, over IPC: it sends its result); run directly, it prints the
// table (and, under `node --cpu-prof`, leaves a profile of the client side).
//
// The upstream is a plain node:http server in a process of its own (bench/http/upstream.mjs), so
// the client's CPU is this process's alone. Every client keeps the same number of requests in
// flight (`concurrency`), on as many kept-alive connections. A segment is a fixed number of
// requests, sized in the warm-up to last about `segmentMs` on the bare client. Each row runs right
// beside its baseline (a pair, in alternating order), the pairs of a round in a fresh order; many
// short rounds, so that the machine's slow drifts fall on both halves of a pair alike.

import 'reflect-metadata';
import { fork, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent as HttpAgent } from 'node:http';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { HttpModule, HttpService } from '@nestjs/axios';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { lastValueFrom } from 'rxjs';
import { Agent, request } from 'undici';
import { CircuitBreakerModule, CircuitBreakerRegistry } from '../../dist/index.js';
import { Breaker } from '../../dist/core/index.js';
import { provideAxiosCircuitBreaker } from '../../dist/axios/index.js';
import { withCircuitBreaker } from '../../dist/undici/index.js';
import { seededRandom, tick } from '../harness.mjs';
import { CLIENT_ROWS } from './client-rows.mjs';

export const CLIENT_CONFIG = {
  full: { rounds: 150, segmentMs: 100, warmupMs: 1500, concurrency: 8, pin: true },
  quick: { rounds: 8, segmentMs: 100, warmupMs: 300, concurrency: 8, pin: true },
};

// What the docs show: a per-key family, one child per origin, with the default options (a 2 s deadline).
const FAMILY = { perKey: { maxKeys: 100 } };

/** This process's scheduling priority: its nice value, and its autogroup's where Linux has one. */
function priority() {
  let autogroup;
  try {
    autogroup = Number(/nice (-?\d+)/.exec(readFileSync('/proc/self/autogroup', 'utf8'))?.[1]);
  } catch {
    autogroup = undefined;
  }
  return {
    nice: os.getPriority(),
    autogroupNice: Number.isFinite(autogroup) ? autogroup : undefined,
  };
}

/** Pins a process to one CPU (Linux, with taskset on PATH); says whether it could. */
function pin(pid, cpu) {
  const r = spawnSync('taskset', ['-p', '-c', String(cpu), String(pid)], { stdio: 'ignore' });
  return r.error === undefined && r.status === 0;
}

export async function startUpstream() {
  const child = fork(fileURLToPath(new URL('./upstream.mjs', import.meta.url)), [], {
    execArgv: [],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const port = await new Promise((resolve, reject) => {
    child.once('message', (m) => resolve(m.port));
    child.once('exit', (code) =>
      reject(new Error(`the upstream exited (${code}) before it was ready`)),
    );
  });
  return {
    port,
    pid: child.pid,
    close: async () => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.send({ cmd: 'close' });
      await Promise.race([exited, new Promise((r) => setTimeout(r, 3_000).unref())]);
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}

/** An application context holding one HttpService, wired to the registry's breaker or bare. */
async function httpServiceApp(origin, concurrency, wired) {
  const httpAgent = new HttpAgent({ keepAlive: true, maxSockets: concurrency });
  // A Nest module only carries metadata; in plain JavaScript the decorator is applied by hand.
  // oxlint-disable-next-line typescript/no-extraneous-class
  class ClientModule {}
  Module({
    imports: [
      HttpModule.register({ baseURL: origin, httpAgent }),
      ...(wired ? [CircuitBreakerModule.forRoot({ breakers: { upstream: FAMILY } })] : []),
    ],
    providers: wired ? [provideAxiosCircuitBreaker(HttpService, 'upstream')] : [],
  })(ClientModule);
  const app = await NestFactory.createApplicationContext(ClientModule, { logger: false });
  await app.init();
  return {
    app,
    http: app.get(HttpService),
    breaker: wired ? app.get(CircuitBreakerRegistry).get('upstream') : undefined,
    close: async () => {
      await app.close();
      httpAgent.destroy();
    },
  };
}

/** Per row: one request (resolving to its status), and what to check and close at the end. */
export async function makeClients(rows, origin, concurrency) {
  const url = `${origin}/item`;
  const out = new Map();
  for (const row of rows) {
    if (row.client === 'fetch' || row.client === 'request') {
      const agent = new Agent({ connections: concurrency, pipelining: 1 });
      const breaker = row.wired ? new Breaker(row.id, FAMILY) : undefined;
      const dispatcher = breaker
        ? row.form === 'dispatcher'
          ? withCircuitBreaker(agent, { breaker })
          : agent.compose(withCircuitBreaker({ breaker }))
        : row.composed
          ? agent.compose((dispatch) => (options, handler) => dispatch(options, handler))
          : agent;
      const send =
        row.client === 'fetch'
          ? async () => {
              const response = await fetch(url, { dispatcher });
              await response.arrayBuffer();
              return response.status;
            }
          : async () => {
              const { statusCode, body } = await request(url, { dispatcher });
              await body.arrayBuffer();
              return statusCode;
            };
      out.set(row.id, { send, breaker, close: () => agent.close() });
    } else {
      const app = await httpServiceApp(origin, concurrency, row.wired);
      const send = async () => (await lastValueFrom(app.http.get('/item'))).status;
      out.set(row.id, { send, breaker: app.breaker, close: app.close });
    }
  }
  return out;
}

/** `count` requests through `send`, `concurrency` at a time: requests/s and this process's CPU per request. */
export async function segment(send, count, concurrency) {
  let left = count;
  let wrong = 0;
  let errors = 0;
  const worker = async () => {
    while (left > 0) {
      left--;
      try {
        if ((await send()) !== 200) wrong++;
      } catch {
        errors++;
      }
    }
  };
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsedMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return {
    requests: count,
    // Rounded far below the noise: the committed results keep every sample.
    rps: Math.round((count / (elapsedMs / 1000)) * 10) / 10,
    cpuUsPerRequest: Math.round(((cpu.user + cpu.system) / count) * 1000) / 1000,
    wrongStatus: wrong,
    errors,
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

/** The client rows: warm-up and sizing, then the interleaved rounds. Returns the samples and problems. */
export async function runClients(cfg, rowIds) {
  const wanted = new Set(
    CLIENT_ROWS.filter((r) => rowIds === undefined || rowIds.includes(r.id)).flatMap((r) => [
      r.id,
      r.baseline,
      ...(r.also === undefined ? [] : [r.also]),
    ]),
  );
  const rows = CLIENT_ROWS.filter((r) => wanted.has(r.id));
  const upstream = await startUpstream();
  // On two cores: the clients on one, the upstream on the other, each with its core's caches to itself.
  const pinned = cfg.pin === true && pin(process.pid, 0) && pin(upstream.pid, 1);
  const origin = `http://127.0.0.1:${upstream.port}`;
  const clients = await makeClients(rows, origin, cfg.concurrency);
  const samples = [];
  const problems = [];
  try {
    // Warm-up: every row for warmupMs (JIT, connection pools, the family's child); the bare rows' rate sizes the segments.
    const counts = new Map();
    for (const row of rows) {
      const { send } = clients.get(row.id);
      const t0 = performance.now();
      let done = 0;
      while (performance.now() - t0 < cfg.warmupMs) {
        await segment(send, cfg.concurrency * 25, cfg.concurrency);
        done += cfg.concurrency * 25;
      }
      if (row.baseline === row.id) {
        const rate = done / ((performance.now() - t0) / 1000);
        counts.set(
          row.client,
          Math.max(cfg.concurrency * 10, Math.round((rate * cfg.segmentMs) / 1000)),
        );
      }
    }
    const random = seededRandom(28);
    const paired = rows.filter((r) => r.baseline !== r.id);
    let pair = 0;
    for (let round = 0; round < cfg.rounds; round++) {
      for (const row of shuffled(paired, random)) {
        const base = rows.find((r) => r.id === row.baseline);
        pair++;
        for (const r of pair % 2 === 0 ? [row, base] : [base, row]) {
          const s = await segment(clients.get(r.id).send, counts.get(r.client), cfg.concurrency);
          samples.push({ row: r.id, round, pair, ...s });
          await tick();
        }
      }
      if (process.stderr.isTTY)
        process.stderr.write(`\r· clients: round ${round + 1}/${cfg.rounds}   `);
    }
    if (process.stderr.isTTY) process.stderr.write('\n');
    for (const row of rows.filter((r) => r.wired)) {
      const child = clients.get(row.id).breaker.forKey(`${origin}`);
      const snap = child.snapshot();
      if (snap.state !== 'closed' || snap.totals.successes === 0 || snap.totals.failures.total > 0)
        problems.push(
          `${row.id}: its breaker for ${origin} is ${snap.state} with ${snap.totals.successes} successes and ${snap.totals.failures.total} failures after the run`,
        );
    }
  } finally {
    for (const c of clients.values()) await c.close().catch(() => {});
    await upstream.close();
  }
  for (const s of samples)
    if (s.wrongStatus > 0 || s.errors > 0)
      problems.push(
        `${s.row} round ${s.round + 1}: ${s.wrongStatus} answers with another status, ${s.errors} errors`,
      );
  return { config: { ...cfg, pinned, priority: priority() }, samples, problems };
}

function parseArgs(argv) {
  const value = (name) => {
    const i = argv.indexOf(name);
    return i === -1 ? undefined : argv[i + 1];
  };
  const cfg = { ...CLIENT_CONFIG[argv.includes('--quick') ? 'quick' : 'full'] };
  for (const [flag, key] of [
    ['--rounds', 'rounds'],
    ['--segment-ms', 'segmentMs'],
    ['--warmup-ms', 'warmupMs'],
    ['--concurrency', 'concurrency'],
  ])
    if (value(flag) !== undefined) cfg[key] = Number(value(flag));
  if (argv.includes('--no-pin')) cfg.pin = false;
  return { cfg, rows: value('--rows')?.split(',') };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  // Forked by bench/http.mjs: gone with it (its upstream goes with this process).
  process.on('disconnect', () => process.exit(1));
  const { cfg, rows } = parseArgs(process.argv.slice(2));
  const result = await runClients(cfg, rows);
  if (process.send !== undefined) process.send({ type: 'result', result }, () => process.exit(0));
  else {
    const { aggregateClients } = await import('./client-aggregate.mjs');
    const { clientsText } = await import('./report.mjs');
    console.log(clientsText({ ...result, rows: aggregateClients(result.samples) }));
    if (result.problems.length > 0) {
      for (const p of result.problems) console.log(`PROBLEM: ${p}`);
      process.exitCode = 1;
    }
  }
}
