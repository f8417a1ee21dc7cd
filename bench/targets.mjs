// The targets of issue 5 and how each is judged from a run's results.

import { DEFAULT_DEADLINE } from './implementations.mjs';

const pass = (ok) => (ok ? 'pass' : 'fail');
const row = (scenario, id) => scenario?.rows.find((r) => r.id === id || r.kind === id);

export function evaluateTargets(results) {
  const { closed, deadline, open, mixed, footprint, halfOpen, hygiene, nest, sharedRedis } =
    results;
  const targets = [];
  // Issue 18's limits are a few hundredths apart from the figures: they are shown to three places.
  const ratioTarget = (id, label, scenario, rowId, limit, digits = 2) => {
    const r = row(scenario, rowId);
    if (r === undefined) return targets.push({ id, label, status: 'not run' });
    const value = r.ratioToMinimal.median;
    targets.push({
      id,
      label,
      limit,
      value,
      shown: `${value.toFixed(digits)}x (p25–p75 ${r.ratioToMinimal.p25.toFixed(digits)}–${r.ratioToMinimal.p75.toFixed(digits)})`,
      status: pass(value <= limit),
    });
  };
  ratioTarget('closed', 'closed path at most 1.3x minimal', closed, 'ours', 1.3);
  {
    // With the default deadline, against the peer that also gives every call one.
    const ours = row(deadline, 'oursDefaults');
    const opossum = row(deadline, 'opossumDefaults');
    const label = `closed path with the default ${DEFAULT_DEADLINE} deadline at most opossum (defaults)`;
    if (ours === undefined || opossum === undefined)
      targets.push({ id: 'closed-deadline', label, status: 'not run' });
    else {
      const value = ours.ratioToMinimal.median / opossum.ratioToMinimal.median;
      targets.push({
        id: 'closed-deadline',
        label,
        limit: 1,
        value,
        shown: `${value.toFixed(2)}x opossum`,
        status: pass(value <= 1),
      });
    }
  }
  {
    // Issue 26: the default deadline against the same path without one, from the steady state of 1b
    // (see its note) over scenario 1 (separate processes, each against its own `minimal`).
    const withDeadline = row(deadline, 'oursDefaults')?.steady;
    const without = row(closed, 'ours');
    const label = `closed path with the default ${DEFAULT_DEADLINE} deadline at most 2x the same path without (issue 26; 1b steady state over 1)`;
    if (withDeadline === undefined || without === undefined)
      targets.push({ id: 'deadline-26', label, status: 'not run' });
    else {
      const value = withDeadline.ratioToMinimal.median / without.ratioToMinimal.median;
      targets.push({
        id: 'deadline-26',
        label,
        limit: 2,
        value,
        shown: `${value.toFixed(2)}x (1b steady ${withDeadline.ratioToMinimal.median.toFixed(2)}x / 1 ${without.ratioToMinimal.median.toFixed(2)}x)`,
        status: pass(value <= 2),
      });
    }
  }
  ratioTarget('open', 'rejection at most 0.4x minimal', open, 'ours', 0.4);
  ratioTarget('mixed', 'mixed traffic at most 1.4x minimal', mixed, 'ours', 1.4);
  // Issue 18: closer to the floor.
  ratioTarget('closed-18', 'closed path at most 1.10x minimal (issue 18)', closed, 'ours', 1.1, 3);
  ratioTarget(
    'open-18',
    'rejection at most 0.22x minimal (issue 18; raw Promise.reject of an existing error about 0.20x)',
    open,
    'ours',
    0.22,
    3,
  );
  ratioTarget('mixed-18', 'mixed traffic at most 1.25x minimal (issue 18)', mixed, 'ours', 1.25, 3);

  const growth = mixed?.growth.find((g) => g.large === 'ours10k');
  if (growth === undefined)
    targets.push({
      id: 'growth',
      label: 'cost growth from 2,000 to 10,000 at most 1.1x',
      status: 'not run',
    });
  else {
    const value = growth.ratio.median;
    targets.push({
      id: 'growth',
      label: 'cost growth from 2,000 to 10,000 at most 1.1x',
      limit: 1.1,
      value,
      shown: `${value.toFixed(2)}x`,
      status: pass(value <= 1.1),
    });
  }

  const bytesTarget = (id, label, kind, limit) => {
    const r = row(footprint, kind);
    if (r === undefined) return targets.push({ id, label, status: 'not run' });
    // A breaker may allocate on first use: the larger of the two counts.
    const value = Math.max(r.bytesPerBreaker, r.bytesPerBreakerUsed);
    targets.push({
      id,
      label,
      limit,
      value,
      shown: `${Math.round(value)} B`,
      status: pass(value <= limit),
    });
  };
  bytesTarget(
    'bytes-count',
    'at most 1,000 bytes per breaker, count window of 100',
    'ours-count-100',
    1_000,
  );
  bytesTarget(
    'bytes-time',
    'at most 1,000 bytes per breaker, time window of 10 buckets',
    'ours-time-10',
    1_000,
  );
  bytesTarget('bytes-child', 'at most 600 bytes per idle per-key child', 'per-key-child', 600);
  bytesTarget(
    'bytes-count-18',
    'at most 600 bytes per idle breaker, count window of 100 (issue 18)',
    'ours-count-100',
    600,
  );
  bytesTarget(
    'bytes-time-18',
    'at most 600 bytes per idle breaker, time window of 10 buckets (issue 18)',
    'ours-time-10',
    600,
  );

  const ours = footprint?.rows.filter((r) => r.target) ?? [];
  if (ours.length === 0)
    targets.push({ id: 'timers', label: 'zero timers per breaker', status: 'not run' });
  else {
    const value = Math.max(...ours.map((r) => r.timersPerBreaker));
    targets.push({
      id: 'timers',
      label: 'zero timers per breaker',
      limit: 0,
      value,
      shown: String(value),
      status: pass(value === 0),
    });
  }

  for (const budget of [1, 3]) {
    const r = row(halfOpen, `ours-${budget}`);
    const label = `half-open admits exactly the budget (${budget})`;
    if (r === undefined) targets.push({ id: `half-open-${budget}`, label, status: 'not run' });
    else {
      const ok =
        r.reachedWhileHalfOpen === budget &&
        r.reachedInTotal === budget &&
        r.rejected === halfOpen.concurrent - budget;
      targets.push({
        id: `half-open-${budget}`,
        label,
        value: r.reachedInTotal,
        shown: `${r.reachedInTotal} of ${halfOpen.concurrent}`,
        status: pass(ok),
      });
    }
  }

  const oursHygiene = hygiene?.rows.filter((r) => r.ours) ?? [];
  if (oursHygiene.length === 0)
    targets.push({
      id: 'hygiene',
      label: 'every hygiene case exits on its own',
      status: 'not run',
    });
  else {
    const exited = oursHygiene.filter((r) => r.exited).length;
    targets.push({
      id: 'hygiene',
      label: 'every hygiene case exits on its own',
      value: exited,
      shown: `${exited} of ${oursHygiene.length}`,
      status: pass(exited === oursHygiene.length),
    });
  }

  if (nest === undefined)
    targets.push({
      id: 'decorator',
      label: 'decorator at most 1.15x a direct execute',
      status: 'not run',
    });
  else if (nest.status !== 'measured')
    targets.push({
      id: 'decorator',
      label: 'decorator at most 1.15x a direct execute',
      limit: 1.15,
      status: 'pending',
      shown: nest.short,
    });
  else {
    const { median: value, p25, p75 } = nest.decoratorRatio;
    const shown = `${value.toFixed(2)}x (p25–p75 ${p25.toFixed(2)}–${p75.toFixed(2)})`;
    targets.push({
      id: 'decorator',
      label: 'decorator at most 1.15x a direct execute',
      limit: 1.15,
      value,
      shown,
      status: pass(value <= 1.15),
    });
  }

  // Issue 6, optional: measured only where a redis-server is on PATH.
  const sharedLabel =
    'closed path shared on Redis at most 1.2x in-memory (issue 6; needs redis-server)';
  if (sharedRedis === undefined)
    targets.push({ id: 'shared-redis', label: sharedLabel, status: 'not run' });
  else if (sharedRedis.skipped !== undefined)
    targets.push({
      id: 'shared-redis',
      label: sharedLabel,
      status: 'skipped',
      shown: sharedRedis.skipped,
    });
  else {
    const { value, limit, status } = sharedRedis.target;
    const spread = sharedRedis.rows.find((r) => r.id === 'shared').ratioToMemory;
    targets.push({
      id: 'shared-redis',
      label: sharedLabel,
      limit,
      value,
      shown: `${value.toFixed(2)}x (p25–p75 ${spread.p25.toFixed(2)}–${spread.p75.toFixed(2)})`,
      status,
    });
  }
  return targets;
}
