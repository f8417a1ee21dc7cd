// What an HTTP run shows: the text table (stdout), HTTP-RESULTS.md and http.svg.

import { DEFAULT_DEADLINE } from '../implementations.mjs';
import { CLIENT_ROWS } from './client-rows.mjs';

const MARK = { pass: '✅ pass', fail: '❌ FAIL', 'not run': '– not run' };

const num = (v, digits = 0) =>
  v === undefined ? '' : v.toLocaleString('en-US', { maximumFractionDigits: digits });
const ms = (s) => (s === undefined ? '' : s.median.toFixed(2));
const spread = (r) =>
  r === undefined ? '' : `${r.median.toFixed(2)}x (${r.p25.toFixed(2)}–${r.p75.toFixed(2)})`;
const shortId = (id) => (id === 'bare' ? 'bare' : id === 'bare-503' ? 'bare 503' : id);

function adapterTable(results, adapter) {
  const measured = results.adapters[adapter] ?? {};
  const rows = results.rows.map((row) => {
    const m = measured[row.id];
    if (m === undefined)
      return [row.label, '–', '', '', '', '', '', '', '', row.pending ?? 'not run'];
    const base = m.vsBaseline;
    return [
      row.label,
      num(m.rps.median),
      base === undefined ? 'baseline' : `${spread(base.rps)} of ${shortId(base.of)}`,
      ms(m.p50),
      ms(m.p99),
      ms(m.p999),
      base === undefined ? '' : spread(base.p99),
      m.cpuUsPerRequest.median.toFixed(1),
      base === undefined ? '' : spread(base.cpu),
      m.vsAlso === undefined ? '' : `${spread(m.vsAlso.rps)} of ${shortId(m.vsAlso.of)}`,
    ];
  });
  return {
    headers: [
      'row',
      'req/s',
      'req/s ratio (p25–p75)',
      'p50 ms',
      'p99 ms',
      'p99.9 ms',
      'p99 ratio',
      'CPU µs/req',
      'CPU ratio',
      'also: req/s ratio / note',
    ],
    align: ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
    rows,
  };
}

function targetsTable(results) {
  return {
    headers: ['adapter', 'target', 'measured: median (p25–p75 over rounds)', 'result'],
    align: ['l', 'l', 'l', 'l'],
    rows: results.targets.map((t) => [t.adapter, t.label, t.shown ?? '', MARK[t.status]]),
  };
}

function textTable({ headers, align, rows }) {
  const width = (s) => [...s].length;
  const widths = headers.map((h, i) => Math.max(width(h), ...rows.map((r) => width(r[i]))));
  const cell = (s, i) =>
    align[i] === 'r'
      ? s.padStart(widths[i] + s.length - width(s))
      : s.padEnd(widths[i] + s.length - width(s));
  const line = (cells) => cells.map(cell).join('  ').trimEnd();
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

const describe = (results) => {
  const c = results.config;
  return `${c.rounds} interleaved rounds of ${c.seconds} s per row (after a ${c.warmupSeconds} s warm-up each), ${c.connections} connections, ids cycling over ${c.keys.toLocaleString('en-US')} keys`;
};

/** The compact table of the README and docs/benchmarks.md: one row per route, both adapters side by side. */
export function httpSummaryMarkdown(results) {
  const adapters = Object.keys(results.adapters);
  const headers = [
    'route',
    ...adapters.flatMap((a) => [`${a}: req/s ratio (p25–p75)`, 'p99 ratio', 'CPU µs/req (ratio)']),
  ];
  const rows = results.rows.map((row) => [
    row.label,
    ...adapters.flatMap((a) => {
      const m = results.adapters[a][row.id];
      if (m === undefined) return [row.pending ?? 'not run', '', ''];
      const base = m.vsBaseline;
      return [
        base === undefined ? `${num(m.rps.median)} req/s (baseline)` : `${spread(base.rps)}`,
        base === undefined ? `p99 ${ms(m.p99)} ms` : spread(base.p99),
        `${m.cpuUsPerRequest.median.toFixed(1)}${base === undefined ? '' : ` (${base.cpu.median.toFixed(2)}x)`}`,
      ];
    }),
  ]);
  return markdownTable({ headers, align: headers.map((_, i) => (i === 0 ? 'l' : 'r')), rows });
}

export function httpText(results) {
  const out = [`HTTP benchmark (${results.mode}): ${describe(results)}`];
  for (const adapter of Object.keys(results.adapters)) {
    out.push('', `${adapter}`, textTable(adapterTable(results, adapter)));
  }
  if (results.clients !== undefined) out.push('', clientsText(results.clients));
  out.push('', 'Targets', textTable(targetsTable(results)));
  return out.join('\n');
}

const escapeMd = (s) => s.replaceAll('|', '\\|');
function markdownTable({ headers, align, rows }) {
  const sep = align.map((a) => (a === 'r' ? '---:' : ':---'));
  const line = (cells) => `| ${cells.map(escapeMd).join(' | ')} |`;
  return [line(headers), `| ${sep.join(' | ')} |`, ...rows.map(line)].join('\n');
}

const httpNotes = (deadline) => [
  'Each adapter is one Nest application in a child process of its own, listening on a loopback port chosen by the OS; autocannon runs in the parent, so the CPU column (`process.cpuUsage()` of the server process over the segment, divided by its requests) counts the server only. On 2 cores the load generator and the server each have about one.',
  "Every route is `GET /<row>/:id`, the id cycling over 10,000 values for every row (the per-key row uses it as its key), so every row pays the same routing and parameter work. The controller calls a provider; the bare route's provider awaits the in-process fake upstream (an async function answering `{ id, ok: true }` at once), the others wrap that same call.",
  `Ours use the defaults (a ${deadline} deadline per call, a count window of 100); the per-key family has \`maxKeys: 10_000\` so that each key keeps its own child. opossum is wrapped as its README shows (\`new CircuitBreaker(fn, { timeout: 3000, errorThresholdPercentage: 50, resetTimeout: 30000 })\`, \`fire()\`), cockatiel too (\`circuitBreaker(handleAll, { halfOpenAfter: 10_000, breaker: new ConsecutiveBreaker(5) })\`, \`execute()\`).`,
  "Guard and interceptor rows: the bare route's handler behind `@RequireCircuitBreaker('http.guard')` (the guard peeks the breaker on every request, counting nothing) and through `@UseCircuitBreaker('http.interceptor')` (the handling is one call of the breaker, through `circuitBreaker()`). The interceptor row is also compared with the same handler behind a pass-through interceptor (`next.handle()`): what Nest's interceptor machinery costs a route by itself. `@RequireCircuitBreaker('http.guard-open')` names an open breaker: the guard answers before the handler, 503 with `Retry-After` and the filter's body (an `HttpException` for Nest's exception handler).",
  'Open rows: the breakers were tripped at start-up with an open duration of an hour, so every request is a rejection answered by the filter (`httpFilter: true`): 503, `Retry-After: 3600` and the JSON body. Their baseline answers the same status, header and body from the handler itself (`@HttpCode(503)`, `@Header()`); the thrown row is what Nest does with a `ServiceUnavailableException`, for context.',
  'Redis rows: the store is a `RedisBreakerStore` on a `redis-server` the run starts on a free loopback port; every other breaker of the application has `share: false`. The open shared breaker has `share: { quorum: 1 }`, so its own opening opened the fleet.',
  'Each row runs right beside its baseline, a pair of segments in alternating order (row first in one pair, baseline first in the next), so that both see the same moment of a shared machine; the pairs of a round run in a freshly shuffled order. A ratio is taken within its pair and reported as the median over rounds with its 25th–75th percentiles. The "also" column compares two rows of the same baseline (shared against in-memory, the operator against the bare Observable, shared open against open) as the quotient of their paired ratios in each round.',
  "Latencies are exact: every response is timed (autocannon's own histogram keeps whole milliseconds); each segment's percentiles, then their median over the row's segments. The CPU column is the server process's user + system time over the segment divided by the requests answered in it.",
];

export function httpMarkdown(results) {
  const env = results.environment;
  const out = [
    '# HTTP benchmark results',
    '',
    'The latest full run of `npm run bench:http` (issue 18). Regenerated by every full run; do not edit by hand.',
    '',
    `- Date: ${env.date}`,
    `- Node: ${env.node} (V8 ${env.v8}), ${env.platform}`,
    `- CPU: ${env.cpuModel}, ${env.cores} cores; load average ${env.loadAverageAtStart.join(' / ')} at the start, ${env.loadAverageAtEnd.join(' / ')} at the end (1 / 5 / 15 min; the machine was shared)`,
    `- Commit: ${env.commit}${env.dirty ? ' (lib/ had uncommitted changes)' : ''}; autocannon ${env.peers.autocannon}, opossum ${env.peers.opossum}, cockatiel ${env.peers.cockatiel}, ${env.redis}`,
    `- Run: ${describe(results)}; ${(results.durationMs / 1000).toFixed(0)} s in all${results.config.note ? ` (${results.config.note})` : ''}`,
    ...(env.clients
      ? [
          `- The outbound client rows: a run of their own, ${env.clients.date} at commit ${env.clients.commit}${env.clients.dirty ? ' (lib/ had uncommitted changes)' : ''}, load average ${env.clients.loadAverageAtStart.join(' / ')} at the start, ${env.clients.loadAverageAtEnd.join(' / ')} at the end${env.clients.durationMs === undefined ? '' : `, ${(env.clients.durationMs / 1000).toFixed(0)} s`}`,
        ]
      : []),
    '',
    '![Requests per second relative to the bare route](http.svg)',
    '',
    '## Summary',
    '',
    'Ratios to the bare route (open rows: to the bare 503 route), each the median over rounds of the ratio within a pair of segments, with its 25th–75th percentiles (the smallest and largest are in `http-results.json`).',
    '',
    httpSummaryMarkdown(results),
    '',
    '## Targets',
    '',
    markdownTable(targetsTable(results)),
    '',
  ];
  for (const adapter of Object.keys(results.adapters)) {
    out.push(`## ${adapter}`, '', markdownTable(adapterTable(results, adapter)), '');
  }
  if (results.clients !== undefined) {
    const when = env.clients ?? env;
    out.push(
      '## Outbound clients',
      '',
      `What a breaker costs an outbound request (issue 28), measured ${when.date} at commit ${when.commit} (load average ${when.loadAverageAtStart.join(' / ')} at the start): ${describeClients(results.clients)}. Ratios to the same client bare; the noise-floor rows are a second bare client against the first.`,
      '',
      clientsMarkdown(results.clients),
      '',
    );
  }
  if (results.problems.length > 0) {
    out.push('## Problems', '');
    for (const p of results.problems) out.push(`- ${p}`);
    out.push('');
  }
  out.push('## Notes', '');
  for (const n of httpNotes(results.config.defaultDeadline ?? DEFAULT_DEADLINE)) out.push(`- ${n}`);
  if (results.clients !== undefined) for (const n of CLIENT_NOTES) out.push(`- ${n}`);
  out.push('');
  return out.join('\n');
}

const escapeXml = (s) => s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

/** One panel per adapter: each row's req/s ratio to its baseline, with the rounds' range. */
export function httpSvg(results) {
  const adapters = Object.keys(results.adapters);
  const W = 980;
  const labelW = 380;
  const left = labelW + 10;
  const right = W - 230;
  const barH = 14;
  const gap = 5;
  const measured = adapters.flatMap((a) =>
    Object.values(results.adapters[a]).flatMap((m) =>
      m.vsBaseline === undefined ? [] : [m.vsBaseline.rps.p75],
    ),
  );
  const hi = Math.min(2, Math.max(1.2, Math.ceil(Math.max(...measured) * 5) / 5));
  const x = (v) => left + (Math.min(Math.max(v, 0), hi) / hi) * (right - left);
  const parts = [];
  let y = 58;
  for (const adapter of adapters) {
    parts.push(`<text x="10" y="${y + 12}" class="h">${escapeXml(adapter)}</text>`);
    y += 22;
    const top = y;
    for (const row of results.rows) {
      const m = results.adapters[adapter][row.id];
      if (m !== undefined && m.vsBaseline === undefined) continue;
      parts.push(
        `<text x="${labelW}" y="${y + barH - 3}" class="l" text-anchor="end">${escapeXml(row.label)}</text>`,
      );
      if (m === undefined) {
        parts.push(
          `<text x="${left + 4}" y="${y + barH - 3}" class="p">${escapeXml(row.pending ?? 'not run')}</text>`,
        );
      } else {
        const r = m.vsBaseline.rps;
        const cls = row.peer
          ? 'peer'
          : row.id.startsWith('bare') || row.id === 'thrown-503'
            ? 'min'
            : 'ours';
        parts.push(
          `<rect x="${left}" y="${y}" width="${(x(r.median) - left).toFixed(1)}" height="${barH}" class="${cls}"/>`,
          `<line x1="${x(r.p25).toFixed(1)}" y1="${y + barH / 2}" x2="${x(r.p75).toFixed(1)}" y2="${y + barH / 2}" class="range"/>`,
          `<text x="${(right + 8).toFixed(1)}" y="${y + barH - 3}" class="v">${r.median.toFixed(2)}x of ${escapeXml(shortId(m.vsBaseline.of))} · ${m.cpuUsPerRequest.median.toFixed(1)} µs CPU/req</text>`,
        );
      }
      y += barH + gap;
    }
    parts.push(
      `<line x1="${x(1).toFixed(1)}" y1="${top - 4}" x2="${x(1).toFixed(1)}" y2="${y}" class="one"/>`,
      `<line x1="${x(0.97).toFixed(1)}" y1="${top - 4}" x2="${x(0.97).toFixed(1)}" y2="${y}" class="target"/>`,
    );
    y += 16;
  }
  const clients = results.clients?.rows;
  if (clients !== undefined) {
    parts.push(`<text x="10" y="${y + 12}" class="h">outbound clients (issue 28)</text>`);
    y += 22;
    const top = y;
    for (const row of CLIENT_ROWS) {
      const m = clients[row.id];
      if (m === undefined || m.vsBaseline === undefined) continue;
      const r = m.vsBaseline.rps;
      const cls = row.wired ? 'ours' : 'min';
      parts.push(
        `<text x="${labelW}" y="${y + barH - 3}" class="l" text-anchor="end">${escapeXml(row.label)}</text>`,
        `<rect x="${left}" y="${y}" width="${(x(r.median) - left).toFixed(1)}" height="${barH}" class="${cls}"/>`,
        `<line x1="${x(r.ciLow).toFixed(1)}" y1="${y + barH / 2}" x2="${x(r.ciHigh).toFixed(1)}" y2="${y + barH / 2}" class="range"/>`,
        `<text x="${(right + 8).toFixed(1)}" y="${y + barH - 3}" class="v">${r.median.toFixed(2)}x of ${escapeXml(m.vsBaseline.of)} · CI ${r.ciLow.toFixed(2)}–${r.ciHigh.toFixed(2)}</text>`,
      );
      y += barH + gap;
    }
    parts.push(
      `<line x1="${x(1).toFixed(1)}" y1="${top - 4}" x2="${x(1).toFixed(1)}" y2="${y}" class="one"/>`,
      `<line x1="${x(0.97).toFixed(1)}" y1="${top - 4}" x2="${x(0.97).toFixed(1)}" y2="${y}" class="target"/>`,
    );
    y += 16;
  }
  const ticks = [];
  for (let t = 0; t <= hi + 1e-9; t += 0.2) ticks.push(t);
  const grid = ticks.map(
    (t) =>
      `<line x1="${x(t).toFixed(1)}" y1="70" x2="${x(t).toFixed(1)}" y2="${y - 10}" class="grid"/>`,
  );
  const axis = ticks.map(
    (t) =>
      `<text x="${x(t).toFixed(1)}" y="${y + 4}" class="v" text-anchor="middle">${t.toFixed(1)}x</text>`,
  );
  const H = y + 40;
  const env = results.environment;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="system-ui, -apple-system, Segoe UI, sans-serif">`,
    '<style>',
    '  .h { font-size: 14px; font-weight: 600; fill: #222; }',
    '  .l { font-size: 12px; fill: #333; }',
    '  .v { font-size: 11px; fill: #555; }',
    '  .p { font-size: 11px; fill: #868e96; font-style: italic; }',
    '  .ours { fill: #d9480f; } .min { fill: #868e96; } .peer { fill: #4c6ef5; }',
    '  .range { stroke: #212529; stroke-width: 1.5; }',
    '  .grid { stroke: #e9ecef; } .one { stroke: #495057; stroke-width: 1.2; }',
    '  .target { stroke: #d9480f; stroke-dasharray: 4 3; stroke-width: 1.2; }',
    '</style>',
    `<rect width="${W}" height="${H}" fill="#fff"/>`,
    `<text x="10" y="20" class="h">${results.clients ? 'Requests/s relative to bare: Nest under autocannon (open rows: to the bare 503 route), and outbound clients' : 'Nest under autocannon: requests/s relative to the bare route (open rows: to the bare 503 route)'}</text>`,
    `<text x="10" y="38" class="v">Bar: median over rounds of the ratio within a pair of segments; black line: 25th to 75th percentile${results.clients ? ' (clients: 95 % CI of the median)' : ''}; dashed: 0.97x. Right of 1x is faster.</text>`,
    ...grid,
    ...parts,
    ...axis,
    `<text x="10" y="${H - 10}" class="v">${escapeXml(`${env.date} · Node ${env.node} · ${env.cpuModel}, ${env.cores} cores (shared) · ${results.config.rounds} rounds of ${results.config.seconds} s per row · ${results.mode} run`)}</text>`,
    '</svg>',
    '',
  ].join('\n');
}

// The client rows (bench/http/clients.mjs): outbound requests through this package's client integrations.

const ci = (r) => (r === undefined ? '' : `${r.ciLow.toFixed(3)}–${r.ciHigh.toFixed(3)}`);
const ratio3 = (r) =>
  r === undefined ? '' : `${r.median.toFixed(3)}x (${r.p25.toFixed(2)}–${r.p75.toFixed(2)})`;

function clientsTable(clients) {
  const rows = CLIENT_ROWS.map((row) => {
    const m = clients.rows[row.id];
    if (m === undefined) return [row.label, '–', 'not run', '', '', '', ''];
    const base = m.vsBaseline;
    return [
      row.label,
      num(m.rps.median),
      base === undefined ? 'baseline' : ratio3(base.rps),
      base === undefined ? '' : ci(base.rps),
      m.cpuUsPerRequest.median.toFixed(1),
      base === undefined ? '' : ratio3(base.cpu),
      m.vsAlso === undefined ? '' : `${ratio3(m.vsAlso.rps)} of ${m.vsAlso.of}`,
    ];
  });
  return {
    headers: [
      'client',
      'req/s',
      'req/s ratio (p25–p75)',
      '95 % CI of the median',
      'client CPU µs/req',
      'CPU ratio (p25–p75)',
      'also: req/s ratio',
    ],
    align: ['l', 'r', 'r', 'r', 'r', 'r', 'r'],
    rows,
  };
}

const describeClients = (clients) => {
  const c = clients.config;
  const pairs = Object.values(clients.rows).find((m) => m.vsBaseline !== undefined)?.vsBaseline.rps
    .n;
  const where = [
    c.pinned ? 'the clients pinned to one CPU and the upstream to the other' : undefined,
    c.priority?.nice < 0 || c.priority?.autogroupNice < 0
      ? `at raised priority (nice ${c.priority.nice}, autogroup nice ${c.priority.autogroupNice ?? 'n/a'})`
      : undefined,
  ].filter((w) => w !== undefined);
  return `${c.rounds} interleaved rounds (${pairs ?? 0} pairs per row) of segments of about ${c.segmentMs} ms, ${c.concurrency} requests in flight on ${c.concurrency} kept-alive connections, after a ${c.warmupMs} ms warm-up per row${where.length > 0 ? `; ${where.join(', ')}` : ''}`;
};

export function clientsText(clients) {
  return [`Outbound clients: ${describeClients(clients)}`, textTable(clientsTable(clients))].join(
    '\n',
  );
}

export function clientsMarkdown(clients) {
  return markdownTable(clientsTable(clients));
}

/** The compact table of the README and docs/benchmarks.md: each client's rows against its bare one. */
export function clientsSummaryMarkdown(clients) {
  const rows = CLIENT_ROWS.flatMap((row) => {
    const base = clients.rows[row.id]?.vsBaseline;
    return base === undefined
      ? []
      : [[row.label, ratio3(base.rps), ci(base.rps), ratio3(base.cpu)]];
  });
  return markdownTable({
    headers: [
      'client (against the same client bare)',
      'req/s ratio (p25–p75)',
      '95 % CI of the median',
      'client CPU ratio',
    ],
    align: ['l', 'r', 'r', 'r'],
    rows,
  });
}

export const CLIENT_NOTES = [
  'The upstream is a plain `node:http` server in a process of its own on a loopback port, answering every request at once (200, an 18-byte JSON body with its length, kept-alive). The clients run in another process, so the CPU column (`process.cpuUsage()` of the client process over the segment, per request) is the client side alone.',
  "Every client keeps 8 requests in flight on 8 kept-alive connections (`new Agent({ connections: 8 })`; for HttpService an `http.Agent` with `keepAlive` and `maxSockets: 8`) and reads every body (fetch: `arrayBuffer()`; `request()`: `body.arrayBuffer()`; HttpService: axios' JSON). Each row has a client of its own; the wired ones are built as docs/undici.md and docs/axios.md show: `withCircuitBreaker(new Agent(), { breaker })` (and, in rows of their own, the interceptor form `new Agent().compose(withCircuitBreaker({ breaker }))`), and `HttpModule.register()` with `provideAxiosCircuitBreaker(HttpService, 'upstream')` in a Nest application context. Their breaker is a per-key family (`perKey: { maxKeys: 100 }`, one child per origin) with the defaults, so a 2 s deadline per request.",
  'A segment is a fixed number of requests, sized in the warm-up so that it lasts about 100 ms on the bare client. Each row runs right beside its baseline (a pair of segments in alternating order), the pairs of a round in a fresh order. A ratio is taken within its pair; the table gives its median over the pairs, their 25th–75th percentiles, and a 95 % confidence interval of the median (from the order statistics). The noise-floor rows compare a second bare client with the first in the same way: how far apart two identical clients measure.',
];
