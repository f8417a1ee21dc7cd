// Run by hygiene.mjs as `node hygiene-child.mjs <case>`: sets one breaker up,
// prints "ready", and returns. The process must then exit on its own.

import {
  Breaker,
  cockatielBreaker,
  ConsecutiveBreaker,
  handleAll,
  OpossumBreaker,
} from '../implementations.mjs';

const ok = () => Promise.resolve(1);
const fail = () => Promise.reject(new Error('down'));
const never = () => new Promise(() => {});
const swallow = () => undefined;

export const CASES = {
  'ours:call': async () => {
    const b = new Breaker('hygiene');
    await b.execute(ok);
  },
  'ours:trip': async () => {
    const b = new Breaker('hygiene');
    for (let i = 0; i < 20; i++) await b.execute(fail).catch(swallow);
    if (b.state !== 'open') throw new Error(`expected open, got ${b.state}`);
    await b.execute(ok).catch(swallow);
  },
  'ours:hang': async () => {
    const b = new Breaker('hygiene', { timeoutMs: 60_000 });
    b.execute(never).catch(swallow);
  },
  'ours:time-window': async () => {
    const b = new Breaker('hygiene', { window: { type: 'time', durationMs: 10_000, buckets: 10 } });
    await b.execute(ok);
    await b.execute(fail).catch(swallow);
  },
  'opossum:call': async () => {
    const b = new OpossumBreaker(ok);
    await b.fire();
  },
  'opossum:trip': async () => {
    const b = new OpossumBreaker(fail);
    await b.fire().catch(swallow);
    if (!b.opened) throw new Error('expected opossum to be open');
    await b.fire().catch(swallow);
  },
  // The same deadline as ours:hang; opossum's own default deadline is 10 s.
  'opossum:hang': async () => {
    const b = new OpossumBreaker(never, { timeout: 60_000 });
    b.fire().catch(swallow);
  },
  'cockatiel:call': async () => {
    const b = cockatielBreaker(handleAll, {
      halfOpenAfter: 30_000,
      breaker: new ConsecutiveBreaker(5),
    });
    await b.execute(ok);
  },
  'cockatiel:trip': async () => {
    const b = cockatielBreaker(handleAll, {
      halfOpenAfter: 30_000,
      breaker: new ConsecutiveBreaker(5),
    });
    for (let i = 0; i < 5; i++) await b.execute(fail).catch(swallow);
    await b.execute(ok).catch(swallow);
  },
};

const name = process.argv[2];
if (CASES[name] === undefined) throw new Error(`unknown hygiene case ${name}`);
await CASES[name]();
process.stdout.write('ready\n');
