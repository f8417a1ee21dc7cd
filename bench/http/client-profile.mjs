// A CPU profile of one client row of the HTTP benchmark: that row alone against the loopback
// upstream, so that two profiles (a wired row and its bare baseline) can be compared.
//
//   npm run build && node --cpu-prof --cpu-prof-interval=100 --cpu-prof-dir=bench/profiles \
//     bench/http/client-profile.mjs <row> [seconds]
//   node bench/profile-summary.mjs bench/profiles/<file>.cpuprofile 30 <requests>
//
// It prints the requests made (for ns per request) and the client's CPU per request.

import { performance } from 'node:perf_hooks';
import { CLIENT_ROWS } from './client-rows.mjs';
import { CLIENT_CONFIG, makeClients, segment, startUpstream } from './clients.mjs';

const [rowId = 'request-breaker', secondsArg = '8'] = process.argv.slice(2);
const row = CLIENT_ROWS.find((r) => r.id === rowId);
if (row === undefined)
  throw new Error(`no row ${rowId}: one of ${CLIENT_ROWS.map((r) => r.id).join(', ')}`);
const { concurrency } = CLIENT_CONFIG.full;
const upstream = await startUpstream();
const clients = await makeClients([row], `http://127.0.0.1:${upstream.port}`, concurrency);
const { send, close } = clients.get(row.id);
try {
  await segment(send, 2_000, concurrency);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let requests = 0;
  while (performance.now() - t0 < Number(secondsArg) * 1000) {
    const s = await segment(send, 1_000, concurrency);
    if (s.wrongStatus + s.errors > 0) throw new Error(`${row.id}: a request failed`);
    requests += 1_000;
  }
  const cpu = process.cpuUsage(cpu0);
  console.log(
    `${row.id}: ${requests} requests, ${((cpu.user + cpu.system) / requests).toFixed(1)} µs CPU per request`,
  );
} finally {
  await close();
  await upstream.close();
}
