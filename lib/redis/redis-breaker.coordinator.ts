import type {
  Breaker,
  BreakerCoordination,
  BreakerCoordinator,
  StateChangeEvent,
} from '../core/index.js';
import { BREAKER_DEFAULTS } from '../core/index.js';
import { timerDelay } from '../core/calls/timer-delay.js';
import {
  GENERATION_MAX_LEAD_MS,
  GENERATION_TRUSTED_LEAD_MS,
  PERMIT_CLAIM_MS,
} from './redis-breaker.constants.js';
import {
  longestOpenMs,
  permitMarginMs,
  permitTtlMs,
  permitWaitMs,
} from './redis-breaker.durations.js';
import { breakerKeys, type BreakerKeys } from './redis-breaker.keys.js';
import { nextMoment } from './redis-breaker.moments.js';
import type { FleetState } from './redis-breaker.signal.js';

/** A transition of this replica's own that the fleet must hear about. @internal */
export type WriteOp =
  /** Opened by its own evidence (`reopen`: its fleet probe failed). */
  | {
      readonly kind: 'open';
      readonly openUntil: number;
      readonly at: number;
      readonly reopen: boolean;
    }
  /** Its probe succeeded. */
  | { readonly kind: 'close'; readonly at: number }
  /** Reset by hand: its report no longer holds. */
  | { readonly kind: 'withdraw' };

const NONE = 0;
const REQUESTING = 1;
const WON = 2;
const LOST = 3;
type Permit = typeof NONE | typeof REQUESTING | typeof WON | typeof LOST;

/**
 * What the coordinator knows about one shared breaker: the fleet's state as
 * last heard, and where this replica stands with the fleet's probe permit.
 *
 * @internal
 */
export class SharedBreaker {
  readonly name: string;
  readonly keys: BreakerKeys;
  /** `'auto'`: from the replicas that report (see `quorumOf`). */
  readonly quorum: number | 'auto';
  /** The newest fleet generation applied; older signals and reads are ignored. */
  generation = 0;
  fleetOpen = false;
  /** The local breaker's open-until time as last known (its clock). */
  openUntil = 0;
  /** When this replica last opened on its own evidence: a close verdict older than that must not close it. */
  ownOpenAt = Number.NEGATIVE_INFINITY;
  permit: Permit = NONE;
  /** While the permit is won or lost: until when that answer holds (the breaker's clock). */
  permitUntil = 0;
  /** When the last permit request was sent (the breaker's clock): Redis starts the permit's expiry no earlier. */
  permitAskedAt = 0;
  /** Counts permit requests, so that the answer to a renewal of an earlier episode is recognised as stale. */
  episode = 0;
  /** The latest own transition: replayed when sharing resumes after an outage. */
  lastOwn: WriteOp | undefined;
  /** The moment (`nextMoment()`) the fleet's state applied last came from a signal; 0 once a read of the state hash backs it. */
  heardAt = 0;
  /** The breaker's open period is the fleet's, adopted (reason `shared-open`), not one of its own evidence. */
  adopted = false;
  /** The open-until (its clock) before a signal not yet read back extended it: what it returns to if the signal is forged. */
  extendedFrom: number | undefined;

  constructor(
    readonly breaker: Breaker,
    prefix: string,
  ) {
    this.name = breaker.name;
    this.keys = breakerKeys(prefix, breaker.name);
    const share = breaker.config.share;
    this.quorum =
      share === undefined || share === false ? BREAKER_DEFAULTS.shareQuorum : share.quorum;
  }
}

/**
 * What the coordinator needs from the store. Nothing here is awaited by a
 * call: writes are queued, permit requests answer later through `onPermit()`.
 *
 * @internal
 */
export interface FleetLink {
  /** Whether `record` shares now: the store reaches Redis, and (with a record) its keys are not being repaired. Otherwise it decides locally. */
  isShared(record?: SharedBreaker): boolean;
  /** Store errors that concern `record`: the store's own, and those of its keys. */
  storeErrors(record?: SharedBreaker): number;
  write(record: SharedBreaker, op: WriteOp): void;
  /** Asks for the fleet's probe permit of `record` for `ttlMs`; the answer comes through `onPermit()`. */
  requestPermit(record: SharedBreaker, ttlMs: number): void;
  /** Extends the permit this replica holds to `ttlMs` (its probes have started); the answer comes through `onRenewed()`. */
  renewPermit(record: SharedBreaker, ttlMs: number): void;
  /** Every transition of a shared breaker, for the fleet's orders (whether it still holds the fleet's force). */
  transitioned(record: SharedBreaker, change: StateChangeEvent): void;
  /** A breaker is followed from now on (sharded pub/sub subscribes to its channel). */
  registered?(record: SharedBreaker): void;
}

/**
 * The local half of shared state: decides from what this replica already
 * knows, synchronously, and leaves every exchange with Redis to the store.
 *
 * - Own transitions become writes (reports, verdicts); adopted ones
 *   (`shared-open`, `shared-close`) never do, so an adoption is never counted
 *   as evidence.
 * - The fleet's state (from signals, reads and hydration) is adopted when it
 *   is newer than what was last applied.
 * - While the fleet is open, only the holder of the fleet's probe permit
 *   half-opens; the permit is asked for when the open period ends (by one
 *   timer for the whole store), so that the first calls after it already find
 *   the answer.
 * - Per-key children are not shared: they decide locally (their family is).
 *
 * @internal
 */
export class RedisBreakerCoordinator implements BreakerCoordinator {
  private readonly records = new WeakMap<Breaker, SharedBreaker>();
  private readonly byName = new Map<string, SharedBreaker[]>();
  private wakeTimer: ReturnType<typeof setTimeout> | undefined;
  /** `Date.now()` at which the wake timer fires. */
  private wakeDue = Number.POSITIVE_INFINITY;
  private closed = false;

  constructor(
    private readonly prefix: string,
    private readonly link: FleetLink,
  ) {}

  /** Starts following `breaker`; `undefined` for what is never shared (per-key children, after close). */
  register(breaker: Breaker): SharedBreaker | undefined {
    if (breaker.parent !== undefined || this.closed) return undefined;
    let record = this.records.get(breaker);
    if (record !== undefined) return record;
    record = new SharedBreaker(breaker, this.prefix);
    this.records.set(breaker, record);
    const named = this.byName.get(breaker.name);
    if (named === undefined) this.byName.set(breaker.name, [record]);
    else named.push(record);
    this.link.registered?.(record);
    return record;
  }

  /** Every followed breaker. */
  all(): SharedBreaker[] {
    return [...this.byName.values()].flat();
  }

  /** The followed breakers named `name` (one per application, or none). */
  named(name: string): readonly SharedBreaker[] {
    return this.closed ? [] : (this.byName.get(name) ?? []);
  }

  transitioned(breaker: Breaker, change: StateChangeEvent): void {
    const record = this.register(breaker);
    if (record === undefined) return;
    this.link.transitioned(record, change);
    const { from, to, reason } = change;
    record.extendedFrom = undefined;
    if (to === 'open') {
      record.openUntil = change.openUntil ?? 0;
      record.adopted = reason === 'shared-open';
    }
    // Half-opening is what a won permit is for; any other move ends the permit episode.
    if (to !== 'half-open') record.permit = NONE;
    let op: WriteOp | undefined;
    if (reason === 'shared-open' || reason === 'shared-close') {
      // Adopted: the fleet already knows.
    } else if (to === 'open' && (from === 'closed' || from === 'half-open')) {
      record.ownOpenAt = change.at;
      op = {
        kind: 'open',
        openUntil: record.openUntil,
        at: change.at,
        reopen: from === 'half-open',
      };
    } else if (to === 'closed' && (from === 'half-open' || reason === 'health-check')) {
      op = { kind: 'close', at: change.at };
    } else if (to === 'closed' && reason === 'reset') {
      op = { kind: 'withdraw' };
    }
    if (op !== undefined) {
      record.lastOwn = op;
      this.link.write(record, op);
    }
    if (to === 'half-open' && record.permit === WON) {
      // The claim becomes the whole probe deadline, now that the probes really start.
      const ttl = permitTtlMs(breaker.config);
      record.permitUntil = change.at + ttl;
      this.link.renewPermit(record, ttl);
    }
    if (to === 'open') this.scheduleWake(record);
  }

  mayProbe(breaker: Breaker): boolean {
    const record = this.records.get(breaker);
    // Not shared, Redis unreachable (fail open: local behaviour), or a lone opener the fleet does not share.
    if (record === undefined || !this.link.isShared(record) || !record.fleetOpen) return true;
    const now = breaker.clock.now();
    if (record.permit === WON && now < record.permitUntil) return true;
    if (record.permit === REQUESTING || (record.permit === LOST && now < record.permitUntil))
      return false;
    this.request(record);
    return false;
  }

  coordinationOf(breaker: Breaker): BreakerCoordination | undefined {
    if (breaker.parent !== undefined) return undefined;
    const record = this.records.get(breaker);
    return {
      shared: !this.closed && this.link.isShared(record),
      storeErrors: this.link.storeErrors(record),
    };
  }

  /**
   * Applies the fleet's state of a breaker when it is newer than what was
   * applied: from a signal, or (`fromHash`) from a read of the state hash
   * (reconcile, hydration), which is what Redis holds.
   */
  apply(fleet: FleetState, fromHash = false): void {
    const records = this.byName.get(fleet.name);
    if (records === undefined || this.closed) return;
    for (const record of records) this.applyTo(record, fleet, fromHash);
  }

  /**
   * A read sent at `sentAt` (a `nextMoment()`) found no state hash for `record`.
   * A fleet state heard on the channel before that read went out, and never
   * read back since, was never Redis' (every script writes the hash before
   * it publishes): a forged signal. It is undone: an open the breaker only
   * adopted from it ends (`shared-close`), an open of its own evidence stays
   * but ends when its own period does again, and the next state of any
   * generation is applied.
   */
  noneHeld(record: SharedBreaker, sentAt: number): void {
    if (this.closed || record.heardAt === 0 || record.heardAt >= sentAt) return;
    record.heardAt = 0;
    record.generation = 0;
    const own = record.extendedFrom;
    record.extendedFrom = undefined;
    if (own !== undefined && !record.adopted && record.breaker.lastDecidedState === 'open') {
      record.breaker.restoreOpenUntil(own);
      record.openUntil = own;
    }
    if (!record.fleetOpen) return;
    record.fleetOpen = false;
    record.permit = NONE;
    const breaker = record.breaker;
    if (record.adopted && breaker.lastDecidedState === 'open') breaker.adoptClosed();
  }

  /** The answer to a permit request: `won`, or lost with `ttlMs` left on the holder's permit; `undefined` when the request failed. */
  onPermit(record: SharedBreaker, won: boolean | undefined, ttlMs: number): void {
    // The fleet moved on while the request was out (a verdict, an adoption): the answer is stale.
    if (record.permit !== REQUESTING) return;
    if (won === undefined) {
      record.permit = NONE;
      return;
    }
    record.permit = won ? WON : LOST;
    // Redis started the expiry when it ran the request, after it was sent and before this answer arrived: counting from
    // the answer would outlive the permit by the round trip. A won permit ends a margin earlier still, so that the
    // renewal sent on half-opening reaches Redis while the claim holds.
    // Lost: the wait is bounded both ways (see permitWaitMs), whatever Redis said is left on the holder's permit.
    const ttl = won ? Math.max(0, ttlMs) : permitWaitMs(record.breaker.config, ttlMs);
    record.permitUntil = record.permitAskedAt + ttl - (won ? permitMarginMs(ttl) : 0);
    if (!won) this.scheduleWake(record);
  }

  /**
   * The answer to a renewal sent when the holder half-opened (`episode`: the
   * request it renews). Not renewed: the claim lapsed before the renewal
   * reached Redis, and another replica holds the permit (`ttlMs` left on it)
   * and may be probing. This replica then stops probing, and waits for that
   * verdict as any other replica does: it is open again (its probes in flight
   * no longer count) until the other permit lapses, or for its own
   * `halfOpen.maxWaitMs` at most, and then asks again.
   */
  onRenewed(record: SharedBreaker, episode: number, renewed: boolean, ttlMs: number): void {
    if (renewed || record.episode !== episode || record.permit !== WON || this.closed) return;
    record.permit = NONE;
    const breaker = record.breaker;
    if (breaker.lastDecidedState !== 'half-open') return;
    breaker.adoptOpen(breaker.clock.now() + permitWaitMs(breaker.config, ttlMs));
  }

  /**
   * What each breaker must tell the fleet again after an outage: its latest
   * own transition, if it still holds (an open report only while its period lasts).
   */
  replay(): [SharedBreaker, WriteOp][] {
    const out: [SharedBreaker, WriteOp][] = [];
    for (const record of this.all()) {
      const op = this.replayOf(record);
      if (op !== undefined) out.push([record, op]);
    }
    return out;
  }

  /** What `record` must tell the fleet again (see `replay()`), if anything. */
  replayOf(record: SharedBreaker): WriteOp | undefined {
    const op = record.lastOwn;
    if (
      op?.kind === 'open' &&
      (record.breaker.lastDecidedState !== 'open' || op.openUntil <= record.breaker.clock.now())
    )
      return undefined;
    return op;
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.wakeTimer);
    this.wakeTimer = undefined;
    this.byName.clear();
  }

  private applyTo(record: SharedBreaker, fleet: FleetState, fromHash: boolean): void {
    const breaker = record.breaker;
    const now = breaker.clock.now();
    // Further ahead than any clock: junk (the scripts repair it in the hash). Applied, it would hide every real state until then.
    if (fleet.generation > now + GENERATION_MAX_LEAD_MS) return;
    // A generation applied earlier that is far ahead of this clock and newer than what Redis holds came from a forged
    // signal, or from junk repaired since: what Redis holds wins, or this replica would ignore the fleet until then.
    const distrusted = fromHash && record.generation > now + GENERATION_TRUSTED_LEAD_MS;
    if (fromHash && fleet.generation === record.generation) this.backed(record);
    if (
      fleet.generation <= record.generation &&
      !(distrusted && fleet.generation < record.generation)
    )
      return;
    record.generation = fleet.generation;
    record.fleetOpen = fleet.state === 'open';
    if (fromHash) this.backed(record);
    else record.heardAt = nextMoment();
    record.permit = NONE;
    if (fleet.state === 'open') {
      const until = Math.min(fleet.openUntil, now + longestOpenMs(breaker.config));
      if (until <= now) return;
      // Opens a closed or half-open breaker (reason shared-open), or extends an open one to the fleet's time.
      breaker.adoptOpen(until);
      if (breaker.lastDecidedState === 'open' && until > record.openUntil) {
        // Only heard: what it extended is kept until a read backs it (see noneHeld).
        if (!fromHash) record.extendedFrom ??= record.openUntil;
        record.openUntil = until;
      }
      this.scheduleWake(record);
      return;
    }
    const state = breaker.lastDecidedState;
    // A close verdict ends the outage it was about, not one this replica found after it.
    if ((state === 'open' || state === 'half-open') && record.ownOpenAt <= fleet.at)
      breaker.adoptClosed(fleet.at);
  }

  /** What was applied is what Redis holds: never undone by a later read that finds the hash gone. */
  private backed(record: SharedBreaker): void {
    record.heardAt = 0;
    record.extendedFrom = undefined;
  }

  private request(record: SharedBreaker): void {
    record.permit = REQUESTING;
    record.permitAskedAt = record.breaker.clock.now();
    record.episode++;
    // A short claim first: renewed when this replica half-opens (see transitioned()).
    this.link.requestPermit(record, Math.min(PERMIT_CLAIM_MS, permitTtlMs(record.breaker.config)));
  }

  /** When `record` next needs the permit asked for: its open period's end, or the end of a lost permit. */
  private dueOf(record: SharedBreaker): number | undefined {
    if (!record.fleetOpen || record.breaker.lastDecidedState !== 'open') return undefined;
    if (record.permit === NONE) return record.openUntil;
    if (record.permit === LOST) return record.permitUntil;
    return undefined;
  }

  private scheduleWake(record: SharedBreaker): void {
    if (this.closed) return;
    const due = this.dueOf(record);
    if (due === undefined) return;
    const at = Date.now() + Math.max(0, due - record.breaker.clock.now());
    if (at >= this.wakeDue) return;
    clearTimeout(this.wakeTimer);
    this.wakeDue = at;
    // One timer for the whole store, never keeping the process alive.
    this.wakeTimer = setTimeout(() => this.wake(), timerDelay(at - Date.now()));
    this.wakeTimer.unref();
  }

  /** The store's one timer (and the store, when sharing resumes): asks for the permits that are due, then sleeps until the next one. */
  wake(): void {
    clearTimeout(this.wakeTimer);
    this.wakeTimer = undefined;
    this.wakeDue = Number.POSITIVE_INFINITY;
    for (const record of this.all()) {
      const due = this.dueOf(record);
      if (due === undefined) continue;
      if (due <= record.breaker.clock.now()) {
        if (this.link.isShared(record)) this.request(record);
      } else {
        this.scheduleWake(record);
      }
    }
  }
}
