import type { BreakerState } from '../state/breaker-state.js';
import { breakerMessages } from '../errors/breaker.messages.js';
import type { ResolvedBreakerOptions } from '../options/resolve-options.js';
import { sha256Utf16 } from '../ports/sha256.js';

/**
 * Marks a key the family made up: the bounded form of a long key, and the
 * overflow child's key. A caller's key that begins with it is bounded too, so
 * no caller can name one of these (or steal another caller's long key's child).
 */
const MARK = '…';
const MARK_CODE = MARK.charCodeAt(0);
/** 128 bits of SHA-256, in hex: even a caller who picks keys to collide cannot. */
const HASH_LENGTH = 32;

/**
 * The key of a family's overflow child. No caller's key is ever stored as
 * this, so events, metrics and snapshots can tell the overflow child apart.
 *
 * @publicApi
 */
export const FAMILY_OVERFLOW_KEY = `${MARK}overflow`;

/**
 * The key of a call whose key function found no target: it returned
 * `undefined`, `null` or `''` (a request without the tenant header), threw,
 * or returned something that is not a string (the Nest layer's key
 * functions). Those calls share the child of this key, as any key's calls
 * share theirs. It begins with the mark, so no tenant's key is ever stored
 * as this one (a tenant named `default` keeps its own child), and it is the
 * one marked key a family stores as it is, so its child reads `…default`.
 *
 * @publicApi
 */
export const FAMILY_DEFAULT_KEY = `${MARK}default`;

/** The per-key part of a family's snapshot. @publicApi */
export interface FamilySnapshot {
  /** Children currently held. */
  keys: number;
  maxKeys: number;
  /** Children that are open, half-open or isolated (as of their last use). */
  unhealthyKeys: number;
  /** Children evicted since creation. */
  evicted: number;
  /** Calls for new keys that had to share the overflow child because every held child was failing. */
  overflowed: number;
}

/** What a family needs of each child breaker. @internal */
export interface FamilyMember {
  readonly key: string | undefined;
  /** When the family last handed it out (monotonic), kept only with `perKey.idleMs`. */
  lastUsedAt: number;
  /** Its state as its last transition reported it to the family's count. */
  readonly lastDecidedState: BreakerState;
}

/** What a family reads of a child's bulkhead (the family never uses one). @internal */
export interface HeldSlots {
  /** How many calls may hold a slot now: the fixed cap, or the adaptive one's limit. */
  readonly cap: number;
  readonly active: number;
  readonly queued: number;
  /** Callers sent away when a breaker opened, not back yet: they may take a slot again. */
  readonly rejoining: number;
  readonly canQueue: boolean;
  /** Takes a slot if one is free (a call of its key on the overflow child). */
  tryEnter(): boolean;
  /** Gives a slot back. */
  readonly leave: () => void;
}

/** What a family needs of a child to keep its key's bulkhead across eviction. @internal */
export interface FamilyChild extends FamilyMember {
  /** Its bulkhead, if calls hold or wait for a slot of it. */
  busyBulkhead(): HeldSlots | undefined;
  /** Takes over the bulkhead of its key's evicted child, whose calls still hold or wait for slots. */
  adoptBulkhead(bulkhead: HeldSlots): void;
}

/** What a breaker's transitions tell the family it belongs to. @internal */
export interface FamilyTransitions {
  childTransitioned(child: FamilyMember, from: BreakerState, to: BreakerState, now: number): void;
  /** Its bulkhead (or one it dropped, or gave up on eviction) holds and awaits no call any more. */
  childIdle(child: FamilyMember): void;
  /**
   * The overflow child's guard: a call takes or waits for a slot. It is the
   * call of the key whose lookup last returned the overflow child (each
   * front end looks up and calls in one go), which is returned; none when
   * no lookup is left to claim (a caller that kept the child).
   */
  claimOverflowCall(): string | undefined;
  /** A call `claimOverflowCall()` gave to `key` settled, or never got a slot. */
  overflowCallEnded(key: string): void;
  /** The bulkhead kept for `key` (as `claimOverflowCall()` gave it) since its child was evicted with calls in it. */
  keptSlots(key: string): HeldSlots | undefined;
}

/**
 * What a family needs of the breaker it belongs to: the one way its children
 * reach the family level. (A child's calls pass the family's gate through
 * the family breaker's `admitAsFamily()`.)
 *
 * @internal
 */
export interface FamilyOwner {
  readonly name: string;
  readonly config: ResolvedBreakerOptions;
  monotonic(): number;
  /** Enough children are unhealthy: open the family (reason `open-ratio`) if it is closed. */
  openForChildren(now: number, children: { failing: number; known: number }): void;
}

/**
 * The children of a per-key breaker: one per target, created on first use,
 * bounded by `maxKeys` (idle closed children evicted first, least recently
 * used; open and half-open children never), so keys from untrusted input
 * cannot grow memory without bound, and keys longer than `maxKeyLength`
 * stored in a bounded form. When no held child can go, new keys share one
 * overflow child. A child evicted with calls holding or waiting for a slot of
 * its bulkhead leaves that bulkhead to its key's next child, so the key's cap
 * holds across eviction (the key's calls sent to the overflow child meanwhile
 * take a slot of it too); and a key with calls on the overflow child keeps
 * going there until they are over, so its cap holds as it moves off.
 *
 * @internal
 */
export class BreakerFamily<Child extends FamilyChild> implements FamilyTransitions {
  private readonly children = new Map<string, Child>();
  /**
   * The key last in `children`'s order (the most recently used) and its
   * child: a lookup of it again needs neither the map nor a re-insertion.
   */
  private recentKey: string | undefined = undefined;
  private recentChild: Child | undefined = undefined;
  private overflow: Child | undefined;
  private childListeners: ((child: Child) => void)[] | undefined;
  private evictListeners: ((child: Child) => void)[] | undefined;
  unhealthy = 0;
  /**
   * Children open or half-open: what the aggregate level counts. A child
   * isolated by hand (`isolate()`, `force('open')`) is an operator's decision,
   * not evidence that its target fails, so it opens no family.
   */
  private failing = 0;
  private evicted = 0;
  private overflowed = 0;
  /**
   * The bulkheads of evicted children whose calls still hold or wait for
   * slots, by key (made at the first): the key's next child takes its over.
   * Each goes when it holds no call, so they are bounded by the calls in flight.
   */
  private retained: Map<string, HeldSlots> | undefined = undefined;
  /**
   * With a bulkhead: how many calls each key has holding or waiting for a
   * slot of the overflow child (made at the first). A key goes while it has
   * none, so they are bounded by the calls in flight there.
   */
  private onOverflow: Map<string, number> | undefined = undefined;
  /** The key of the last lookup that returned the overflow child, until its call claims it. */
  private overflowKey: string | undefined = undefined;
  private readonly maxKeys: number;
  private readonly idleMs: number | undefined;
  private readonly maxKeyLength: number;

  constructor(
    private readonly owner: FamilyOwner,
    private readonly create: (key: string) => Child,
  ) {
    const perKey = owner.config.perKey!;
    this.maxKeys = perKey.maxKeys;
    this.idleMs = perKey.idleMs;
    this.maxKeyLength = perKey.maxKeyLength;
  }

  get size(): number {
    return this.children.size + (this.overflow === undefined ? 0 : 1);
  }

  /** `stored`: `key` is a child's own key, in its stored form already (`rejoin()`). */
  child(key: string, stored?: boolean): Child {
    // The common key is a short plain string: three comparisons, no hashing.
    if (
      (typeof key !== 'string' ||
        key.length > this.maxKeyLength ||
        key.charCodeAt(0) === MARK_CODE) &&
      stored !== true
    )
      key = this.bound(key);
    // The key used last is last in the map's order already: one comparison, no hashing, no re-insertion.
    if (key === this.recentKey) {
      const recent = this.recentChild!;
      if (this.idleMs !== undefined) recent.lastUsedAt = this.owner.monotonic();
      return recent;
    }
    const children = this.children;
    const existing = children.get(key);
    if (existing !== undefined) {
      // Re-insertion keeps the map in least-recently-used order.
      children.delete(key);
      this.insertLast(key, existing);
      if (this.idleMs !== undefined) existing.lastUsedAt = this.owner.monotonic();
      return existing;
    }
    const now = this.owner.monotonic();
    if (this.idleMs !== undefined) this.evictIdle(now);
    // A child of its own now would have every slot free beside the key's calls still on the overflow child.
    if (this.onOverflow?.has(key) === true || (children.size >= this.maxKeys && !this.evictOne())) {
      this.overflowed++;
      this.overflowKey = key;
      return (this.overflow ??= this.born(this.create(FAMILY_OVERFLOW_KEY)));
    }
    // Held for as long as the child: a copy of its own, never a slice of something larger.
    key = flatCopy(key);
    const child = this.create(key);
    const kept = this.retained?.get(key);
    if (kept !== undefined) {
      this.retained!.delete(key);
      child.adoptBulkhead(kept);
    }
    this.born(child);
    // A time is a boxed number: store it only when idle eviction needs it.
    if (this.idleMs !== undefined) child.lastUsedAt = now;
    this.insertLast(key, child);
    return child;
  }

  /** Puts `key` last in the order of use (absent from the map), and remembers it as the most recent. */
  private insertLast(key: string, child: Child): void {
    this.children.set(key, child);
    this.recentKey = key;
    this.recentChild = child;
  }

  /**
   * The child a call on `key` would reach, if it exists, touching nothing: no
   * child is created, none evicted, the order of use unchanged. The child held
   * for `key`; else the overflow child when the key has calls there, or the
   * family is full and could evict none (as `child()` would decide); else none (a new closed child would
   * come). What a check that is not a call (`peekKey()`, a guard) may look at.
   */
  find(key: string): Child | undefined {
    if (typeof key !== 'string') throw new TypeError(breakerMessages.badKey(this.owner.name, key));
    if (key.length > this.maxKeyLength || key.charCodeAt(0) === MARK_CODE) key = this.bound(key);
    const held = this.children.get(key);
    if (held !== undefined || this.overflow === undefined) return held;
    return this.onOverflow?.has(key) !== true && this.canAdmitNew() ? undefined : this.overflow;
  }

  /**
   * The bulkhead kept for `key` since its child was evicted with calls in it,
   * touching nothing, and whether the key's call would go to the overflow
   * child: the key's next child takes it over, or, while the key's calls go
   * to the overflow child, each of them takes a slot of it too.
   */
  kept(key: string): { slots: HeldSlots; onOverflow: boolean } | undefined {
    if (this.retained === undefined) return undefined;
    if (key.length > this.maxKeyLength || key.charCodeAt(0) === MARK_CODE) key = this.bound(key);
    const slots = this.retained.get(key);
    if (slots === undefined) return undefined;
    // A key sent to the overflow child (made by its call, when there is none yet): `child()`'s rule.
    const onOverflow = this.onOverflow?.has(key) === true || !this.canAdmitNew();
    return { slots, onOverflow };
  }

  /**
   * The stored form of a key that is too long or begins with the mark: the
   * mark, as much of its start as fits, the mark, and a hash of all of it.
   * At most `maxKeyLength` long, and never equal to a key stored as is (those
   * never begin with the mark) nor to `FAMILY_OVERFLOW_KEY` (too short).
   */
  private bound(key: string): string {
    if (typeof key !== 'string') {
      throw new TypeError(breakerMessages.badKey(this.owner.name, key));
    }
    if (key === FAMILY_DEFAULT_KEY) return key;
    // UTF-16 code units, not UTF-8: lone surrogates would all encode to one replacement character and collide.
    const hash = sha256Utf16(key).slice(0, HASH_LENGTH);
    const room = this.maxKeyLength - HASH_LENGTH - 2;
    let start = key.slice(0, room);
    // Half a surrogate pair would show as a replacement character in metrics and logs.
    const last = start.charCodeAt(start.length - 1);
    if (last >= 0xd800 && last <= 0xdbff) start = start.slice(0, -1);
    return `${MARK}${start}${MARK}${hash}`;
  }

  /**
   * The child a new call of `child`'s target gets now: `child` while it is
   * held, else its key's child (created, or the overflow child, as `child()`
   * decides). What holds a child across time (a retry between attempts) asks
   * this, so that its calls and the key's new ones share one bulkhead.
   */
  rejoin(child: Child): Child {
    return this.holds(child) ? child : this.child(child.key!, true);
  }

  /** Whether `child` is still held (not evicted). */
  holds(child: Child): boolean {
    return (
      child.key !== undefined && (this.children.get(child.key) === child || this.overflow === child)
    );
  }

  /** Calls `listener` with every child created from now on; returns the unsubscribe function. */
  onChild(listener: (child: Child) => void): () => void {
    const listeners = (this.childListeners ??= []);
    listeners.push(listener);
    return () => {
      const index = listeners.indexOf(listener);
      if (index !== -1) listeners.splice(index, 1);
    };
  }

  /**
   * Calls `listener` with every child evicted from now on (never the overflow
   * child, which is never evicted), so that what is kept per child elsewhere
   * (metric series) stays bounded by `maxKeys` too. Returns the unsubscribe
   * function. The listener runs during `forKey()`: it must not call it.
   */
  onEvict(listener: (child: Child) => void): () => void {
    const listeners = (this.evictListeners ??= []);
    listeners.push(listener);
    return () => {
      const index = listeners.indexOf(listener);
      if (index !== -1) listeners.splice(index, 1);
    };
  }

  /** Every child held, the overflow child included. */
  *all(): IterableIterator<Child> {
    yield* this.children.values();
    if (this.overflow !== undefined) yield this.overflow;
  }

  /**
   * A child changed state: keep the count of unhealthy children, and open the
   * family when enough are (`aggregate`). An evicted child is no longer the
   * family's: its transitions do not count.
   */
  childTransitioned(child: Child, from: BreakerState, to: BreakerState, now: number): void {
    if (!this.holds(child)) return;
    if (isUnhealthy(from) !== isUnhealthy(to)) this.unhealthy += isUnhealthy(to) ? 1 : -1;
    const was = isFailing(from);
    const is = isFailing(to);
    if (was === is) return;
    this.failing += is ? 1 : -1;
    const aggregate = this.owner.config.aggregate;
    if (!is || aggregate === undefined) return;
    const known = this.size;
    if (known >= aggregate.minKeys && this.failing / known >= aggregate.openWhenOpenRatio)
      this.owner.openForChildren(now, { failing: this.failing, known });
  }

  /**
   * A child's bulkhead holds and awaits no call any more: a bulkhead kept for
   * its key since an eviction may go. (It still tells the child that made
   * it, whichever child holds it now; the key is the same.)
   */
  childIdle(child: Child): void {
    const retained = this.retained;
    if (retained === undefined) return;
    const kept = retained.get(child.key!);
    if (kept !== undefined && kept.active + kept.queued + kept.rejoining === 0)
      retained.delete(child.key!);
  }

  claimOverflowCall(): string | undefined {
    const key = this.overflowKey;
    if (key === undefined) return undefined;
    this.overflowKey = undefined;
    const calls = (this.onOverflow ??= new Map());
    calls.set(key, (calls.get(key) ?? 0) + 1);
    return key;
  }

  keptSlots(key: string): HeldSlots | undefined {
    return this.retained?.get(key);
  }

  overflowCallEnded(key: string): void {
    const calls = this.onOverflow!;
    const left = calls.get(key)! - 1;
    if (left === 0) calls.delete(key);
    else calls.set(key, left);
  }

  snapshot(): FamilySnapshot {
    return {
      keys: this.size,
      maxKeys: this.maxKeys,
      unhealthyKeys: this.unhealthy,
      evicted: this.evicted,
      overflowed: this.overflowed,
    };
  }

  private born(child: Child): Child {
    if (this.childListeners !== undefined)
      for (const listener of this.childListeners) listener(child);
    return child;
  }

  private evictIdle(now: number): void {
    let budget = 4;
    for (const [key, child] of this.children) {
      if (budget-- === 0 || now - child.lastUsedAt < this.idleMs!) return;
      if (this.isEvictable(child)) this.remove(key, child);
    }
  }

  /**
   * Evicts the least recently used closed child. Children that are failing are
   * moved to the back as they are passed over, so the next search starts among
   * others; and when every child is failing, the count of unhealthy children
   * says so without a search.
   */
  private evictOne(): boolean {
    if (!this.canAdmitNew()) return false;
    let left = this.children.size;
    for (const [key, child] of this.children) {
      if (left-- === 0) break;
      if (this.isEvictable(child)) {
        this.remove(key, child);
        return true;
      }
      this.children.delete(key);
      this.insertLast(key, child);
    }
    return false;
  }

  /**
   * Whether a new key would get a child of its own: a slot is free, or a held
   * child is evictable (quiet: a busy one leaves its bulkhead to its key).
   * Held children are failing or evictable, so the count says it without a search.
   */
  private canAdmitNew(): boolean {
    const size = this.children.size;
    return size < this.maxKeys || this.failingHeld() < size;
  }

  /**
   * Held children that are failing. The overflow child is counted in
   * `unhealthy` (it is a target for the aggregate level) but holds no slot:
   * counting it here made one closed child look failing, and sent every new
   * key to an open overflow child while that closed child could be evicted.
   */
  private failingHeld(): number {
    const overflow = this.overflow;
    // Its stored state is what its last transition reported to the count.
    return overflow !== undefined && isUnhealthy(overflow.lastDecidedState)
      ? this.unhealthy - 1
      : this.unhealthy;
  }

  /** Closed, metrics-only or disabled: open, half-open and isolated children are never evicted. */
  private isEvictable(child: Child): boolean {
    return isQuiet(child.lastDecidedState);
  }

  /**
   * A child evicted with calls in its bulkhead leaves the bulkhead for its
   * key's next child: a fresh one would have every slot free beside the calls
   * still running (the key's cap exceeded).
   */
  private remove(key: string, child: Child): void {
    this.children.delete(key);
    if (key === this.recentKey) {
      this.recentKey = undefined;
      this.recentChild = undefined;
    }
    const bulkhead = child.busyBulkhead();
    if (bulkhead !== undefined) (this.retained ??= new Map()).set(key, bulkhead);
    this.evicted++;
    if (this.evictListeners !== undefined)
      for (const listener of this.evictListeners) listener(child);
  }
}

/** Code units copied per `String.fromCharCode` call: its arguments must fit on the stack. */
const COPY_CHUNK = 8_192;

/**
 * A copy of `key` that shares no memory with the string it came from. V8
 * keeps the whole parent of a sliced string alive (a key cut from a request
 * body, or the bounded form built from `key.slice()`): a key held for as long
 * as its child must be a flat string of its own.
 */
function flatCopy(key: string): string {
  let copy = '';
  for (let at = 0; at < key.length; at += COPY_CHUNK) {
    const units = new Uint16Array(Math.min(COPY_CHUNK, key.length - at));
    for (let i = 0; i < units.length; i++) units[i] = key.charCodeAt(at + i);
    copy += String.fromCharCode.apply(null, units as unknown as number[]);
  }
  return copy;
}

function isUnhealthy(state: BreakerState): boolean {
  return isFailing(state) || state === 'isolated';
}

function isFailing(state: BreakerState): boolean {
  return state === 'open' || state === 'half-open';
}

/** Closed, metrics-only or disabled: a state that says nothing against the target. */
function isQuiet(state: BreakerState): boolean {
  return state === 'closed' || state === 'disabled' || state === 'metrics-only';
}
