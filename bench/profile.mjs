// A tiny driver for `node --cpu-prof`: runs only `ours` on one path for a few
// seconds, so that the profile shows the breaker and little else.
//
//   node --cpu-prof --cpu-prof-dir=bench bench/profile.mjs closed|open|isolated|mixed|decorated|direct|operator [seconds] [ours|plain|minimal]
//
// `ours` has the defaults (the default deadline per call, 2 s); `plain` is `timeoutMs: false`,
// the engine benchmark's `ours` row (no deadline, like `minimal`).
//   node bench/profile-summary.mjs bench/<file>.cpuprofile
//
// `decorated` calls a `@CircuitBreaker()` async method (scenario 7), `direct`
// calls `execute` on that method's breaker with the same work, `operator`
// takes `of(1).pipe(circuitBreaker(b))` with `firstValueFrom`.
//
// (.gitignore keeps bench/*.cpuprofile out of git.)

import { performance } from 'node:perf_hooks';
import { Breaker } from '../dist/core/index.js';
import { MinimalBreaker } from './implementations.mjs';

const [path = 'closed', seconds = '4', impl = 'ours'] = process.argv.slice(2);
const FAILURE = new Error('dependency failed');
const ok = () => Promise.resolve(1);
const fail = () => Promise.reject(FAILURE);
let k = 0;
const flaky = () => (++k === 10 ? ((k = 0), Promise.reject(FAILURE)) : Promise.resolve(1));

let breaker =
  impl === 'minimal'
    ? new MinimalBreaker(5, 3_600_000)
    : new Breaker('profile', {
        openDurationMs: 3_600_000,
        ...(impl === 'plain' ? { timeoutMs: false } : {}),
      });
let call = (dep) => breaker.execute(dep);
if (path === 'decorated' || path === 'direct' || path === 'operator') {
  const { decoratedService } = await import('./scenarios/nest-layer.mjs');
  const { firstValueFrom, of } = await import('rxjs');
  const pkg = await import('../dist/index.js');
  const nest = await decoratedService(pkg);
  const work = async () => 1;
  if (path === 'decorated') call = () => nest.service.call();
  if (path === 'direct') call = () => nest.breaker.execute(work);
  if (path === 'operator') {
    const piped = of(1).pipe(pkg.circuitBreaker(breaker));
    call = () => firstValueFrom(piped);
  }
  if (path !== 'operator') breaker = nest.breaker;
}
if (path === 'open')
  for (let i = 0; i < 20; i++) await breaker.execute(fail).catch(() => undefined);
if (path === 'isolated') breaker.isolate();
const dep = path === 'mixed' ? flaky : ok;

async function batch(n) {
  let s = 0;
  for (let i = 0; i < n; i++) {
    try {
      s += await call(dep);
    } catch (e) {
      if (e !== undefined) s--;
    }
  }
  return s;
}

const end = performance.now() + Number(seconds) * 1000;
let calls = 0;
let sink = 0;
while (performance.now() < end) {
  sink += await batch(10_000);
  calls += 10_000;
}
console.log(`${path}: ${calls} calls, ${impl}, state ${breaker.state}, sink ${sink}`);
