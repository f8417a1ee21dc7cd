// The sections of `npm run bench:protection`: each scenario (its outage length
// swept where a recovery is measured) and the rows run through it. Shared by
// run.mjs and current-peers.mjs (the peers' newest versions under another
// Node), so that both run the same scenarios; a row that is not given (this
// package's, in current-peers.mjs) is left out.

import * as scenarios from './scenarios.mjs';

/**
 * `peers` as in peers.mjs (`none`, `opossum`, `cockatielConsecutive`,
 * `cockatielSampling`), `ours` as in ours.mjs, or `{}` for no row of this package.
 */
export function protectionPlan({ quick, peers, ours }) {
  const common = [
    peers.none,
    peers.opossum,
    peers.cockatielConsecutive,
    peers.cockatielSampling,
    ours.ours,
    ours.oursPrevious,
  ];
  // Incident lengths swept wherever a recovery is measured: a 30 s open period's
  // phase must not decide the time to recover.
  const sweep = quick ? scenarios.OUTAGE_SWEEP_QUICK_MS : scenarios.OUTAGE_SWEEP_MS;
  const plan = [
    {
      title: '1. Hard outage (connection refused), outage length swept',
      runs: sweep.map((ms) => scenarios.hardOutage(ms)),
      rows: [...common, ours.oursHealthCheck],
    },
    {
      title: '2a. Hung dependency, length swept, the 1 s client timeout aborts the call',
      runs: sweep.map((ms) => scenarios.hung('abort', ms)),
      rows: [...common, ours.oursHealthCheck],
    },
    {
      title:
        '2b. Hung dependency, length swept, the caller stops waiting at 1 s but the call is not cancelled',
      runs: sweep.map((ms) => scenarios.hung('race', ms)),
      rows: [...common, ours.oursHealthCheck],
    },
    {
      title: '3. Brownout: 30% 5xx, latency x3, 2 min',
      runs: [scenarios.brownout()],
      rows: common,
    },
    {
      title: '4. Slow dependency: latency x10, no errors, 60 s',
      runs: [scenarios.slow()],
      rows: common,
    },
    {
      title: '5. Down 30 s, then back at 10% of the load, that period swept',
      runs: sweep.map((ms) => scenarios.reducedCapacity(ms)),
      rows: [...common, ours.oursRampUp],
    },
    {
      title: '6. Retry storm: capacity at 70% of the load for 10 s, callers retry 3 times at once',
      runs: [scenarios.retryStorm()],
      rows: [...common, ours.oursRetry],
    },
    {
      title:
        '7. Overload: capacity at 50% of the load, the excess answered 429 + Retry-After 2 s, 60 s',
      runs: [scenarios.overloaded()],
      rows: common,
    },
    {
      title:
        '8. One bad host of five (40% 5xx, +100 ms) for 2 min; a breaker per host, the balancer skips a host whose breaker rejects',
      runs: [scenarios.badHost()],
      rows: [
        peers.none,
        peers.opossum,
        peers.cockatielConsecutive,
        peers.cockatielSampling,
        ours.oursPerKey,
      ],
    },
    {
      title:
        '9. A fleet of 10 replicas (10 calls/s each), the hard outage of 1, outage length swept; a breaker per replica',
      runs: sweep.map((ms) => scenarios.fleetOutage(ms)),
      rows: [...common, ours.oursShared],
    },
  ];
  return plan.map((section) => ({ ...section, rows: section.rows.filter(Boolean) }));
}
