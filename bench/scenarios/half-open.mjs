// Scenario 5: half-open admission. 1,000 calls arrive at once the moment the
// open duration ends; how many reach the dependency? A breaker with a probe
// budget should let exactly the budget through and reject the rest at once.

import { setImmediate as immediate, setTimeout as sleep } from 'node:timers/promises';
import {
  Breaker,
  cockatielBreaker,
  ConsecutiveBreaker,
  handleAll,
  MinimalBreaker,
  OpossumBreaker,
} from '../implementations.mjs';

const CONCURRENT = 1_000;
const FAILURE = new Error('down');

/** Lets every pending reaction run, and a turn or two of the event loop. */
async function tickAll() {
  await immediate();
  await immediate();
}

/** How many of `outcomes` have already settled as `status`. */
async function countSettled(outcomes, status) {
  const PENDING = {};
  const now = await Promise.all(outcomes.map((p) => Promise.race([p, PENDING])));
  return now.filter((s) => s === status).length;
}

/** A dependency that counts its calls and holds them all until released. */
function heldDependency() {
  let release;
  const held = new Promise((resolve) => (release = resolve));
  const dep = () => {
    dep.calls++;
    return held;
  };
  dep.calls = 0;
  dep.release = () => release(1);
  return dep;
}

/** Fires the burst, counts what reached the dependency while the probes were pending, then lets them succeed. */
async function burst(fire, dep) {
  const outcomes = [];
  for (let i = 0; i < CONCURRENT; i++)
    outcomes.push(
      fire().then(
        () => 'resolved',
        () => 'rejected',
      ),
    );
  await tickAll();
  const reachedWhileHalfOpen = dep.calls;
  const rejectedAtOnce = await countSettled(outcomes, 'rejected');
  dep.release();
  const settled = await Promise.all(outcomes);
  return {
    reachedWhileHalfOpen,
    rejectedAtOnce,
    reachedInTotal: dep.calls,
    rejected: settled.filter((s) => s === 'rejected').length,
  };
}

async function ours(budget) {
  let t = 1_000_000;
  const clock = { now: () => t };
  const options =
    budget === 1 ? undefined : { halfOpen: { maxProbes: budget, maxConcurrent: budget } };
  const b = new Breaker('half-open', options, { clock });
  for (let i = 0; i < 20; i++)
    await b.execute(() => Promise.reject(FAILURE)).catch(() => undefined);
  if (b.state !== 'open') throw new Error(`half-open: ours did not trip (${b.state})`);
  t += b.config.openDurationMs;
  const dep = heldDependency();
  const result = await burst(() => b.execute(dep), dep);
  return { ...result, finalState: b.state };
}

async function opossum() {
  let mode = 'fail';
  const dep = heldDependency();
  const b = new OpossumBreaker(() => (mode === 'fail' ? Promise.reject(FAILURE) : dep()), {
    resetTimeout: 30,
    timeout: false,
  });
  await b.fire().catch(() => undefined);
  if (!b.opened) throw new Error('half-open: opossum did not trip');
  await sleep(60);
  if (!b.halfOpen) throw new Error('half-open: opossum is not half-open after its reset timeout');
  mode = 'held';
  const result = await burst(() => b.fire(), dep);
  const finalState = b.closed ? 'closed' : b.opened ? 'open' : 'half-open';
  b.shutdown();
  return { ...result, finalState };
}

async function cockatiel() {
  const b = cockatielBreaker(handleAll, { halfOpenAfter: 30, breaker: new ConsecutiveBreaker(5) });
  for (let i = 0; i < 5; i++) await b.execute(() => Promise.reject(FAILURE)).catch(() => undefined);
  if (b.state !== 1) throw new Error('half-open: cockatiel did not trip');
  await sleep(60);
  const dep = heldDependency();
  const result = await burst(() => b.execute(dep), dep);
  return { ...result, finalState: ['closed', 'open', 'half-open', 'isolated'][b.state] };
}

async function minimal() {
  const b = new MinimalBreaker(5, 30);
  for (let i = 0; i < 5; i++) await b.execute(() => Promise.reject(FAILURE)).catch(() => undefined);
  await sleep(60);
  const dep = heldDependency();
  const result = await burst(() => b.execute(dep), dep);
  return { ...result, finalState: ['closed', 'open', 'half-open'][b.state] };
}

export async function halfOpen() {
  const rows = [
    {
      id: 'ours-1',
      label: 'ours, default budget (1 probe)',
      budget: 1,
      target: true,
      ...(await ours(1)),
    },
    {
      id: 'ours-3',
      label: 'ours, halfOpen { maxProbes: 3, maxConcurrent: 3 }',
      budget: 3,
      target: true,
      ...(await ours(3)),
    },
    { id: 'opossum', label: 'opossum (one trial call)', budget: 1, ...(await opossum()) },
    {
      id: 'cockatiel',
      label: 'cockatiel Consecutive(5) (one test call)',
      budget: 1,
      ...(await cockatiel()),
    },
    { id: 'minimal', label: 'minimal (no budget)', budget: undefined, ...(await minimal()) },
  ];
  return { title: 'Half-open admission', concurrent: CONCURRENT, rows };
}
