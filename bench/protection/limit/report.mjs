// The page bench/LIMIT-RESULTS.md from the figures of ./benchmark.mjs.

import { fixed } from '../summary.mjs';
import { HEADER, row as tableRow } from '../table.mjs';
import { mixTables } from './mix.mjs';
import { CAPACITY, CLIENT_TIMEOUT_MS, SERVER, TRUE_LIMIT } from './scenarios.mjs';

function intro(results, meta) {
  return [
    '# The concurrency limit under load (`npm run bench:limit`)',
    '',
    `Commit ${meta.commit}${meta.engine === undefined ? '' : `, the engine of ${meta.engine}`}, Node ${meta.node}, seed ${meta.seed}, virtual time (${meta.wallS} s of wall time). How to run: \`npm run bench:limit\` (builds \`dist/\`, then \`node bench/protection/limit/run.mjs [--seed N]\`${meta.engine === undefined ? '' : "; this page: `node bench/protection/limit/run.mjs --core <that build>/dist/core/index.js --core-label <its name>`, on another build's engine"}). Issue 30, "Measured in the protection simulator"; the code is in [protection/limit/](protection/limit/).`,
    '',
    `The server is the one of Netflix concurrency-limits' \`Example.java\`: concurrency ${SERVER.concurrency} behind a fair semaphore (requests beyond it wait in the server's own queue, unbounded), log-normal latency (LogNormal(mu ${SERVER.mu}, sigma ${SERVER.sigma}) scaled to a ${SERVER.meanMs} ms mean): ${CAPACITY} requests/s of capacity and a true limit of ${TRUE_LIMIT}. Poisson arrivals. Its unloaded p99 (the server alone at 10 rps): **${fixed(results.p99)} ms**. Clients give up after ${CLIENT_TIMEOUT_MS / 1000} s: goodput counts the requests answered within it, by arrival; the server cannot tell that a client left and serves every request it accepted.`,
    '',
    `Rows: this package's \`ConcurrencyLimiter\` (\`dist/core\`, on the simulation's clock; its defaults unless the row says: initialLimit 20, maxQueue 16, queueTimeoutMs 125; "no queue" is maxQueue 0) with each algorithm this build has (${results.algorithms.map((a) => `'${a}'`).join(', ')}); \`algorithm: 'fixed'\` at the best limit found by search (a fixed bulkhead); no limit. The limiter holds a place until the server has answered, so its latency samples include the wait in the server's queue; a request answered within the clients' 1 s ends with \`succeed()\`, a later one with \`drop()\` (a timeout: the server's deadline is its clients', the overload sign \`drop()\` is for).`,
  ];
}

function stepPart(steps, p99) {
  return [
    '',
    '## 1. The Netflix step load: 50, 90, 200, 100 rps, 100 s each',
    '',
    '![The step load: the limit, goodput and p99 over time](protection/charts/limit-step-load.svg)',
    '',
    "Rows with a queue use the best queue of section 2 (the criticality mix); the last 'fixed' row is the best fixed limit with that queue.",
    '',
    `Per step, from 10 s after it begins (the settled part): the limit's mean; the time from the step to the first second from which its 1 s mean stays within 20% of ${TRUE_LIMIT} for 5 s ("never" if it does not); the share shed; goodput; p50 and p99 of the requests served (in brackets: x the unloaded p99, ${fixed(p99)} ms; issue 30's target at 2x overload, the 200 rps step: at most 2).`,
    '',
    ...steps.step.lines,
    '',
    `### The default algorithm's queues on the step load`,
    '',
    "The queue settings of section 2 (the deadlines of 100 and 250 ms) through the step load with the default algorithm: what each costs in p99 at 2x, and what it saves in requests shed at 0.9x, where the limit sits near the true limit and the server's heavy-tailed latency leaves no room for a burst.",
    '',
    ...steps.sweep.lines,
    '',
    `### The fixed limit's search`,
    '',
    `'fixed' (maxQueue 0) at each limit through the step load; the best has the most goodput over the four steps among those whose p99 stays within 2x the unloaded p99 at every step: **${steps.search.limit}**.`,
    '',
    ...steps.search.lines,
    '',
    '### Drift: 1.2x capacity (120 rps) for 10 minutes',
    '',
    '![Drift: the limit and goodput over 10 minutes at 1.2x](protection/charts/limit-drift.svg)',
    '',
    'Does the limit creep up under mild overload (Netflix/concurrency-limits#134)? Its least-squares slope from the second minute (limit units per minute; 0 is no drift), and its mean in the first and the last minute. Shed, goodput and p99 from the second minute.',
    '',
    ...steps.drift.lines,
    '',
    '### A 500 ms stall at 60 s, under 0.9x capacity (90 rps)',
    '',
    "Every request in service is held 500 ms more, once, and none starts during it (a GC-like pause). Does the limit collapse to its floor? Its mean over the 10 s before, its minimum in the 30 s from the stall, and the time from the stall's end to its first sample after that minimum back within 20% of the mean before (0: it never left that band).",
    '',
    ...steps.stall.lines,
  ];
}

function recommendation(mixed, algorithm) {
  const meeting = mixed.meeting.map((m) => `\`${m.label}\``);
  return [
    '',
    '### The defaults these figures support',
    '',
    meeting.length === 0
      ? '- No row meets both targets at every load.'
      : `- Rows that meet both targets at every load: ${meeting.join(', ')}.`,
    `- The best-scoring queue of the default algorithm ('${algorithm}'; worst critical goodput up to 95%, then mean total goodput from 1x): **\`${mixed.best.label}\`**.`,
  ];
}

function mixPart(mixed, algorithm) {
  return [
    '',
    '## 2. Criticality mix: 0.5x to 4x capacity, 20% critical, 80% sheddable',
    '',
    '![Criticality mix: critical and total goodput against the load](protection/charts/limit-mix.svg)',
    '',
    `Each load for 60 s after 60 s at 0.5x (a running service whose load rises: a gradient limit started cold under overload takes minutes to come down from its initial 20), figures from 10 s after the load began. Each algorithm with no queue and with every \`maxQueue\` and \`queueTimeoutMs\` below; 'fixed' at the best limit by search (the same ranking as the queues: the worst critical goodput, capped at 95%, then total goodput from 1x), with no queue and with the best queue of the default algorithm; no limit. "targets": at least 95% of the critical requests answered within 1 s at every load, and total goodput at least 90% of capacity from 1x.`,
    ...mixTables(mixed.measured),
    ...recommendation(mixed, algorithm),
  ];
}

function tierPart(tiers) {
  return [
    '',
    '## 4. Two tiers: the retry storm of the protection benchmark',
    '',
    `Scenario 6 of [PROTECTION-RESULTS.md](PROTECTION-RESULTS.md) (100 calls/s; the callee's dependency of 20 slots at ~50 ms drops to 70% of the load for 10 s from 30 s; each caller retries 3 times at once; a 1 s client timeout). The callee may have the inbound limiter in front of its dependency (the default algorithm with its defaults, with the best queue of section 2, with no queue, with its defaults but the first version's answer, 503 + Retry-After 1 s, which the caller's breaker honours by pausing every call, and 'fixed' at the dependency's 20 slots with no queue), answering a shed request as the package's filter does: 503 with \`circuit-breaker-code: LOAD_SHED\` and no Retry-After, which the caller's breaker counts as overload (client-side throttling, no pause) (and, as in section 1, ending a permit with \`drop()\` when the dependency answered more than 1 s after the request arrived); the caller may have this package's breaker with \`withRetry\` (its default budget), which honours that answer. Columns as in PROTECTION-RESULTS.md: "recover" is the time from the dependency's recovery to one second of arrivals at >= 95% of the success ratio before.`,
    '',
    HEADER,
    ...tiers.map((t) => tableRow(t.row.label, [t.figures])),
  ];
}

const listOf = (labels) =>
  labels.length === 0 ? 'none' : labels.map((l) => `\`${l}\``).join(', ');

/** Which rows meet each of issue 30's targets, from the figures below. */
function targetsPart(results) {
  const { list, step, drift, stall } = results.steps;
  const limited = list.filter((row) => row.options !== undefined);
  const which = (test) => limited.filter((row) => test(row.name)).map((row) => row.label);
  const overloaded = (name) => step.figures[name].filter((s) => s.rate >= CAPACITY);
  return [
    '',
    "## Against issue 30's targets",
    '',
    `- The limit settles within 20% of the true limit (${TRUE_LIMIT}) within 10 s of each step at or above capacity (200 and 100 rps): ${listOf(which((n) => overloaded(n).every((s) => s.settleMs !== undefined && s.settleMs <= 10_000)))}.`,
    `- p99 within 2x the unloaded p99 at 2x overload (200 rps): ${listOf(which((n) => step.figures[n].find((s) => s.rate === 2 * CAPACITY).p99Ms <= 2 * results.p99))}.`,
    `- No upward drift over 10 minutes at 1.2x (a slope of at most 0.05 a minute): ${listOf(which((n) => drift.figures[n].slope <= 0.05))}.`,
    `- No collapse after the 500 ms stall (its minimum within 20% of the limit before): ${listOf(which((n) => stall.figures[n].minAfter >= 0.8 * stall.figures[n].before))}.`,
    `- Critical goodput at least 95% up to 4x while total goodput stays at capacity: ${listOf(results.mixed.meeting.map((m) => m.label))}.`,
    `- Two tiers, time to recover from the retry storm: ${results.tiers.map((t) => `${t.row.label}: ${t.figures.recoverMs === undefined ? 'not within the run' : `${fixed(t.figures.recoverMs / 1000, 1)} s`}`).join('; ')}.`,
  ];
}

/** The whole page. */
export function resultsPage(results, meta) {
  return [
    ...intro(results, meta),
    ...targetsPart(results),
    ...stepPart(results.steps, results.p99),
    ...mixPart(results.mixed, results.algorithms[0]),
    '',
    '## 3. Beside a fixed bulkhead and no limit',
    '',
    "The 'fixed' rows (at the best limit by search) and the no-limit rows of sections 1 and 2.",
    ...tierPart(results.tiers),
    '',
  ].join('\n');
}
