// Scenario 1c: the closed path with fault injection built in but unused
// (issue 14), side by side with a baseline build of the package when
// BENCH_BASELINE names its checkout (built: its dist/core/index.js is loaded).
//
// Fault injection must cost the closed path nothing while no fault is injected:
// the fault sits in the object the closed path already checks for overload
// pressure, and a faulted admission comes back where rejections do. The rows:
// `ours` as scenario 1 builds it; the same with `faultInjection: true` in its
// deps; one that had a fault injected and removed before the run (back on the
// plain path); and the baseline build's `ours`, in the same process and the
// same interleaved rounds, so that the ratio between the two builds is
// measured side by side, not across runs. In a child process of its own: the
// injection made before the run must not shape the code scenario 1 measures.

import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { runInChild } from '../harness.mjs';
import { Breaker, DEFAULT_DEADLINE, implementations } from '../implementations.mjs';
import { resolvingCalls } from './closed-path.mjs';

const SELF = fileURLToPath(import.meta.url);

/** `deadline`: the same rows with the default deadline per call (its own child: the two paths must not share code). */
async function faultInjectionCost({ deadline = false, ...timing }) {
  const base = deadline ? {} : { timeoutMs: false };
  const extra = {
    oursInjectable: {
      label: 'ours, faultInjection: true, none injected',
      create: () => new Breaker('bench', base, { faultInjection: true }),
      call: 'target.execute(dep)',
    },
    oursAfterRemoval: {
      label: 'ours, a fault injected then removed',
      create: () => {
        const breaker = new Breaker('bench', base, { faultInjection: true });
        breaker.injectFault({ fail: true }).remove();
        return breaker;
      },
      call: 'target.execute(dep)',
    },
  };
  const baseline = process.env.BENCH_BASELINE;
  if (baseline) {
    const { Breaker: BaselineBreaker } = await import(
      pathToFileURL(resolve(baseline, 'dist/core/index.js')).href
    );
    extra.baseline = {
      label: `baseline build's ours (${process.env.BENCH_BASELINE_LABEL ?? baseline})`,
      create: () => new BaselineBreaker('bench', base),
      call: 'target.execute(dep)',
    };
  }
  // With a deadline, the baseline against one row of ours: two rows of one class against one of another was lopsided.
  if (deadline) for (const id of ['oursInjectable', 'oursAfterRemoval']) delete extra[id];
  Object.assign(implementations, extra);
  return resolvingCalls(
    ['minimal', deadline ? 'oursDefaults' : 'ours', ...Object.keys(extra)],
    {
      title: `Closed path${deadline ? ` with the default ${DEFAULT_DEADLINE} deadline` : ''}, fault injection unused`,
      description: `await b.execute(() => Promise.resolve(1)), fault injection built in but unused${baseline ? ', against a baseline build' : ' (set BENCH_BASELINE to a built checkout to add its row)'}`,
    },
    timing,
  );
}

/** Both paths, each in a child process of its own. */
export async function faultInjectionIsolated(options) {
  return {
    plain: await runInChild(SELF, options),
    deadline: await runInChild(SELF, { ...options, deadline: true }),
  };
}

if (process.argv[1] === SELF) {
  const result = await faultInjectionCost(JSON.parse(process.argv[2]));
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
