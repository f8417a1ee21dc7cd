// Run by footprint.mjs as `node --expose-gc footprint-child.mjs <kind> <count>`.
// Prints one JSON line: the heap and array-buffer bytes per breaker over `count`
// breakers, just created and again after one call each, and the timers each
// breaker creates.

import { createHook } from 'node:async_hooks';
import {
  Breaker,
  cockatielBreaker,
  ConsecutiveBreaker,
  CountBreaker,
  handleAll,
  MinimalBreaker,
  OpossumBreaker,
} from '../implementations.mjs';

const action = () => Promise.resolve(1);
// Breakers built from one configuration share its options object, as an application's would.
const TIME_WINDOW = { window: { type: 'time', durationMs: 10_000, buckets: 10 } };

// The family whose children the per-key kind makes; a fresh one per phase (warm-up, measurement, timer sample), see SETUP.
let family;

export const MAKERS = {
  'ours-count-100': (i) => new Breaker(`svc-${i}`),
  'ours-time-10': (i) => new Breaker(`svc-${i}`, TIME_WINDOW),
  // An idle child of a per-key family: its breaker (which shares the family's
  // options and derives its name), its own key string and its entry in the family's Map.
  'per-key-child': (i) => family.forKey(`key-${i}`),
  minimal: () => new MinimalBreaker(),
  'opossum-defaults': (i) => new OpossumBreaker(action, { name: `svc-${i}` }),
  'cockatiel-consecutive': () =>
    cockatielBreaker(handleAll, { halfOpenAfter: 30_000, breaker: new ConsecutiveBreaker(5) }),
  'cockatiel-count-100': () =>
    cockatielBreaker(handleAll, {
      halfOpenAfter: 30_000,
      breaker: new CountBreaker({ threshold: 0.5, size: 100 }),
    }),
};

/**
 * Run before each phase with the number of breakers it is about to make. The
 * per-key kind gets a fresh family (default options, count window of 100) with
 * room for them all plus 10, so that no child is evicted; the measured family is
 * created before the first heap reading, so only its children and the growth of
 * its Map are counted.
 */
const SETUP = {
  'per-key-child': (n) => {
    family = new Breaker('family', { perKey: { maxKeys: n + 10 } });
  },
};

/** One call through each kind of breaker, so that anything allocated on first use is counted too. */
const CALL = {
  'ours-count-100': (b) => b.execute(action),
  'ours-time-10': (b) => b.execute(action),
  'per-key-child': (b) => b.execute(action),
  minimal: (b) => b.execute(action),
  'opossum-defaults': (b) => b.fire(),
  'cockatiel-consecutive': (b) => b.execute(action),
  'cockatiel-count-100': (b) => b.execute(action),
};

const settle = () => {
  for (let i = 0; i < 4; i++) globalThis.gc();
};
const refTimers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

async function measure(kind, count) {
  const make = MAKERS[kind];
  if (make === undefined) throw new Error(`unknown footprint kind ${kind}`);
  if (typeof globalThis.gc !== 'function') throw new Error('run with --expose-gc');
  const setup = SETUP[kind] ?? (() => undefined);
  // Load and warm the code paths first so that only the breakers themselves are counted.
  const warmCount = 1_000;
  setup(warmCount);
  let warm = [];
  for (let i = 0; i < warmCount; i++) warm.push(make(-i - 1));
  warm = undefined;
  const keep = Array.from({ length: count });
  setup(count);
  settle();
  const refBefore = refTimers();
  const before = process.memoryUsage();
  for (let i = 0; i < count; i++) keep[i] = make(i);
  settle();
  const after = process.memoryUsage();
  const refAfter = refTimers();

  // The same breakers after one call each.
  const call = CALL[kind];
  for (let i = 0; i < count; i++) await call(keep[i]);
  await new Promise((resolve) => setImmediate(resolve));
  settle();
  const used = process.memoryUsage();

  // Every timer a breaker creates, ref'd or not (getActiveResourcesInfo lists only ref'd ones).
  const live = new Set();
  const hook = createHook({
    init(id, type) {
      if (type === 'Timeout') live.add(id);
    },
    destroy(id) {
      live.delete(id);
    },
  }).enable();
  const sample = 1_000;
  setup(sample);
  const extra = [];
  for (let i = 0; i < sample; i++) extra.push(make(count + i));
  hook.disable();

  const per = (a, b) => (a - b) / count;
  const familyEntry = kind === 'per-key-child' ? { familyEntryPerChild: mapEntryBytes(count) } : {};
  return {
    ...familyEntry,
    kind,
    count,
    heapUsedPerBreaker: per(after.heapUsed, before.heapUsed),
    arrayBuffersPerBreaker: per(after.arrayBuffers, before.arrayBuffers),
    rssPerBreaker: per(after.rss, before.rss),
    bytesPerBreaker: per(
      after.heapUsed + after.arrayBuffers,
      before.heapUsed + before.arrayBuffers,
    ),
    bytesPerBreakerUsed: per(
      used.heapUsed + used.arrayBuffers,
      before.heapUsed + before.arrayBuffers,
    ),
    timersPerBreaker: live.size / sample,
    refTimersPerBreaker: (refAfter - refBefore) / count,
    kept: keep.length + extra.length,
  };
}

/**
 * What a family's Map entry and key string cost per child on their own: the
 * same keys in a Map of the same size, all pointing at one object. Part of the
 * per-key figure, shown separately so that the breaker's own share is visible.
 */
function mapEntryBytes(count) {
  const shared = {};
  settle();
  const before = process.memoryUsage().heapUsed;
  const map = new Map();
  for (let i = 0; i < count; i++) map.set(`key-${i}`, shared);
  settle();
  const bytes = (process.memoryUsage().heapUsed - before) / count;
  if (map.size !== count) throw new Error('map lost entries');
  return bytes;
}

const [kind, count] = process.argv.slice(2);
process.stdout.write(`${JSON.stringify(await measure(kind, Number(count)))}\n`);
// opossum's intervals are unref'd, but there is no reason to wait for anything.
process.exit(0);
