// The benchmark of issue 5. Run it through npm, which builds dist/ first:
//
//   npm run bench         full run (under 3 minutes); writes bench/results.json,
//                         bench/RESULTS.md and bench/ratios.svg
//   npm run bench:quick   quick run (under 30 s); prints the tables only
//
// Directly: node --expose-gc bench/run.mjs [--quick] [--write] [--only closed,deadline,injection,recovery,open,mixed,footprint,half-open,hygiene,nest,redis]
//
// The shared-state rows (issue 6, bench/scenarios/shared-redis.mjs) run only when a
// `redis-server` binary is on PATH: the scenario starts its own on a free loopback
// port. Without one the run says so and the rest is unchanged.

import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { toMarkdown, toSvg, toText } from './report.mjs';
import { closedPath } from './scenarios/closed-path.mjs';
import { footprint } from './scenarios/footprint.mjs';
import { halfOpen } from './scenarios/half-open.mjs';
import { hygiene } from './scenarios/hygiene.mjs';
import { mixedTraffic, opossumWindowGrowth } from './scenarios/mixed-traffic.mjs';
import { nestLayerIsolated } from './scenarios/nest-layer.mjs';
import { deadlinePathIsolated } from './scenarios/deadline-path.mjs';
import { recoveryPathIsolated } from './scenarios/recovery-path.mjs';
import { faultInjectionIsolated } from './scenarios/fault-injection.mjs';
import { openPath } from './scenarios/open-path.mjs';
import { DEFAULT_DEADLINE } from './implementations.mjs';
import { evaluateTargets } from './targets.mjs';
import { appendRun, environment, writeRelease } from './results/history.mjs';

const CONFIG = {
  full: {
    // Batches long enough (a few ms) that a scavenge inside one is averaged out.
    // The decorator rows are timed exactly like the closed path; an operator call costs several times as much, so its batches are shorter.
    batchSize: { closed: 20_000, open: 2_000, mixed: 10_000, decorator: 20_000, operator: 5_000 },
    warmupRounds: 3,
    rounds: { closed: 250, open: 300, mixed: 250, decorator: 250, operator: 100 },
    // Scenario 7 times its rows a second time without the forced GC before each round; those rounds vary far less.
    steadyRounds: { decorator: 100, operator: 100, deadline: 100 },
    opossumGrowthRounds: 30,
    footprintCount: 100_000,
    redis: { batchSize: 20_000, rounds: 100, warmupRounds: 3, seed: 66, transitions: 200 },
  },
  quick: {
    batchSize: { closed: 20_000, open: 2_000, mixed: 10_000, decorator: 20_000, operator: 5_000 },
    warmupRounds: 2,
    rounds: { closed: 30, open: 30, mixed: 20, decorator: 30, operator: 30 },
    steadyRounds: { decorator: 30, operator: 30, deadline: 30 },
    opossumGrowthRounds: 6,
    footprintCount: 20_000,
    redis: { batchSize: 20_000, rounds: 20, warmupRounds: 2, seed: 66, transitions: 50 },
  },
};

const NOTES = [
  '`minimal` is a hand-written consecutive-failure breaker (state, counter, opened-at time, a fresh `new Error()` per rejection): the near-floor cost of any breaker.',
  `\`ours\` is \`new Breaker(name, { timeoutMs: false })\`: default options (count window of 100) without the default ${DEFAULT_DEADLINE} deadline, like \`minimal\` and cockatiel, unless a row says otherwise; \`ours (defaults: ${DEFAULT_DEADLINE} deadline)\` is \`new Breaker(name)\`, like-for-like with opossum's defaults (a 10 s timeout per call: what a deadline costs a call does not depend on its length); on the open path it was tripped by 20 failures (the default minimum throughput), the isolated row uses \`isolate()\`.`,
  'Open path: opossum was forced open with `open()`, the others were tripped by failures, and every breaker was given an open duration of an hour (`openDurationMs`, `resetTimeout`, `halfOpenAfter`) so that none half-opens during the run; the dependency was never called.',
  'opossum recomputes its window statistics on every failure, and with its default `rollingPercentilesEnabled: true` that sorts every latency of the last 10 s: the cost of a failure grows with the call rate. The side-by-side mixed-traffic rows therefore run opossum with percentiles off; the growth table measures its defaults separately, on fresh breakers whose window holds 2,000 or 10,000 calls.',
  'Open path: the "raw" row is not a breaker but the floor of any rejection: awaiting an already-rejected promise whose error already exists (Node\'s bookkeeping of a promise rejected before it has a handler, the throw and the catch). Every breaker pays it, plus the error it creates.',
  'Footprint: heapUsed and arrayBuffers deltas around the creation of the breakers, after forced GCs, in a fresh child process per kind, and again once every breaker has made one call (anything allocated on first use); the targets take the larger figure; every breaker has its own name (`svc-<i>`, about 30 bytes of the heap figure) where the library takes one; a per-key child has its key instead (`key-<i>`, in one family created before the first reading, with room for every child so that none is evicted). "timers (all)" counts every Timeout a breaker creates, found with an async hook, "timers (ref\'d)" only those that keep a process alive (`process.getActiveResourcesInfo()`).',
  "Nest layer: no Nest application is started. The decorator is applied to the class by hand as TypeScript applies a legacy decorator (with the `design:returntype` metadata that `emitDecoratorMetadata` emits for an async method), and a `CircuitBreakerRegistry` is set on the instance's registry property, which is all that Nest's injection does; the direct row calls `execute` on the same breaker (default options) with the same work. The operator rows subscribe to `of(1)` through `firstValueFrom` and so include its promise and subscriber in both rows. The scenario runs in a child process of its own, so that its calls do not shape the optimized code of the other scenarios (nor theirs its), and every row is timed twice: like the other scenarios, with a forced full GC before each round (the target is judged on these), and in the steady state without.",
  'Shared state on Redis (issue 6, bench/scenarios/shared-redis.mjs): runs only where a `redis-server` binary is on PATH; it starts its own on a free loopback port, in this process, after every other scenario.',
  'Half-open: cockatiel lets one test call through and makes the others wait for it instead of rejecting them, so they all reach the dependency once it has closed. `minimal` has no budget.',
  'Closed path with a deadline (1b): the steady-state columns time the same rows again without the forced GC before each round. The forced GC finds no deadline call alive between rounds, collects the hidden classes of the call objects (V8 holds map transitions weakly) and deoptimizes the code compiled against them, so each round re-optimizes the deadline path; `minimal` and the plain path use only built-in maps and do not pay it. A service under traffic has calls in flight at every (rare) full GC: the steady state is the per-call cost (`node bench/deadline-harness.mjs` shows both, and a third mode with one call kept in flight).',
  "Hygiene: opossum arms a ref'd timer per call when it has a timeout (its default is 10 s), so a call left hanging keeps the process alive until that timer fires; the case above uses 60 s like ours and is killed.",
];

/** The `redis-server --version` line, or undefined when there is no redis-server on PATH. */
function redisServerVersion() {
  const probe = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  return probe.error === undefined && probe.status === 0 ? probe.stdout.trim() : undefined;
}

/** Issue 6's rows: only with a redis-server on PATH, and only then is the scenario (and ioredis) loaded. */
async function sharedState(options) {
  if (redisServerVersion() === undefined) {
    return { title: 'Shared state on Redis', skipped: 'skipped: no redis-server on PATH' };
  }
  const { sharedRedis } = await import('./scenarios/shared-redis.mjs');
  try {
    return await sharedRedis(options);
  } catch (error) {
    // A redis-server that is there but does not work is a problem of the run, not a reason to lose the other rows.
    const message = `the shared-state scenario failed: ${error instanceof Error ? error.message : String(error)}`;
    return {
      title: 'Shared state on Redis',
      skipped: `not measured: ${message}`,
      problems: [message],
    };
  }
}

function parseArgs(argv) {
  const quick = argv.includes('--quick');
  const onlyIndex = argv.indexOf('--only');
  const only = onlyIndex === -1 ? undefined : new Set(argv[onlyIndex + 1].split(','));
  return { quick, only, write: argv.includes('--write') || (!quick && only === undefined) };
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (typeof globalThis.gc !== 'function') {
    console.error('Run with node --expose-gc (npm run bench does).');
    process.exit(2);
  }
  const mode = args.quick ? 'quick' : 'full';
  const cfg = CONFIG[mode];
  const want = (name) => args.only === undefined || args.only.has(name);
  const started = performance.now();
  const phases = {};
  const phase = async (name, fn) => {
    const t0 = performance.now();
    process.stderr.write(`· ${name}…\n`);
    const result = await fn();
    phases[name] = performance.now() - t0;
    return result;
  };
  const timing = (name, seed) => ({
    batchSize: cfg.batchSize[name],
    warmupRounds: cfg.warmupRounds,
    rounds: cfg.rounds[name],
    steadyRounds: cfg.steadyRounds[name],
    seed,
  });

  const results = { mode, environment: environment(), config: cfg };
  // The hygiene children mostly wait (one is expected to be killed after 10 s): start them first and collect them last.
  const hygieneRun = want('hygiene')
    ? phase('hygiene', () => hygiene({ killAfterMs: 10_000 }))
    : undefined;
  if (want('footprint'))
    results.footprint = await phase('footprint', () => footprint({ count: cfg.footprintCount }));
  if (want('half-open')) results.halfOpen = await phase('half-open', () => halfOpen());
  if (want('closed'))
    results.closed = await phase('closed', () => closedPath(timing('closed', 11)));
  // In a child process: deadline calls through execute() would otherwise reshape the plain path's optimized code.
  if (want('deadline'))
    results.deadline = await phase('deadline', () =>
      deadlinePathIsolated({ ...timing('closed', 12), steadyRounds: cfg.steadyRounds.deadline }),
    );
  // In a child process: the fault injected (and removed) before its run must not shape scenario 1's code.
  if (want('injection'))
    results.injection = await phase('injection', () =>
      faultInjectionIsolated(timing('closed', 13)),
    );
  if (want('recovery'))
    results.recovery = await phase('recovery', () => recoveryPathIsolated(timing('closed', 14)));
  if (want('open')) results.open = await phase('open', () => openPath(timing('open', 22)));
  if (want('mixed')) {
    results.mixed = await phase('mixed', () => mixedTraffic(timing('mixed', 33)));
    results.opossumGrowth = await phase('opossum-growth', () =>
      opossumWindowGrowth({ rounds: cfg.opossumGrowthRounds }),
    );
  }
  // In a child process: the decorator's calls through execute() would otherwise shape the code the scenarios above measure.
  if (want('nest'))
    results.nest = await phase('nest', () =>
      nestLayerIsolated({ decorator: timing('decorator', 44), operator: timing('operator', 55) }),
    );
  // Last: it runs in this process (it starts its own redis-server), after the in-memory scenarios.
  if (want('redis'))
    results.sharedRedis = await phase('shared-redis', () => sharedState(cfg.redis));
  if (hygieneRun) results.hygiene = await hygieneRun;
  results.targets = evaluateTargets(results);
  results.notes = NOTES;
  results.phasesMs = phases;
  results.durationMs = performance.now() - started;
  results.environment.loadAverageAtEnd = os.loadavg().map((l) => Number(l.toFixed(2)));

  console.log(toText(results));
  console.log(
    `\n${mode} run: ${(results.durationMs / 1000).toFixed(1)} s (not counting the build)`,
  );

  appendRun(results, { committed: args.write });
  if (args.write) {
    writeRelease(results);
    const here = (name) => fileURLToPath(new URL(name, import.meta.url));
    writeFileSync(here('./results.json'), `${JSON.stringify(results, null, 2)}\n`);
    writeFileSync(here('./RESULTS.md'), toMarkdown(results));
    writeFileSync(here('./ratios.svg'), toSvg(results));
    console.log('wrote bench/results.json, bench/RESULTS.md, bench/ratios.svg');
  }
  const problems = [
    results.closed,
    results.recovery,
    results.injection?.plain,
    results.injection?.deadline,
    results.open,
    results.mixed,
    results.nest,
    results.sharedRedis,
  ].flatMap((s) => s?.problems ?? []);
  if (problems.length > 0) process.exitCode = 1;
}

await main();
