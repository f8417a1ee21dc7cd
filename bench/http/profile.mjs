// A CPU profile of one route of the HTTP benchmark's server under load: the
// server child runs with --cpu-prof, autocannon loads GET /<row>/:id from this
// process, and the profile is written when the server closes.
//
//   npm run build && node bench/http/profile.mjs <adapter> <row> [seconds] [out dir]
//   node bench/profile-summary.mjs <out dir>/<file>.cpuprofile 30 <requests>
//
// It prints the requests answered (for ns per request), the server's CPU per
// request and the profile's path.

import { fork } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { ROWS } from './rows.mjs';

const [adapter = 'fastify', rowId = 'open', secondsArg = '8', dir = 'bench/profiles'] =
  process.argv.slice(2);
const row = ROWS.find((r) => r.id === rowId);
if (row === undefined)
  throw new Error(`no row ${rowId}: one of ${ROWS.map((r) => r.id).join(', ')}`);
mkdirSync(dir, { recursive: true });
const before = new Set(readdirSync(dir));

const child = fork(
  fileURLToPath(new URL('./server.mjs', import.meta.url)),
  [JSON.stringify({ adapter })],
  {
    // A sample every 100 µs (the default 1 ms is too coarse for a request of 20 µs).
    execArgv: ['--cpu-prof', '--cpu-prof-interval=100', `--cpu-prof-dir=${dir}`],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  },
);
const replies = new Map();
child.on('message', (m) => replies.get(m.type)?.(m));
const next = (type) => new Promise((resolve) => replies.set(type, resolve));
const { port } = await next('ready');
const cpu = async () => {
  const reply = next('cpu');
  child.send({ cmd: 'cpu', id: 0 });
  return (await reply).cpu;
};

let i = 0;
const load = (seconds) =>
  new Promise((resolve, reject) => {
    const statuses = {};
    const instance = autocannon(
      {
        url: `http://127.0.0.1:${port}`,
        connections: 10,
        duration: seconds,
        requests: [
          {
            method: 'GET',
            setupRequest: (request) => ({ ...request, path: `/${row.id}/${i++ % 10_000}` }),
          },
        ],
      },
      (error, result) => (error ? reject(error) : resolve({ result, statuses })),
    );
    instance.on('response', (_c, status) => (statuses[status] = (statuses[status] ?? 0) + 1));
  });

const count = (statuses) => Object.values(statuses).reduce((a, b) => a + b, 0);
// The warm-up is in the profile too: `requests in the profile` counts it, for ns per request.
const warmUp = count((await load(2)).statuses);
const cpu0 = await cpu();
const { statuses } = await load(Number(secondsArg));
const cpu1 = await cpu();
const requests = count(statuses);
const closed = next('closed');
child.send({ cmd: 'close', id: 1 });
await closed;
await new Promise((resolve) => child.once('exit', resolve));
const file = readdirSync(dir).find((f) => !before.has(f) && f.endsWith('.cpuprofile'));
const us = cpu1.user - cpu0.user + (cpu1.system - cpu0.system);
console.log(
  `${adapter} ${row.id}: ${requests} requests ${JSON.stringify(statuses)}, ${(us / requests).toFixed(1)} µs CPU per request; ${warmUp + requests} requests in the profile ${dir}/${file}`,
);
