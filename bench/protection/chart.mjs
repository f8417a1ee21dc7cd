// One SVG per scenario: goodput (successful calls/s, by arrival) and the load
// on the dependency (calls/s it received) over time, a line per implementation.

const COLORS = ['#888888', '#d62728', '#ff7f0e', '#9467bd', '#1f77b4', '#8c564b', '#2ca02c'];
const WIDTH = 760;
const PANEL = 190;
const LEFT = 50;
const RIGHT = 210;

const escape = (text) =>
  String(text).replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

/** Per-second rates from per-bucket counts. */
function perSecond(counts, bucketMs) {
  const per = Math.round(1000 / bucketMs);
  const out = [];
  for (let i = 0; i + per <= counts.length; i += per) {
    let total = 0;
    for (let j = i; j < i + per; j++) total += counts[j];
    out.push(total);
  }
  return out;
}

function panel(lines, top, title, max, axis = SECONDS) {
  const plotWidth = WIDTH - LEFT - RIGHT;
  const seconds = Math.max(...lines.map((line) => line.values.length));
  const x = (i) => LEFT + (i / Math.max(1, seconds - 1)) * plotWidth;
  const y = (v) => top + PANEL - (Math.min(v, max) / max) * PANEL;
  const parts = [
    `<text x="${LEFT}" y="${top - 8}" font-size="12">${escape(title)}</text>`,
    `<rect x="${LEFT}" y="${top}" width="${plotWidth}" height="${PANEL}" fill="none" stroke="#ccc"/>`,
    `<text x="${LEFT - 6}" y="${top + 4}" font-size="10" text-anchor="end">${max}</text>`,
    `<text x="${LEFT - 6}" y="${top + PANEL}" font-size="10" text-anchor="end">0</text>`,
  ];
  for (let s = 0; s < seconds; s += axis.every) {
    parts.push(
      `<text x="${x(s)}" y="${top + PANEL + 12}" font-size="10" text-anchor="middle">${escape(axis.text(s))}</text>`,
    );
  }
  lines.forEach((line, i) => {
    const points = line.values.map((v, t) => `${x(t).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
    parts.push(
      `<polyline fill="none" stroke="${COLORS[i % COLORS.length]}" stroke-width="1.2" points="${points}"/>`,
    );
  });
  return parts.join('\n');
}

/** The x axis of a chart over time: a tick every 30 s. */
const SECONDS = { every: 30, text: (s) => `${s} s` };

/**
 * Panels stacked, one line per label in each, with a legend: `panels` is
 * `[{ title, max, lines }]`, `lines[i]` the values of `labels[i]`, one a
 * second unless `axis` (`{ every, text(i) }`: a tick every `every` values)
 * says what they are.
 */
export function panelsChart(title, labels, panels, axis = SECONDS) {
  const height = panels.length * (PANEL + 40) + 30;
  const legend = labels.map((text, i) => {
    const yy = 50 + i * 30;
    const label = text.length > 34 ? `${text.slice(0, 33)}…` : text;
    return `<rect x="${WIDTH - RIGHT + 12}" y="${yy - 9}" width="12" height="3" fill="${COLORS[i % COLORS.length]}"/><text x="${WIDTH - RIGHT + 28}" y="${yy}" font-size="10">${escape(label)}</text>`;
  });
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" font-family="sans-serif">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${LEFT}" y="18" font-size="14" font-weight="bold">${escape(title)}</text>`,
    ...panels.map((p, i) =>
      panel(
        p.lines.map((values) => ({ values })),
        45 + i * (PANEL + 40),
        p.title,
        p.max,
        axis,
      ),
    ),
    ...legend,
    '</svg>',
    '',
  ].join('\n');
}

/** `rows`: `[{ label, series }]` from `simulate()`. */
export function chart(title, rows) {
  const goodput = rows.map((row) => perSecond(row.series.successes, row.series.bucketMs));
  const load = rows.map((row) => perSecond(row.series.depCalls, row.series.bucketMs));
  const loadMax = Math.max(100, ...load.flat());
  return panelsChart(
    title,
    rows.map((row) => row.label),
    [
      { title: 'goodput: successful calls/s (by arrival)', max: 150, lines: goodput },
      {
        title: 'load on the dependency: calls/s it received',
        max: Math.ceil(loadMax / 50) * 50,
        lines: load,
      },
    ],
  );
}
