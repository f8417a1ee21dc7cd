// Scenario 2: the open path. The breaker is open; the cost is one rejection
// (the error it creates and the rejected promise), the dependency is never called.

import { compileBatch, ratioRows, runInterleaved } from '../harness.mjs';
import {
  Breaker,
  cockatielBreaker,
  ConsecutiveBreaker,
  CountBreaker,
  handleAll,
  implementations,
  MinimalBreaker,
} from '../implementations.mjs';

const FAILURE = new Error('dependency down');
const fail = () => Promise.reject(FAILURE);
const floor = () => Promise.reject(FAILURE);
// The same error, rejected on the next microtask (after the caller's await is attached), as ours rejects:
// Node then has no rejected-without-a-handler promise to track.
const SETTLED = Promise.resolve();
const deferredFloor = () =>
  new Promise((_resolve, reject) => {
    void SETTLED.then(() => reject(FAILURE));
  });

async function tripWith(target, call, failures) {
  for (let i = 0; i < failures; i++) await call(target).catch(() => undefined);
}

// Every breaker stays open for an hour, so that none half-opens during the run
// (the defaults are 30 s); how long it stays open does not change what a rejection costs.
const HOUR = 3_600_000;

/** How each implementation is built and forced open, and how to tell that it is. */
const OPENERS = {
  // Not a breaker: the floor of any rejection, awaiting an already-rejected promise whose error exists already.
  raw: {
    label: 'raw: await Promise.reject(an existing error)',
    create: () => undefined,
    dep: floor,
    open: () => undefined,
    isOpen: () => true,
  },
  rawDeferred: {
    label: 'raw: the same, rejected after the await is attached',
    impl: implementations.raw,
    create: () => undefined,
    dep: deferredFloor,
    open: () => undefined,
    isOpen: () => true,
  },
  minimal: {
    create: () => new MinimalBreaker(5, HOUR),
    open: (t) => tripWith(t, (b) => b.execute(fail), 5),
    isOpen: (t) => t.state === 1,
  },
  // Otherwise default options: 20 calls at a 100 % failure rate reach the minimum throughput and trip it.
  ours: {
    create: () => new Breaker('bench', { openDurationMs: HOUR }),
    open: (t) => tripWith(t, (b) => b.execute(fail), 20),
    isOpen: (t) => t.state === 'open',
  },
  oursIsolated: {
    create: () => new Breaker('bench'),
    label: 'ours (isolated)',
    open: (t) => t.isolate(),
    isOpen: (t) => t.state === 'isolated',
  },
  // opossum binds its action at construction: it is forced open by hand, so the bound action is the counting `dep`.
  opossumNoTimeout: {
    create: (dep) => implementations.opossumNoTimeout.create(dep, { resetTimeout: HOUR }),
    open: (t) => t.open(),
    isOpen: (t) => t.opened,
  },
  opossumDefaults: {
    create: (dep) => implementations.opossumDefaults.create(dep, { resetTimeout: HOUR }),
    open: (t) => t.open(),
    isOpen: (t) => t.opened,
  },
  cockatielConsecutive: {
    create: () =>
      cockatielBreaker(handleAll, { halfOpenAfter: HOUR, breaker: new ConsecutiveBreaker(5) }),
    open: (t) => tripWith(t, (b) => b.execute(fail), 5),
    isOpen: (t) => t.state === 1,
  },
  cockatielCount: {
    create: () =>
      cockatielBreaker(handleAll, {
        halfOpenAfter: HOUR,
        breaker: new CountBreaker({ threshold: 0.5, size: 100 }),
      }),
    open: (t) => tripWith(t, (b) => b.execute(fail), 100),
    isOpen: (t) => t.state === 1,
  },
};

export const OPEN_PATH_IDS = Object.keys(OPENERS);

export async function openPath({ batchSize, rounds, warmupRounds, seed }) {
  let reached = 0;
  const dep = () => {
    reached++;
    return Promise.resolve(1);
  };
  const entries = [];
  for (const id of OPEN_PATH_IDS) {
    const opener = OPENERS[id];
    const impl = opener.impl ?? implementations[id] ?? implementations.ours;
    const target = opener.create(dep);
    await opener.open(target);
    if (!opener.isOpen(target)) throw new Error(`open path: could not force ${id} open`);
    const batch = compileBatch('reject', impl.call, target, opener.dep ?? dep);
    entries.push({ id, label: opener.label ?? impl.label, impl, opener, target, ...batch });
  }
  const result = await runInterleaved(entries, { batchSize, rounds, warmupRounds, seed });
  const problems = entries
    .filter((e) => !e.opener.isOpen(e.target))
    .map((e) => `${e.label} is no longer open after the open-path run`);
  if (reached !== 0)
    problems.push(`the dependency was called ${reached} times while every breaker was open`);
  for (const e of entries) e.impl.dispose?.(e.target);
  return {
    title: 'Open path',
    description: 'one rejection by an open breaker',
    batchSize,
    rounds,
    rows: ratioRows(entries, result),
    problems,
  };
}
