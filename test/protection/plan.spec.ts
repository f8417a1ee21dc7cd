import * as cockatiel from 'cockatiel';
import { describe, expect, it } from 'vitest';
import { oursImplementations } from '../../bench/protection/ours.mjs';
import { peers, peersOf } from '../../bench/protection/peers.mjs';
import { protectionPlan } from '../../bench/protection/plan.mjs';
import * as core from '../../lib/core/index.js';

// bench/protection/current-peers.mjs runs the peers' rows of the plan of
// `npm run bench:protection` against other copies of opossum and cockatiel (their
// newest versions, under Node 22): the same scenarios, only the peers' rows, and
// rows built from the packages it is given.

const PEER_NAMES = ['none', 'opossum', 'cockatielConsecutive', 'cockatielSampling'];

describe('the protection plan without this package (current-peers.mjs)', () => {
  it('runs the same sections and runs as the full plan, with the four peer rows in each', () => {
    for (const quick of [false, true]) {
      const full = protectionPlan({ quick, peers, ours: oursImplementations(core) });
      const peersOnly = protectionPlan({ quick, peers, ours: {} });
      expect(peersOnly.map((s) => s.title)).toEqual(full.map((s) => s.title));
      expect(peersOnly.map((s) => s.runs.map((r) => r.name))).toEqual(
        full.map((s) => s.runs.map((r) => r.name)),
      );
      for (const section of peersOnly)
        expect(section.rows.map((row) => row.name)).toEqual(PEER_NAMES);
    }
    const full = protectionPlan({ quick: false, peers, ours: oursImplementations(core) });
    expect(full.map((s) => s.rows.length)).toEqual([7, 7, 7, 6, 6, 7, 7, 6, 5, 7]);
    expect(full[0].runs.map((r) => r.name)).toEqual([
      'hard outage 60 s',
      'hard outage 67.5 s',
      'hard outage 75 s',
      'hard outage 82.5 s',
    ]);
  });

  it('builds the peer rows from the packages it is given, named by their versions', async () => {
    const built: unknown[] = [];
    class FakeOpossum {
      private readonly action: (fn: unknown) => unknown;
      constructor(action: unknown, options: object) {
        this.action = action as (fn: unknown) => unknown;
        built.push(options);
      }
      fire(fn: unknown): unknown {
        return this.action(fn);
      }
    }
    const rows = peersOf({
      CircuitBreaker: FakeOpossum,
      cockatiel,
      versions: { opossum: '10.0.0', cockatiel: '4.0.0' },
    });
    expect(Object.values(rows).map((row) => row.label)).toEqual([
      'no breaker',
      'opossum 10.0.0, defaults',
      'cockatiel 4.0.0, ConsecutiveBreaker(5), halfOpenAfter 10 s',
      'cockatiel 4.0.0, SamplingBreaker({ threshold: 0.2, duration: 30 s }), halfOpenAfter 10 s, wrapped around timeout(2000, Cooperative)',
    ]);
    const row = rows.opossum.make({});
    expect(built).toEqual([{}]);
    expect(await row.call(async (signal) => (signal === undefined ? 'called' : 'signal'))).toBe(
      'called',
    );
    expect(peers.opossum.label).toBe('opossum 9.0.0, defaults');
    expect(peers.cockatielConsecutive.label).toBe(
      'cockatiel 3.2.1, ConsecutiveBreaker(5), halfOpenAfter 10 s',
    );
  });
});
