// What the client integrations add to one request, without a network: each client against a stub
// that answers at once, bare and wired, timed in interleaved rounds (median ns per request).
//
//   npm run build && node bench/http/client-micro.mjs [rounds]
//   ROWS=breaker node --cpu-prof bench/http/client-micro.mjs   (one row, for a profile)
//   CLOCK=cpu node bench/http/client-micro.mjs                 (CPU time: on a loaded machine)
//
// undici's request() goes through a stub dispatcher answering like undici's client (200, three
// headers, an 18-byte body, after the same handler unwrapping as an Agent): bare, composed with a
// pass-through interceptor (undici's compose() translates every handler between its two handler
// APIs, whatever the interceptor), and composed with withCircuitBreaker(). HttpService goes
// through an axios instance whose adapter resolves at once: bare, and wired with
// withCircuitBreaker(). The breakers are per-origin families with the defaults, as the docs show.

import 'reflect-metadata';
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { HttpService } from '@nestjs/axios';
import axios from 'axios';
import { lastValueFrom } from 'rxjs';
import { Dispatcher, request } from 'undici';
import { Breaker } from '../../dist/core/index.js';
import { withCircuitBreaker as withAxiosBreaker } from '../../dist/axios/index.js';
import { withCircuitBreaker } from '../../dist/undici/index.js';
import { median } from '../harness.mjs';

const require = createRequire(import.meta.url);
const UnwrapHandler = require('undici/lib/handler/unwrap-handler.js');

const RAW = [
  'content-type',
  'application/json',
  'content-length',
  '18',
  'keep-alive',
  'timeout=60',
].map((s) => Buffer.from(s));
const BODY = Buffer.from('{"id":1,"ok":true}');
const ORIGIN = 'http://127.0.0.1:3000';
const FAMILY = { perKey: { maxKeys: 100 } };

/** Answers like undici's client does (the legacy handler API, after the same unwrapping as an Agent). */
class StubDispatcher extends Dispatcher {
  dispatch(opts, handler) {
    const h = UnwrapHandler.unwrap(handler);
    queueMicrotask(() => {
      h.onConnect(() => {});
      h.onHeaders(200, RAW, () => {}, 'OK');
      h.onData(BODY);
      h.onComplete([]);
    });
    return true;
  }
  close() {}
  destroy() {}
}

const stub = new StubDispatcher();
const viaUndici = (dispatcher) => async () => {
  const { body } = await request(`${ORIGIN}/item`, { dispatcher });
  await body.arrayBuffer();
};
const viaFetch = (dispatcher) => async () => {
  const response = await fetch(`${ORIGIN}/item`, { dispatcher });
  await response.arrayBuffer();
};
const passThrough = (dispatch) => (opts, handler) => dispatch(opts, handler);
const stubAdapter = (config) =>
  Promise.resolve({
    data: { id: 1, ok: true },
    status: 200,
    statusText: 'OK',
    headers: {},
    config,
  });
const viaHttpService = (wired) => {
  const instance = axios.create({ baseURL: ORIGIN, adapter: stubAdapter });
  if (wired) withAxiosBreaker(instance, { breaker: new Breaker('micro-axios', FAMILY) });
  const http = new HttpService(instance);
  return () => lastValueFrom(http.get('/item'));
};

const ALL = {
  'request() bare': viaUndici(stub),
  'request() pass-through': viaUndici(stub.compose(passThrough)),
  'request() breaker': viaUndici(
    stub.compose(withCircuitBreaker({ breaker: new Breaker('micro-undici', FAMILY) })),
  ),
  'request() dispatcher': viaUndici(
    withCircuitBreaker(stub, { breaker: new Breaker('micro-undici-d', FAMILY) }),
  ),
  'fetch() bare': viaFetch(stub),
  'fetch() pass-through': viaFetch(stub.compose(passThrough)),
  'fetch() breaker': viaFetch(
    stub.compose(withCircuitBreaker({ breaker: new Breaker('micro-fetch', FAMILY) })),
  ),
  'fetch() dispatcher': viaFetch(
    withCircuitBreaker(stub, { breaker: new Breaker('micro-fetch-d', FAMILY) }),
  ),
  'HttpService bare': viaHttpService(false),
  'HttpService breaker': viaHttpService(true),
};
const only = process.env.ROWS?.split(',');
const rows = Object.entries(ALL).filter(
  ([k]) => only === undefined || only.some((o) => k.includes(o)),
);

// CLOCK=cpu: this process's CPU time instead of the wall clock (on a loaded machine, time spent
// preempted is not the client's cost).
const cpuClock = process.env.CLOCK === 'cpu';

async function batch(send, n) {
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < n; i++) await send();
  if (cpuClock) {
    const cpu = process.cpuUsage(cpu0);
    return ((cpu.user + cpu.system) * 1e3) / n;
  }
  return ((performance.now() - t0) * 1e6) / n;
}

const rounds = Number(process.argv[2] ?? 30);
const times = new Map(rows.map(([k]) => [k, []]));
for (let r = 0; r < rounds + 3; r++)
  for (const [name, send] of rows) {
    const ns = await batch(send, 2_000);
    if (r >= 3) times.get(name).push(ns);
  }
for (const [name, t] of times) {
  const base = times.get(`${name.split(' ')[0]} bare`);
  const extra = base === undefined ? '' : `  +${(median(t) - median(base)).toFixed(0)} ns`;
  console.log(`${name.padEnd(24)} ${median(t).toFixed(0).padStart(7)} ns/request${extra}`);
}
