// What an undici interceptor adds to one request, without a network: undici's request() through a
// stub dispatcher that answers every request at once (200, three headers, a small body), bare,
// composed with a pass-through interceptor, and composed with withCircuitBreaker(). The ns per
// request of each, interleaved in rounds; the differences are the interceptor's cost.
//
//   node bench/http/client-micro.mjs [rounds]

import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { Dispatcher, request } from 'undici';
import { Breaker } from '../../dist/core/index.js';
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

const origin = 'http://127.0.0.1:3000';
const stub = new StubDispatcher();
const all = {
  bare: stub,
  'pass-through': stub.compose((dispatch) => (opts, handler) => dispatch(opts, handler)),
  breaker: stub.compose(
    withCircuitBreaker({ breaker: new Breaker('micro', { perKey: { maxKeys: 100 } }) }),
  ),
  'breaker (plain, no deadline)': stub.compose(
    withCircuitBreaker({ breaker: new Breaker('micro-plain', { timeoutMs: false }) }),
  ),
};

const only = process.env.ROWS?.split(',');
const rows = Object.fromEntries(
  Object.entries(all).filter(([k]) => only === undefined || only.includes(k)),
);

async function batch(dispatcher, n) {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const { body } = await request(`${origin}/item`, { dispatcher });
    await body.arrayBuffer();
  }
  return ((performance.now() - t0) * 1e6) / n;
}

const rounds = Number(process.argv[2] ?? 30);
const times = Object.fromEntries(Object.keys(rows).map((k) => [k, []]));
for (let r = 0; r < rounds + 3; r++)
  for (const [name, d] of Object.entries(rows)) {
    const ns = await batch(d, 2000);
    if (r >= 3) times[name].push(ns);
  }
const bare = median(times[Object.keys(rows)[0]]);
for (const [name, t] of Object.entries(times))
  console.log(
    `${name.padEnd(30)} ${median(t).toFixed(0).padStart(6)} ns/request  (+${(median(t) - bare).toFixed(0)} ns)`,
  );
