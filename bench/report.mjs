// Everything a run shows: the stdout table, RESULTS.md and the SVG chart.
// (results.json is the results object itself.)

const MARK = {
  pass: '✅ pass',
  fail: '❌ FAIL',
  pending: '⏳ pending',
  'not run': '– not run',
  skipped: '– skipped',
};

const ns = (s) =>
  s === undefined
    ? ''
    : s.median >= 10_000
      ? `${(s.median / 1000).toFixed(1)} µs`
      : `${Math.round(s.median)} ns`;
const ratio = (s) => (s === undefined ? '' : `${s.median.toFixed(2)}x`);
const spread = (s) => (s === undefined ? '' : `${s.p25.toFixed(2)}–${s.p75.toFixed(2)}`);
const bytes = (b) => (b === undefined ? '' : `${Math.round(b).toLocaleString('en-US')}`);
const ms = (m) =>
  m === undefined ? '' : m >= 1000 ? `${(m / 1000).toFixed(1)} s` : `${Math.round(m)} ms`;

// ---------------------------------------------------------------------------
// Tables, as rows of cells, shared by the text and the Markdown output.

function timingTable(scenario) {
  return {
    headers: ['implementation', 'ns/call (median)', 'ratio to minimal (median)', 'ratio p25–p75'],
    align: ['l', 'r', 'r', 'r'],
    rows: scenario.rows.map((r) => [
      r.label,
      ns(r.nsPerCall),
      ratio(r.ratioToMinimal),
      spread(r.ratioToMinimal),
    ]),
  };
}

/** A scenario's rows with their steady-state figures (no forced GC before each round) beside them. */
function steadyTable(scenario) {
  return {
    headers: [
      'implementation',
      'ns/call (median)',
      'ratio to minimal (median)',
      'ratio p25–p75',
      'steady state: ns/call',
      'ratio',
      'p25–p75',
    ],
    align: ['l', 'r', 'r', 'r', 'r', 'r', 'r'],
    rows: scenario.rows.map((r) => [
      r.label,
      ns(r.nsPerCall),
      ratio(r.ratioToMinimal),
      spread(r.ratioToMinimal),
      ns(r.steady.nsPerCall),
      ratio(r.steady.ratioToMinimal),
      spread(r.steady.ratioToMinimal),
    ]),
  };
}

function nestTable(part, baselineLabel) {
  return {
    headers: [
      'row',
      'ns/call (median)',
      `ratio to ${baselineLabel} (median)`,
      'ratio p25–p75',
      'steady state: ns/call',
      'ratio',
      'p25–p75',
    ],
    align: ['l', 'r', 'r', 'r', 'r', 'r', 'r'],
    rows: part.rows.map((r) => [
      r.label,
      ns(r.nsPerCall),
      ratio(r.ratio),
      spread(r.ratio),
      ns(r.steady.nsPerCall),
      ratio(r.steady.ratio),
      spread(r.steady.ratio),
    ]),
  };
}

function sharedRedisTable(shared) {
  return {
    headers: ['breaker', 'ns/call (median)', 'ratio to in-memory (median)', 'ratio p25–p75'],
    align: ['l', 'r', 'r', 'r'],
    rows: shared.rows.map((r) => [
      r.label,
      ns(r.nsPerCall),
      r.ratioToMemory ? ratio(r.ratioToMemory) : '1.00x (baseline)',
      spread(r.ratioToMemory),
    ]),
  };
}

function growthTable(mixed, opossumGrowth) {
  const rows = mixed.growth.map((g) => {
    const large = mixed.rows.find((r) => r.id === g.large);
    const small = mixed.rows.find((r) => r.id === g.small);
    return [
      g.label,
      g.note,
      ns(small.nsPerCall),
      ns(large.nsPerCall),
      ratio(g.ratio),
      spread(g.ratio),
    ];
  });
  if (opossumGrowth !== undefined) {
    const o = opossumGrowth;
    rows.push([
      o.label,
      o.note,
      `${Math.round(o.nsPerCall2k)} ns`,
      `${Math.round(o.nsPerCall10k)} ns`,
      `${o.ratio.toFixed(2)}x`,
      '',
    ]);
  }
  return {
    headers: [
      'implementation',
      'window',
      'ns/call at 2,000',
      'ns/call at 10,000',
      'cost(10k) / cost(2k)',
      'p25–p75',
    ],
    align: ['l', 'l', 'r', 'r', 'r', 'r'],
    rows,
  };
}

function footprintTable(footprint) {
  return {
    headers: [
      'breaker',
      'heapUsed B',
      'arrayBuffers B',
      'heap + buffers B (new)',
      'after one call B',
      'rss B (rough)',
      'timers (all)',
      "timers (ref'd)",
    ],
    align: ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
    rows: footprint.rows.map((r) => [
      r.label,
      bytes(r.heapUsedPerBreaker),
      bytes(r.arrayBuffersPerBreaker),
      bytes(r.bytesPerBreaker),
      bytes(r.bytesPerBreakerUsed),
      bytes(r.rssPerBreaker),
      String(r.timersPerBreaker),
      String(r.refTimersPerBreaker),
    ]),
  };
}

function halfOpenTable(halfOpen) {
  return {
    headers: [
      'breaker',
      'budget',
      'reached while half-open',
      'rejected at once',
      'reached in total',
      'final state',
    ],
    align: ['l', 'r', 'r', 'r', 'r', 'l'],
    rows: halfOpen.rows.map((r) => [
      r.label,
      r.budget === undefined ? 'none' : String(r.budget),
      String(r.reachedWhileHalfOpen),
      String(r.rejectedAtOnce),
      String(r.reachedInTotal),
      r.finalState,
    ]),
  };
}

function hygieneTable(hygiene) {
  return {
    headers: ['case', 'exited on its own', 'time to exit', 'after set-up'],
    align: ['l', 'l', 'r', 'r'],
    rows: hygiene.rows.map((r) => [
      r.label,
      r.exited
        ? 'yes'
        : r.killed
          ? `no (killed at ${ms(hygiene.killAfterMs)})`
          : `no (code ${r.code}${r.error ? `: ${r.error}` : ''})`,
      ms(r.ms),
      ms(r.afterReadyMs),
    ]),
  };
}

function targetsTable(targets) {
  return {
    headers: ['target', 'measured', 'result'],
    align: ['l', 'l', 'l'],
    rows: targets.map((t) => [t.label, t.shown ?? '', MARK[t.status]]),
  };
}

const phaseLine = (results) =>
  Object.entries(results.phasesMs ?? {})
    .map(([name, t]) => `${name} ${ms(t)}`)
    .join(', ');

// ---------------------------------------------------------------------------
// Text

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

function sections(results) {
  const out = [];
  const {
    closed,
    deadline,
    recovery,
    injection,
    open,
    mixed,
    opossumGrowth,
    footprint,
    halfOpen,
    hygiene,
    nest,
  } = results;
  const batchNote = (s) =>
    `batches of ${s.batchSize.toLocaleString('en-US')} calls, ${s.rounds} interleaved rounds`;
  if (closed)
    out.push({
      title: `1. Closed path: ${closed.description} (${batchNote(closed)})`,
      table: timingTable(closed),
      problems: closed.problems,
    });
  if (deadline)
    out.push({
      title: `1b. Closed path with a deadline: ${deadline.description} (${batchNote(deadline)}, in a child process${deadline.steadyRounds === undefined ? '' : `; steady state: ${deadline.steadyRounds} rounds without the forced GC`})`,
      table: deadline.rows.every((r) => r.steady !== undefined)
        ? steadyTable(deadline)
        : timingTable(deadline),
      problems: deadline.problems,
    });
  for (const [n, run] of [injection?.plain, injection?.deadline].entries()) {
    if (run === undefined) continue;
    out.push({
      title: `1${n === 0 ? 'c' : 'd'}. ${run.title}: ${run.description} (${batchNote(run)}, in a child process)`,
      table: timingTable(run),
      problems: run.problems,
    });
  }
  if (recovery)
    out.push({
      title: `1e. Closed path with the recovery options: ${recovery.description} (${batchNote(recovery)}, in a child process)`,
      table: timingTable(recovery),
      problems: recovery.problems,
    });
  if (open)
    out.push({
      title: `2. Open path: ${open.description} (${batchNote(open)})`,
      table: timingTable(open),
      problems: open.problems,
    });
  if (mixed) {
    out.push({
      title: `3. Mixed traffic: ${mixed.description} (${batchNote(mixed)})`,
      table: timingTable(mixed),
      problems: mixed.problems,
    });
    out.push({
      title: '3b. Cost growth from 2,000 to 10,000 calls in the window',
      table: growthTable(mixed, opossumGrowth),
    });
  }
  if (footprint) {
    const child = footprint.rows.find((r) => r.kind === 'per-key-child');
    const after =
      child?.familyEntryPerChild === undefined
        ? undefined
        : `The per-key child row counts everything a new target adds to a family: the child breaker (which shares the family's options and derives its name), ` +
          `its key string (\`key-<i>\`) and its entry in the family's Map. The key strings in a Map of the same size, measured alone, take ` +
          `${bytes(child.familyEntryPerChild)} B per key, so the child breaker's own share is about ` +
          `${bytes(Math.max(child.bytesPerBreaker, child.bytesPerBreakerUsed) - child.familyEntryPerChild)} B.`;
    out.push({
      title: `4. Footprint: bytes per breaker over ${footprint.count.toLocaleString('en-US')} breakers`,
      table: footprintTable(footprint),
      after,
    });
  }
  if (halfOpen)
    out.push({
      title: `5. Half-open admission: ${halfOpen.concurrent.toLocaleString('en-US')} concurrent calls at the end of the open duration`,
      table: halfOpenTable(halfOpen),
    });
  if (hygiene)
    out.push({
      title: `6. Hygiene: does the process exit on its own? (killed after ${ms(hygiene.killAfterMs)})`,
      table: hygieneTable(hygiene),
    });
  if (nest?.status === 'measured') {
    const added = (s) =>
      `${Math.round(s.median)} ns (p25–p75 ${Math.round(s.p25)}–${Math.round(s.p75)} ns)`;
    const steadyNote =
      'The first three figure columns are timed like every other scenario (a forced full GC before each round; the target is judged on them); ' +
      'the steady-state columns are the same rows again without the forced GCs.';
    out.push({
      title: `7. Nest layer: ${nest.decorator.description} (${batchNote(nest.decorator)}; steady state: ${nest.decorator.steadyRounds} rounds)`,
      table: nestTable(nest.decorator, 'direct execute'),
      after:
        `Added by the decorator over a direct execute, per call (median of per-round differences): ${added(nest.decorator.addedNs)}; ` +
        `steady state ${added(nest.decorator.steadyAddedNs)}. ${steadyNote}`,
      problems: nest.problems,
    });
    out.push({
      title: `7b. Nest layer: ${nest.operator.description} (${batchNote(nest.operator)}; steady state: ${nest.operator.steadyRounds} rounds)`,
      table: nestTable(nest.operator, 'bare of(1)'),
      after:
        `Added by the operator, per subscription (median of per-round differences): ${added(nest.operator.addedNs)}; steady state ${added(nest.operator.steadyAddedNs)}. ` +
        "No target; reported only. The forced full GC before each round deoptimizes much of rxjs's subscribe chain and the operator " +
        "(V8 discards optimized code that embeds objects that have died: `--trace-deopt` reports 'weak objects'), so those rounds mostly measure re-optimization; " +
        'the steady-state columns are the per-subscription cost.',
    });
  } else if (nest) out.push({ title: '7. Nest layer', text: nest.message });
  const shared = results.sharedRedis;
  if (shared?.skipped !== undefined)
    out.push({ title: '8. Shared state on Redis (issue 6)', text: shared.skipped });
  else if (shared) {
    const a = shared.adoption;
    out.push({
      title: `8. Shared state on Redis (issue 6): ${shared.description} (${batchNote(shared)})`,
      table: sharedRedisTable(shared),
      after:
        `Adoption on loopback (three stores as three replicas; from the transition that makes the quorum to the third replica's adoption), over ${a.n} outages: ` +
        `median ${a.medianMs.toFixed(2)} ms, p99 ${a.p99Ms.toFixed(2)} ms, max ${a.maxMs.toFixed(2)} ms. ${shared.redis}.`,
      problems: shared.problems,
    });
  }
  return out;
}

export function toText(results) {
  const parts = [];
  for (const s of sections(results)) {
    parts.push(s.title);
    parts.push(s.table ? textTable(s.table) : s.text);
    if (s.after) parts.push(s.after);
    for (const p of s.problems ?? []) parts.push(`PROBLEM: ${p}`);
    parts.push('');
  }
  parts.push('Targets');
  parts.push(textTable(targetsTable(results.targets)));
  parts.push('');
  parts.push(`Phases: ${phaseLine(results)}`);
  return parts.join('\n');
}

// ---------------------------------------------------------------------------
// Markdown

const escapeMd = (s) => s.replaceAll('|', '\\|');

function markdownTable({ headers, align, rows }) {
  const sep = align.map((a) => (a === 'r' ? '---:' : ':---'));
  const line = (cells) => `| ${cells.map(escapeMd).join(' | ')} |`;
  return [line(headers), `| ${sep.join(' | ')} |`, ...rows.map(line)].join('\n');
}

export function toMarkdown(results) {
  const env = results.environment;
  const out = [];
  out.push('# Benchmark results');
  out.push('');
  out.push(
    'The latest full run of `npm run bench` (issue 5). Regenerated by every full run; do not edit by hand.',
  );
  out.push('');
  out.push(`- Date: ${env.date}`);
  out.push(`- Node: ${env.node} (V8 ${env.v8}), ${env.platform}`);
  out.push(
    `- CPU: ${env.cpuModel}, ${env.cores} cores; load average ${env.loadAverageAtStart.join(' / ')} at the start, ${env.loadAverageAtEnd.join(' / ')} at the end (1 / 5 / 15 min)`,
  );
  out.push(`- Commit: ${env.commit}${env.dirty ? ' (lib/ had uncommitted changes)' : ''}`);
  out.push(`- Peers: opossum ${env.peers.opossum}, cockatiel ${env.peers.cockatiel}`);
  out.push(
    `- Run: ${results.mode}, ${ms(results.durationMs)} in all, not counting the build (${phaseLine(results)}; hygiene runs alongside the others)`,
  );
  out.push('');
  out.push(
    'Method: one process, one run; every implementation is timed in batches of sequential awaited calls, all implementations',
  );
  out.push(
    'interleaved in a freshly shuffled order each round, after a warm-up. The ratio to `minimal` is taken within each round',
  );
  out.push(
    'and the median over rounds is reported (with the 25th–75th percentile), because absolute times drift between minutes',
  );
  out.push(
    'while side-by-side ratios do not. Footprint, hygiene and the Nest layer run in child processes.',
  );
  out.push('');
  out.push('## Targets');
  out.push('');
  out.push(markdownTable(targetsTable(results.targets)));
  out.push('');
  out.push('## Ratios to `minimal`');
  out.push('');
  out.push('![Ratios to minimal, scenarios 1-3](ratios.svg)');
  out.push('');
  for (const s of sections(results)) {
    out.push(`## ${s.title}`);
    out.push('');
    out.push(s.table ? markdownTable(s.table) : s.text);
    out.push('');
    if (s.after) out.push(s.after, '');
    for (const p of s.problems ?? []) out.push(`**Problem:** ${p}\n`);
  }
  out.push('## Notes');
  out.push('');
  for (const note of results.notes) out.push(`- ${note}`);
  out.push('');
  return out.join('\n');
}

// ---------------------------------------------------------------------------
// SVG: one group per scenario, one bar per implementation, on a log scale
// centred on 1.0 (as fast as minimal); bars left of it are cheaper.

const escapeXml = (s) => s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

export function toSvg(results) {
  const groups = [
    { scenario: results.closed, title: '1. Closed path', target: 1.3 },
    { scenario: results.deadline, title: '1b. Closed path, the default deadline per call' },
    { scenario: results.open, title: '2. Open path (one rejection)', target: 0.4 },
    { scenario: results.mixed, title: '3. Mixed traffic (10 % failures)', target: 1.4 },
  ].filter((g) => g.scenario !== undefined);
  const values = groups.flatMap((g) => g.scenario.rows.map((r) => r.ratioToMinimal.median));
  const lo = Math.min(0.25, 2 ** Math.floor(Math.log2(Math.min(...values))));
  const hi = Math.max(2, 2 ** Math.ceil(Math.log2(Math.max(...values))));

  const W = 860;
  const labelW = 290;
  const left = labelW + 10;
  const right = W - 70;
  const barH = 16;
  const gap = 6;
  const x = (v) =>
    left + ((Math.log2(v) - Math.log2(lo)) / (Math.log2(hi) - Math.log2(lo))) * (right - left);
  const parts = [];
  let y = 40;
  const ticks = [];
  for (let t = lo; t <= hi * 1.0001; t *= 2) ticks.push(t);
  const fmt = (v) => (v >= 1 ? `${+v.toFixed(0)}x` : `${+v.toFixed(3)}x`);

  for (const g of groups) {
    parts.push(`<text x="10" y="${y + 12}" class="h">${escapeXml(g.title)}</text>`);
    y += 22;
    const top = y;
    for (const r of g.scenario.rows) {
      const v = r.ratioToMinimal.median;
      const x1 = x(1);
      const xv = x(Math.min(Math.max(v, lo), hi));
      const cls = r.id.startsWith('ours')
        ? 'ours'
        : r.id === 'minimal'
          ? 'min'
          : r.id.startsWith('raw')
            ? 'raw'
            : 'peer';
      parts.push(
        `<text x="${labelW}" y="${y + barH - 4}" class="l" text-anchor="end">${escapeXml(r.label)}</text>`,
      );
      const bx = Math.min(x1, xv);
      const bw = Math.max(Math.abs(xv - x1), 1.5);
      parts.push(
        `<rect x="${bx.toFixed(1)}" y="${y}" width="${bw.toFixed(1)}" height="${barH}" class="${cls}"/>`,
      );
      const tx = v >= 1 ? xv + 4 : xv - 4;
      parts.push(
        `<text x="${tx.toFixed(1)}" y="${y + barH - 4}" class="v" text-anchor="${v >= 1 ? 'start' : 'end'}">${v.toFixed(2)}x</text>`,
      );
      y += barH + gap;
    }
    // The deadline rows are judged against opossum's defaults, not a fixed ratio: no target line.
    if (g.target !== undefined) {
      const tx = x(g.target);
      parts.push(
        `<line x1="${tx.toFixed(1)}" y1="${top - 4}" x2="${tx.toFixed(1)}" y2="${y - gap + 4}" class="target"/>`,
      );
      parts.push(
        `<text x="${(tx + 3).toFixed(1)}" y="${top - 6}" class="t">target for ours ≤ ${g.target}x</text>`,
      );
    }
    y += 18;
  }
  const axisY = y;
  const grid = ticks.map(
    (t) =>
      `<line x1="${x(t).toFixed(1)}" y1="30" x2="${x(t).toFixed(1)}" y2="${axisY}" class="${t === 1 ? 'one' : 'grid'}"/>`,
  );
  const tickLabels = ticks.map(
    (t) =>
      `<text x="${x(t).toFixed(1)}" y="${axisY + 14}" class="v" text-anchor="middle">${fmt(t)}</text>`,
  );
  const H = axisY + 50;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="system-ui, -apple-system, Segoe UI, sans-serif">`,
    '<style>',
    '  .h { font-size: 14px; font-weight: 600; fill: #222; }',
    '  .l { font-size: 12px; fill: #333; }',
    '  .v, .t { font-size: 11px; fill: #555; }',
    '  .ours { fill: #d9480f; } .min { fill: #868e96; } .raw { fill: #ced4da; } .peer { fill: #4c6ef5; }',
    '  .grid { stroke: #e9ecef; } .one { stroke: #495057; stroke-width: 1.2; }',
    '  .target { stroke: #d9480f; stroke-dasharray: 4 3; stroke-width: 1.2; }',
    '</style>',
    `<rect width="${W}" height="${H}" fill="#fff"/>`,
    `<text x="10" y="20" class="h">Cost per call relative to minimal (median of per-round ratios, log scale; left of 1x is cheaper)</text>`,
    ...grid,
    ...parts,
    ...tickLabels,
    `<text x="10" y="${H - 10}" class="v">${escapeXml(`${results.environment.date} · Node ${results.environment.node} · ${results.environment.cpuModel}`)}</text>`,
    '</svg>',
    '',
  ].join('\n');
}
