import { afterEach, describe, expect, it } from 'vitest';
import type { DashboardFleet } from '../../lib/dashboard/index.js';
import { dashboardFleetLine } from '../../lib/dashboard/page/dashboard-fleet-line.js';

// The page's fleet line outside a browser: a few elements' worth of DOM, enough for the text it writes.
interface FakeElement {
  dataset: Record<string, string>;
  textContent: string;
  hidden: boolean;
  children: FakeElement[];
  appendChild(child: FakeElement): FakeElement;
  replaceChildren(): void;
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
    replaceChildren() {
      this.children = [];
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
