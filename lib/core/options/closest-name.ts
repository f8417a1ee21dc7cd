/**
 * The defined name a mistyped one most likely meant: the nearest by edit
 * distance (case-insensitive; a swap of two neighbouring letters counts as
 * one edit), if it is near enough to be a typo, the first defined on a tie.
 *
 * @internal
 */
export function closestName(name: string, known: Iterable<string>): string | undefined {
  const wanted = name.toLowerCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    if (candidate === name) continue;
    const distance = editDistance(wanted, candidate.toLowerCase());
    // A third of the longer name, at least 2: "payment"/"payments", "paymnets"/"payments", not "search"/"payments".
    const near = Math.max(2, Math.floor(Math.max(wanted.length, candidate.length) / 3));
    if (distance <= near && distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** Optimal string alignment distance: insertions, deletions, substitutions and adjacent transpositions. */
function editDistance(a: string, b: string): number {
  // Names are short; a bound keeps a pathological one from costing anything noticeable at start-up.
  if (a.length > 256 || b.length > 256) return a === b ? 0 : Infinity;
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) rows.push([i, ...Array.from({ length: b.length }, () => 0)]);
  for (let j = 0; j <= b.length; j++) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d = Math.min(d, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = d;
    }
  }
  return rows[a.length]![b.length]!;
}
