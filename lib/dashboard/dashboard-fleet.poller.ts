import type { BreakerStore } from '../core/index.js';
import { FLEET_POLL_MS } from './circuit-breaker-dashboard.constants.js';
import { circuitBreakerDashboardMessages as messages } from './circuit-breaker-dashboard.messages.js';
import type { FleetBreaker, FleetReplica } from '../interfaces/fleet-view.interface.js';
import type { DashboardFleetView } from './dashboard-view.interface.js';

/** What a store with a registry of replicas answers (`RedisBreakerStore.fleetView()`), read without trusting its shape. */
interface FleetViewReply {
  replicas?: unknown;
  breakers?: unknown;
}

/** A store that lists the replicas reporting to it. */
interface FleetViewStore {
  fleetView(): Promise<FleetViewReply>;
}

/** Whether `store` lists the fleet's replicas (`RedisBreakerStore` does, any `BreakerStore` may). @internal */
export function hasFleetView(
  store: BreakerStore | undefined,
): store is BreakerStore & FleetViewStore {
  return typeof (store as Partial<FleetViewStore> | undefined)?.fleetView === 'function';
}

/**
 * Reads the store's fleet view at most every `FLEET_POLL_MS`, however many
 * pages are open and however often their snapshots are taken: a snapshot shows
 * the last answer (or the last failure) and, when it is due, asks for the next.
 * Only while pages are open, since snapshots are taken only then.
 *
 * @internal
 */
export class DashboardFleetPoller {
  private view: DashboardFleetView = { replicas: [], breakers: {} };
  private askedAt = Number.NEGATIVE_INFINITY;
  private reading = false;

  constructor(
    private readonly store: FleetViewStore,
    private readonly now: () => number,
    private readonly everyMs = FLEET_POLL_MS,
  ) {}

  /** The last answer, asking for the next when due. Never throws. */
  current(): DashboardFleetView {
    const now = this.now();
    if (!this.reading && now - this.askedAt >= this.everyMs) {
      this.askedAt = now;
      this.reading = true;
      this.read().finally(() => (this.reading = false));
    }
    return this.view;
  }

  private async read(): Promise<void> {
    try {
      const reply = await this.store.fleetView();
      this.view = { at: this.now(), ...viewOf(reply) };
    } catch (error) {
      // The last answer stays on the page, with why it is not fresh.
      const { error: _previous, ...last } = this.view;
      this.view = { ...last, error: messages.fleetViewFailed(error) };
    }
  }
}

/** The reply as the page shows it: only the fields it knows, of the types it expects. */
function viewOf(reply: FleetViewReply): Omit<DashboardFleetView, 'at'> {
  const replicas: FleetReplica[] = [];
  if (Array.isArray(reply.replicas))
    for (const raw of reply.replicas as Record<string, unknown>[]) {
      if (typeof raw?.instanceId !== 'string') continue;
      replicas.push({
        instanceId: raw.instanceId,
        lastSeenAt: typeof raw.lastSeenAt === 'number' ? raw.lastSeenAt : 0,
        ageMs: typeof raw.ageMs === 'number' ? raw.ageMs : 0,
        shared: raw.shared === true,
        notClosed: { ...(raw.notClosed as FleetReplica['notClosed']) },
        breakers: typeof raw.breakers === 'number' ? raw.breakers : 0,
        ...(raw.truncated === true ? { truncated: true } : {}),
      });
    }
  const breakers: Record<string, FleetBreaker> = {};
  if (typeof reply.breakers === 'object' && reply.breakers !== null)
    for (const [name, raw] of Object.entries(reply.breakers as Record<string, FleetBreaker>))
      breakers[name] = {
        shared: raw.shared,
        replicasOpen: raw.replicasOpen,
        replicasHalfOpen: raw.replicasHalfOpen,
        replicasNotClosed: raw.replicasNotClosed,
      };
  return { replicas, breakers };
}
