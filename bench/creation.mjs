// What creating a breaker costs, and how much of it is option resolution:
//
//   npm run build && node bench/creation.mjs [rounds] [baseline dist]
//
// e.g. `node bench/creation.mjs 30 /tmp/old/dist` with an older
// build in /tmp/old/dist puts its figures beside this build's.
//
// Interleaved rounds (a freshly shuffled order each), one batch of creations
// per case per round, timed in CPU time (process.cpuUsage: on a shared
// machine, wall time also counts the time other processes had the CPU); the
// median per creation over the rounds, and the median of its ratio to
// cockatiel's circuitBreaker() in the same rounds. The created objects are
// kept in a ring so that creation is not optimised away. No forced GC between
// rounds: V8 drops its inline caches with one, and every round would then
// measure code that has not warmed up (resolution 5-10x slower, old and new).

import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { circuitBreaker, ConsecutiveBreaker, handleAll } from 'cockatiel';
import { median, quantile, seededRandom } from './harness.mjs';

const ROUNDS = Number(process.argv[2] ?? 30);
const BATCH = 4_000;
const ring = Array.from({ length: 256 });
const OPTIONS = { failureRateThreshold: 0.5, openDurationMs: 30_000 };
const fresh = () => ({ failureRateThreshold: 0.5, openDurationMs: 30_000 });

async function casesOf(dist, label) {
  const url = (file) => pathToFileURL(resolve(dist, file)).href;
  const { Breaker } = await import(url('core/index.js'));
  const { configFor } = await import(url('core/options/config-cache.js'));
  const { resolveBreakerOptions } = await import(url('core/options/resolve-options.js'));
  const family = {
    breaker: new Breaker('family', { perKey: { maxKeys: 1e9 } }),
    next: 0,
    opened: 0,
  };
  const renew = () => {
    // A family grown to millions of keys would measure its map, not creation.
    if (family.next > 100_000) {
      family.breaker = new Breaker('family', { perKey: { maxKeys: 1e9 } });
      family.next = 0;
    }
  };
  return {
    renew,
    cases: {
      [`${label}: new Breaker(name)`]: () => new Breaker('svc'),
      [`${label}: new Breaker(name, same options)`]: () => new Breaker('svc', OPTIONS),
      [`${label}: new Breaker(name, new literal)`]: () => new Breaker('svc', fresh()),
      // Each literal says something new: nothing to share, the options are resolved.
      [`${label}: new Breaker(name, new content)`]: () =>
        new Breaker('svc', { failureRateThreshold: 0.5, openDurationMs: ++family.opened }),
      [`${label}: family.forKey(new key)`]: () => family.breaker.forKey(`k${family.next++}`),
      [`${label}: resolveBreakerOptions(new literal)`]: () => resolveBreakerOptions('svc', fresh()),
      [`${label}: configFor(new literal)`]: () => configFor('svc', fresh()),
      [`${label}: configFor(same options)`]: () => configFor('svc', OPTIONS),
    },
  };
}

const BASE = 'cockatiel circuitBreaker(ConsecutiveBreaker(5))';
const sets = [await casesOf(new URL('../dist', import.meta.url).pathname, 'ours')];
if (process.argv[3] !== undefined) sets.push(await casesOf(process.argv[3], 'baseline'));
const CASES = {
  [BASE]: () =>
    circuitBreaker(handleAll, { halfOpenAfter: 30_000, breaker: new ConsecutiveBreaker(5) }),
  ...Object.assign({}, ...sets.map((set) => set.cases)),
};

function batch(make) {
  const start = process.cpuUsage();
  for (let i = 0; i < BATCH; i++) ring[i & 255] = make();
  const used = process.cpuUsage(start);
  return ((used.user + used.system) * 1e3) / BATCH; // ns per creation
}

const random = seededRandom(26);
const names = Object.keys(CASES);
const times = Object.fromEntries(names.map((name) => [name, []]));
const ratios = Object.fromEntries(names.map((name) => [name, []]));
for (let round = -3; round < ROUNDS; round++) {
  for (const set of sets) set.renew();
  const order = names.toSorted(() => random() - 0.5);
  const got = {};
  for (const name of order) got[name] = batch(CASES[name]);
  if (round < 0) continue; // warm-up
  for (const name of names) {
    times[name].push(got[name]);
    ratios[name].push(got[name] / got[BASE]);
  }
}

console.log(
  `${ROUNDS} rounds of ${BATCH} creations per case: CPU ns per creation, median (p25-p75), and x cockatiel`,
);
for (const name of names) {
  const t = times[name];
  console.log(
    `${name.padEnd(50)} ${median(t).toFixed(0).padStart(7)} ns  ` +
      `(${quantile(t, 0.25).toFixed(0)}-${quantile(t, 0.75).toFixed(0)})  ` +
      `x${median(ratios[name]).toFixed(2)}`,
  );
}
