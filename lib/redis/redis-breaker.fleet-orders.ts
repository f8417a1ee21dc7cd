import type {
  Breaker,
  BreakerOptions,
  ForcedMode,
  ForceOptions,
  StateChangeEvent,
} from '../core/index.js';
import type { FleetReconfigurer } from '../interfaces/fleet-control.interface.js';
import type { RedisBreakerStoreLogger } from './redis-breaker-store-options.interface.js';
import { GENERATION_MAX_LEAD_MS } from './redis-breaker.constants.js';
import type { SharedBreaker } from './redis-breaker.coordinator.js';
import type { ConfigRecord, FleetOrder, ForceRecord } from './redis-breaker.fleet-records.js';
import { redisBreakerMessages as messages } from './redis-breaker.messages.js';
import { nextMoment } from './redis-breaker.moments.js';

/** Where one shared breaker stands with the fleet's orders: made on its first order, most breakers never get one. */
interface Orders {
  /** The generation of the force (or release) applied last. */
  force: number;
  /** The moment (`nextMoment()`) a force order was applied or written here: a read sent before that cannot undo it. */
  forceAt: number;
  /** The breaker holds the fleet's force (not a force of this replica's own). */
  held: boolean;
  /** Which force it holds: a repeated order changes nothing, and one Redis lost is written again. */
  heldOrder: HeldForce | undefined;
  /** Redis was seen to hold (or took) the force applied last: only then is it written again when Redis loses it. */
  forceSeen: boolean;
  config: number;
  configAt: number;
  /** As `forceSeen`, for the fleet's patch. */
  configSeen: boolean;
  /** The fleet's patch as last known: every fleet reconfiguration so far, merged. */
  patch: BreakerOptions | undefined;
  /** Orders of this replica's own on their way to Redis: until they are answered, reads cannot undo them. */
  pending: number;
  /** The last force or release given here, until Redis answers it. */
  mine: OwnForce | undefined;
  /** A fleet force or release was obeyed while an order of this replica's own was on its way (an older one, unless Redis says otherwise). */
  heardWhilePending: boolean;
}

/** A force or release given on this replica, as `RedisFleetControl` hands it back when Redis answers. @internal */
export type OwnForce = HeldForce | { readonly state: 'released' };

/** A fleet force as a breaker holds it. @internal */
export interface HeldForce {
  readonly state: ForcedMode | 'closed';
  readonly reason: string;
  readonly by: string | undefined;
  /** 0: until released. */
  readonly until: number;
}

/** An order this replica holds and Redis no longer does, to be written again. @internal */
export type RestoredOrder =
  | ({ readonly kind: 'force' } & HeldForce)
  | { readonly kind: 'config'; readonly patch: BreakerOptions };

/** What the orders need from the store. @internal */
export interface FleetOrdersLink {
  readonly logger: RedisBreakerStoreLogger | undefined;
  /**
   * Writes again an order Redis lost (a restart without persistence, a key
   * deleted by a repair): every replica that holds it does, as each writes its
   * own transitions again after an outage, and replicas that start later obey it.
   */
  restore(record: SharedBreaker, order: RestoredOrder): void;
  /** Writes next to the fleet's reconfiguration of `generation` why this replica cannot apply it. */
  refuse(record: SharedBreaker, generation: number, message: string): void;
}

/** Without the module: the patch is the breaker's whole options, as `breaker.reconfigure()` takes them. */
const WHOLE_OPTIONS: FleetReconfigurer = {
  apply: (breaker, patch) => breaker.reconfigure(patch),
  merge: (_previous, patch) => patch,
};

/**
 * The replica's side of fleet-wide orders: obeys the fleet's forces,
 * releases and reconfigurations, from signals (the newer generation wins)
 * and from reads (what Redis holds wins, unless this replica gave or obeyed
 * an order since the read went out, so that a late answer never undoes a
 * newer order; this also undoes a forged signal at the next reconcile). An
 * order Redis lost is written again by the replicas that saw Redis hold it,
 * never one that was only heard on the channel.
 *
 * A fleet force replaces whatever force the breaker held; a fleet release
 * ends only the fleet's force, never a `force()` of this replica's own. An
 * order given here is obeyed at once; an older order of another replica
 * heard before Redis answered it (Redis took that one first) gives way to it
 * again once Redis has answered.
 *
 * @internal
 */
export class FleetOrders {
  reconfigurer: FleetReconfigurer = WHOLE_OPTIONS;
  private readonly orders = new WeakMap<SharedBreaker, Orders>();
  /** Set while this replica forces a breaker for the fleet: its transition is the fleet's force. */
  private applying = false;

  constructor(private readonly link: FleetOrdersLink) {}

  /** Every transition of a shared breaker: any of them but the fleet's own force ends the fleet's hold. */
  transitioned(record: SharedBreaker, change: StateChangeEvent): void {
    const orders = this.orders.get(record);
    if (orders !== undefined) orders.held = this.applying && change.reason === 'forced';
  }

  /** An order heard on the channel: obeyed when newer than the last one applied, and not yet known to be the fleet's. */
  apply(record: SharedBreaker, order: FleetOrder): void {
    if (order.generation > record.breaker.clock.now() + GENERATION_MAX_LEAD_MS) return;
    const orders = this.of(record);
    if (order.kind === 'force') {
      if (order.generation <= orders.force) return;
      this.obeyForce(record, orders, order);
      orders.forceSeen = false;
      if (orders.pending > 0) orders.heardWhilePending = true;
    } else if (order.generation > orders.config) {
      this.obeyConfig(record, orders, order);
      orders.configSeen = false;
    }
  }

  /**
   * What a read sent at `sentAt` (a `nextMoment()`) found: `null` for no record
   * (what this replica holds is written again), `undefined` for junk
   * (ignored). Redis holds the truth, unless an order was given or obeyed
   * here since the read went out. An order Redis lost is written again only
   * if Redis was seen to hold it; one that was only heard on the channel is
   * undone (a force) or dropped from the fleet's patch (a reconfiguration
   * stays on this replica, but is never written for the fleet).
   */
  fromHashes(
    record: SharedBreaker,
    force: ForceRecord | null | undefined,
    config: ConfigRecord | null | undefined,
    sentAt: number,
  ): void {
    let orders = this.orders.get(record);
    // The common case, every reconcile: never ordered, and nothing in Redis.
    if (
      orders === undefined &&
      (force ?? undefined) === undefined &&
      (config ?? undefined) === undefined
    )
      return;
    orders ??= this.of(record);
    if (orders.pending > 0) return;
    const lead = record.breaker.clock.now() + GENERATION_MAX_LEAD_MS;
    if (force !== undefined && orders.forceAt < sentAt) {
      if (force === null) {
        const held = orders.heldOrder;
        if (!orders.forceSeen) {
          // Heard, never stored: no replica wrote it (a forged signal). Undone, and the next order of any generation is obeyed.
          if (orders.held) this.releaseHeld(orders, record.breaker);
          orders.force = 0;
        } else if (
          // Redis lost the order (a restart without persistence, a repair): the replicas that hold it write it again.
          orders.held &&
          held !== undefined &&
          (held.until === 0 || held.until > record.breaker.clock.now())
        )
          this.link.restore(record, { kind: 'force', ...held });
      } else if (force.generation === orders.force) {
        orders.forceSeen = true;
      } else if (force.generation <= lead) {
        this.obeyForce(record, orders, force);
        orders.forceSeen = true;
      }
    }
    if (config === undefined || orders.configAt >= sentAt) return;
    if (config === null) {
      if (orders.patch === undefined) return;
      if (orders.configSeen) this.link.restore(record, { kind: 'config', patch: orders.patch });
      else {
        // Heard, never stored: not the fleet's patch, so this replica's next fleet reconfiguration does not carry it.
        orders.patch = undefined;
        orders.config = 0;
      }
    } else if (config.generation === orders.config) orders.configSeen = true;
    else if (config.generation <= lead) {
      this.obeyConfig(record, orders, config);
      orders.configSeen = true;
    }
  }

  // ---------------------------------------------------------------------------
  // This replica's own orders (see RedisFleetControl)

  /** Forces the breaker here for the fleet; throws as `force()` does on bad input, and then nothing changes. Returns the order, for `forceWritten()`. */
  forceHere(record: SharedBreaker, state: ForcedMode | 'closed', options: ForceOptions): OwnForce {
    const orders = this.of(record);
    this.applying = true;
    try {
      record.breaker.force(state, options);
    } finally {
      this.applying = false;
    }
    const { reason, by, untilMs } = options;
    return (orders.heldOrder = orders.mine = { state, reason, by, until: untilMs ?? 0 });
  }

  /** Ends the breaker's force here (whichever it holds: the caller asked for it). Returns the order, for `forceWritten()`. */
  releaseHere(record: SharedBreaker): OwnForce {
    const orders = this.of(record);
    orders.heldOrder = undefined;
    record.breaker.release();
    const order = { state: 'released' } as const;
    orders.mine = order;
    return order;
  }

  /** An order of this replica's own goes out. */
  begin(record: SharedBreaker): Orders {
    const orders = this.of(record);
    orders.pending++;
    return orders;
  }

  /**
   * Redis took this replica's force or release (`mine`; none for an order
   * written again) as `generation`. An order heard meanwhile that Redis
   * took before this one (its generation is lower) must not outlive it here:
   * this replica obeys its own order again.
   */
  forceWritten(record: SharedBreaker, generation: number, mine?: OwnForce): void {
    const orders = this.of(record);
    orders.pending--;
    if (mine !== undefined && mine === orders.mine) {
      orders.mine = undefined;
      if (orders.heardWhilePending && generation > orders.force) this.keep(record, orders, mine);
    }
    if (orders.pending === 0) orders.heardWhilePending = false;
    orders.force = Math.max(orders.force, generation);
    orders.forceAt = nextMoment();
    orders.forceSeen = true;
  }

  /** Redis could not take this replica's force: the breaker holds it as a force of this replica's own. */
  forceNotTold(record: SharedBreaker, mine?: OwnForce): void {
    const orders = this.of(record);
    orders.pending--;
    if (mine !== undefined && mine === orders.mine) orders.mine = undefined;
    if (orders.pending === 0) orders.heardWhilePending = false;
    orders.held = false;
    orders.heldOrder = undefined;
  }

  /** A restored order was answered (or failed: the next read finds it missing again). */
  end(record: SharedBreaker): void {
    this.of(record).pending--;
  }

  /** Redis took (or refused) this replica's reconfiguration; `generation` when it took it. */
  configDone(record: SharedBreaker, generation: number | undefined): void {
    const orders = this.of(record);
    orders.pending--;
    if (generation === undefined) return;
    orders.config = Math.max(orders.config, generation);
    orders.configAt = nextMoment();
    orders.configSeen = true;
  }

  /** Redis holds a reconfiguration of `generation` that is junk: nothing to obey, but the next write replaces it. */
  passConfig(record: SharedBreaker, generation: number): void {
    const orders = this.of(record);
    if (Number.isFinite(generation)) orders.config = generation;
  }

  /** The fleet's patch as this replica last knew it (set before a write, so that the write's own signal is recognised). */
  patchOf(record: SharedBreaker): BreakerOptions | undefined {
    return this.of(record).patch;
  }

  setPatch(record: SharedBreaker, patch: BreakerOptions | undefined): void {
    this.of(record).patch = patch;
  }

  /** The generation of the fleet's reconfiguration as last applied: what a write expects to replace. */
  configGenerationOf(record: SharedBreaker): number {
    return this.of(record).config;
  }

  // ---------------------------------------------------------------------------

  private of(record: SharedBreaker): Orders {
    let orders = this.orders.get(record);
    if (orders === undefined) {
      orders = {
        force: 0,
        forceAt: 0,
        held: false,
        heldOrder: undefined,
        forceSeen: false,
        config: 0,
        configAt: 0,
        configSeen: false,
        patch: undefined,
        pending: 0,
        mine: undefined,
        heardWhilePending: false,
      };
      this.orders.set(record, orders);
    }
    return orders;
  }

  private obeyForce(record: SharedBreaker, orders: Orders, force: ForceRecord): void {
    orders.force = force.generation;
    orders.forceAt = nextMoment();
    const breaker = record.breaker;
    if (force.state === 'released') {
      if (orders.held) this.releaseHeld(orders, breaker);
      return;
    }
    const held = orders.held && sameForce(orders.heldOrder, force);
    if (force.until !== 0 && force.until <= breaker.clock.now()) {
      // Over already: a breaker that holds it ends it by itself, dated when it was due; another fleet force it holds ends now.
      if (orders.held && !held) this.releaseHeld(orders, breaker);
      return;
    }
    if (!held) this.hold(orders, breaker, force as HeldForce);
  }

  /**
   * Puts this replica's own order back in force over an older one heard while
   * it was on its way, unless something else has happened here since (a
   * `force()` or `release()` of this replica's own).
   */
  private keep(record: SharedBreaker, orders: Orders, mine: OwnForce): void {
    const breaker = record.breaker;
    if (mine.state === 'released') {
      if (orders.held) this.releaseHeld(orders, breaker);
      return;
    }
    const order = mine as HeldForce;
    if (orders.held ? sameForce(orders.heldOrder, order) : breaker.snapshot().forced !== undefined)
      return;
    if (order.until === 0 || order.until > breaker.clock.now()) this.hold(orders, breaker, order);
  }

  /** Forces the breaker for the fleet (its transition is the fleet's force). */
  private hold(orders: Orders, breaker: Breaker, order: HeldForce): void {
    this.applying = true;
    try {
      breaker.force(order.state, {
        reason: order.reason,
        ...(order.by === undefined ? {} : { by: order.by }),
        ...(order.until === 0 ? {} : { untilMs: order.until }),
      });
      const { state, reason, by, until } = order;
      orders.heldOrder = { state, reason, by, until };
    } catch {
      // Only a force that ended between the check and now: there is nothing left to obey.
    } finally {
      this.applying = false;
    }
  }

  private releaseHeld(orders: Orders, breaker: Breaker): void {
    orders.held = false;
    orders.heldOrder = undefined;
    breaker.release();
  }

  private obeyConfig(record: SharedBreaker, orders: Orders, config: ConfigRecord): void {
    orders.config = config.generation;
    orders.configAt = nextMoment();
    // The replica that wrote it applied it already.
    if (orders.patch !== undefined && JSON.stringify(orders.patch) === JSON.stringify(config.patch))
      return;
    const previous = orders.patch;
    orders.patch = config.patch;
    try {
      this.reconfigurer.apply(record.breaker, config.patch);
    } catch (error) {
      // Its fleet patch stays the one it applies: a refused record is never merged into its next order, nor written again.
      orders.patch = previous;
      // This replica keeps its options; the others go on with theirs. Said here, and next to the record for whoever looks.
      const message = messages.fleetConfigRefused(
        record.name,
        config.generation,
        config.origin,
        error instanceof Error ? error.message : String(error),
      );
      this.link.logger?.warn(message);
      this.link.refuse(record, config.generation, message);
    }
  }
}

function sameForce(held: HeldForce | undefined, force: HeldForce | ForceRecord): boolean {
  return (
    held !== undefined &&
    held.state === force.state &&
    held.reason === force.reason &&
    (held.by ?? '') === (force.by ?? '') &&
    held.until === force.until
  );
}
