import { afterEach, describe, expect, it } from 'vitest';
import type { DashboardFleet } from '../../lib/dashboard/index.js';
import { dashboardFleetLine } from '../../lib/dashboard/page/dashboard-fleet-line.js';
import { dashboardLimiterLine } from '../../lib/dashboard/page/dashboard-limiter-line.js';

// The page's fleet line outside a browser: a few elements' worth of DOM, enough for the text it writes.
interface FakeElement {
  dataset: Record<string, string>;
  textContent: string;
  hidden: boolean;
  children: FakeElement[];
  appendChild(child: FakeElement): FakeElement;
  replaceChildren(...children: FakeElement[]): void;
}
function element(): FakeElement {
  return {
    dataset: {},
    textContent: '',
    hidden: false,
    children: [],
    appendChild(child) {
      this.children.push(child);
      return child;
    },
    replaceChildren(...children: FakeElement[]) {
      this.children = children;
    },
  };
}

const realDocument = (globalThis as { document?: unknown }).document;
afterEach(() => {
  (globalThis as { document?: unknown }).document = realDocument;
});

describe('the dashboard page fleet line', () => {
  it('says a breaker whose Cluster slot is down has a fleet state unknown, and the others as Redis holds them', () => {
    (globalThis as { document?: unknown }).document = { createElement: element };
    const box = element();
    const fleet: DashboardFleet = {
      instanceId: 'a',
      shared: false,
      sharingBreakers: 2,
      sharedNow: 1,
      view: {
        at: 1_000,
        replicas: [
          {
            instanceId: 'a',
            lastSeenAt: 1_000,
            ageMs: 0,
            shared: false,
            notClosed: {},
            breakers: 2,
          },
        ],
        breakers: {
          down: {
            shared: { state: 'unavailable' },
            replicasOpen: 1,
            replicasHalfOpen: 0,
            replicasNotClosed: 1,
          },
          up: {
            shared: { state: 'closed' },
            replicasOpen: 0,
            replicasHalfOpen: 1,
            replicasNotClosed: 1,
          },
        },
      },
    };
    dashboardFleetLine(box as unknown as HTMLElement, fleet);
    const items = box.children.find((c) => c.dataset.fleet === 'breakers')!.children;
    expect(items.map((i) => [i.dataset.state, i.textContent])).toEqual([
      ['unknown', 'down: fleet unknown (its Redis node is down), open on 1 of 1 replicas'],
      ['closed', 'up: fleet closed, open on 0 of 1 replicas, half-open on 1'],
    ]);
  });
});

describe('the dashboard page limiter line', () => {
  it('writes a line per limiter, marks the one shedding, and hides itself without limiters', () => {
    (globalThis as { document?: unknown }).document = { createElement: element };
    const box = element();
    const shedBy = { 'critical-plus': 0, critical: 0, 'sheddable-plus': 0, sheddable: 0 };
    dashboardLimiterLine(box as unknown as HTMLElement, [
      {
        name: 'api',
        algorithm: 'gradient',
        limit: 12,
        inFlight: 12,
        queued: 3,
        maxQueue: 10,
        admitted: 900,
        shed: 42,
        shedBy,
        shedding: true,
      },
      {
        name: 'jobs',
        algorithm: 'fixed',
        limit: 4,
        inFlight: 1,
        queued: 0,
        maxQueue: 0,
        admitted: 7,
        shed: 0,
        shedBy,
        shedding: false,
      },
    ]);
    expect(box.hidden).toBe(false);
    const items = box.children[0]!.children;
    expect(items.map((item) => [item.dataset, item.textContent])).toEqual([
      [
        { limiter: 'api', shedding: 'true' },
        'api: limit 12 (gradient), 12 in flight, 3 queued, 42 shed since start, shedding now',
      ],
      [
        { limiter: 'jobs', shedding: 'false' },
        'jobs: limit 4 (fixed), 1 in flight, 0 queued, 0 shed since start',
      ],
    ]);
    dashboardLimiterLine(box as unknown as HTMLElement, undefined);
    expect(box.hidden).toBe(true);
  });
});
