// Scenario 7: the Nest layer.
//
// (a) A `@CircuitBreaker()` async method against `breaker.execute` on the same
//     breaker with the same work (`async () => 1`), interleaved exactly like
//     scenario 1 (closed path, batches of sequential awaited calls).
// (b) The `circuitBreaker()` operator on `of(1)` against the bare `of(1)`, each
//     subscription taken with `firstValueFrom`, in the same harness.
//
// No Nest application is started: the decorator is applied to the class by hand,
// as TypeScript's legacy decorators would (with the `design:returntype` metadata
// that `emitDecoratorMetadata` emits for an async method), and the registry is
// set on the instance's registry property, which is all Nest's injection does.

import 'reflect-metadata';
import { fileURLToPath } from 'node:url';
import { firstValueFrom, of } from 'rxjs';
import { compileBatch, runInChild, runInterleaved, summarize } from '../harness.mjs';

const SELF = fileURLToPath(import.meta.url);

export const NEST_PENDING_MESSAGE = 'pending: the Nest layer has not landed';

/** Where Nest injects the registry into an instance with a decorated method (`REGISTRY_PROPERTY` in lib/circuit-breaker.constants.ts). */
export const REGISTRY_PROPERTY = Symbol.for('nestjs-circuit-breaker.registry');

export const BREAKER_NAME = 'bench';

/**
 * A class with a decorated `async call() { return 1; }` (and the same method
 * undecorated, `plain()`), one instance of it with a fresh registry injected,
 * and the registry's breaker after one call.
 */
export async function decoratedService(pkg) {
  class BenchService {
    async call() {
      return 1;
    }

    async plain() {
      return 1;
    }
  }
  // What tsc emits for `async call(): Promise<number>` under emitDecoratorMetadata.
  Reflect.defineMetadata('design:returntype', Promise, BenchService.prototype, 'call');
  const descriptor = Object.getOwnPropertyDescriptor(BenchService.prototype, 'call');
  pkg.CircuitBreaker(BREAKER_NAME)(BenchService.prototype, 'call', descriptor);
  Object.defineProperty(BenchService.prototype, 'call', descriptor);

  // The registry and its orchestrator wired as CircuitBreakerModule wires them (test/helpers/standalone-registry.ts).
  const { CircuitBreakerOrchestrator } = await import('../../dist/circuit-breaker.orchestrator.js');
  const events = new pkg.CircuitBreakerEvents();
  const registry = new pkg.CircuitBreakerRegistry(events);
  new CircuitBreakerOrchestrator({}, registry, events);
  const service = new BenchService();
  service[REGISTRY_PROPERTY] = registry;
  const first = await service.call();
  if (first !== 1) throw new Error(`the decorated method returned ${String(first)}, expected 1`);
  // The decorator creates its breaker on first use, with default options.
  return { service, registry, breaker: registry.get(BREAKER_NAME) };
}

/** The median of per-round differences time(a) - time(b), in ns per call. */
function added(perRound, a, b) {
  return summarize(perRound[a].map((t, i) => t - perRound[b][i]));
}

const DECORATOR_ROWS = [
  { id: 'method', label: 'the async method, undecorated (floor)', call: 'target.plain()' },
  { id: 'direct', label: 'breaker.execute(async () => 1)', call: 'target.execute(dep)' },
  { id: 'decorated', label: '@CircuitBreaker() async method', call: 'target.call()' },
];

const OPERATOR_ROWS = [
  { id: 'bare', label: 'firstValueFrom(of(1))' },
  { id: 'operator', label: 'firstValueFrom(of(1).pipe(circuitBreaker(b)))' },
];

/**
 * Times `entries` twice: as every other scenario does (a forced full GC before
 * each round), and in the steady state (no forced GC). Returns per row both
 * figures against `baseline`, and the ratio and difference of `subject` to it.
 */
async function measure(specs, entries, timing, baseline, subject) {
  const standard = await runInterleaved(entries, timing);
  const steady = await runInterleaved(entries, {
    ...timing,
    rounds: timing.steadyRounds,
    seed: timing.seed + 1,
    gcBetweenRounds: false,
  });
  return {
    batchSize: timing.batchSize,
    rounds: timing.rounds,
    steadyRounds: timing.steadyRounds,
    baseline,
    rows: specs.map((row) => ({
      id: row.id,
      label: row.label,
      nsPerCall: standard.nsPerCall[row.id],
      ratio: standard.ratio(row.id, baseline),
      steady: { nsPerCall: steady.nsPerCall[row.id], ratio: steady.ratio(row.id, baseline) },
    })),
    ratio: standard.ratio(subject, baseline),
    addedNs: added(standard.perRound, subject, baseline),
    steadyRatio: steady.ratio(subject, baseline),
    steadyAddedNs: added(steady.perRound, subject, baseline),
  };
}

export async function nestLayer({ decorator: decoratorTiming, operator: operatorTiming }) {
  const pkg = await import('../../dist/index.js');
  const exports = {
    CircuitBreaker: typeof pkg.CircuitBreaker === 'function',
    circuitBreaker: typeof pkg.circuitBreaker === 'function',
  };
  if (!exports.CircuitBreaker || !exports.circuitBreaker) {
    return {
      title: 'Nest layer',
      status: 'pending',
      short: NEST_PENDING_MESSAGE,
      message: NEST_PENDING_MESSAGE,
      exports,
    };
  }
  const problems = [];
  // Both runs, standard and steady, each with its warm-up.
  const callsOf = (t) => (2 * t.warmupRounds + t.rounds + t.steadyRounds) * t.batchSize;

  // (a) Decorator against a direct execute, on the same breaker.
  const { service, breaker } = await decoratedService(pkg);
  const work = async () => 1;
  const decoratorEntries = DECORATOR_ROWS.map((row) => ({
    ...row,
    ...compileBatch('value', row.call, row.id === 'direct' ? breaker : service, work),
  }));
  const before = breaker.snapshot().totals.successes;
  const decorator = await measure(
    DECORATOR_ROWS,
    decoratorEntries,
    decoratorTiming,
    'direct',
    'decorated',
  );
  const counted = breaker.snapshot().totals.successes - before;
  // Direct and decorated calls both go through this breaker.
  if (counted !== 2 * callsOf(decoratorTiming))
    problems.push(
      `the breaker counted ${counted} successes, expected ${2 * callsOf(decoratorTiming)} (direct and decorated calls)`,
    );
  if (breaker.state !== 'closed')
    problems.push(`the decorator's breaker is ${breaker.state} after the run`);

  // (b) The operator against the bare observable.
  const opBreaker = new pkg.Breaker('operator');
  const operatorEntries = OPERATOR_ROWS.map((row) => ({
    ...row,
    ...compileBatch(
      'value',
      'dep(target)',
      row.id === 'bare' ? of(1) : of(1).pipe(pkg.circuitBreaker(opBreaker)),
      firstValueFrom,
    ),
  }));
  const operator = await measure(
    OPERATOR_ROWS,
    operatorEntries,
    operatorTiming,
    'bare',
    'operator',
  );
  const opCounted = opBreaker.snapshot().totals.successes;
  if (opCounted !== callsOf(operatorTiming))
    problems.push(
      `the operator's breaker counted ${opCounted} successes, expected ${callsOf(operatorTiming)}`,
    );
  if (opBreaker.state !== 'closed')
    problems.push(`the operator's breaker is ${opBreaker.state} after the run`);

  return {
    title: 'Nest layer',
    status: 'measured',
    exports,
    decorator: {
      description:
        '@CircuitBreaker() on `async call() { return 1; }` vs breaker.execute(async () => 1) on the same breaker (default options)',
      ...decorator,
    },
    operator: {
      description:
        'circuitBreaker() on of(1) vs the bare of(1), each subscription taken with firstValueFrom (fresh breaker, default options)',
      ...operator,
    },
    decoratorRatio: decorator.ratio,
    operatorRatio: operator.ratio,
    short: `${decorator.ratio.median.toFixed(2)}x`,
    problems,
  };
}

/**
 * The scenario in a child process of its own (`node --expose-gc nest-layer.mjs
 * '<options as JSON>'`), so that its calls through `execute` (the decorator's
 * included) do not shape the optimized code that the other scenarios measure,
 * and theirs do not shape its.
 */
export async function nestLayerIsolated(options) {
  return runInChild(SELF, options);
}

if (process.argv[1] === SELF) {
  const result = await nestLayer(JSON.parse(process.argv[2]));
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
