import type { StateChangeEvent } from '../events/breaker-events.js';
import type { BreakerState } from '../state/breaker-state.js';
import type { Clock } from './clock.js';
import type { ResolvedBreakerOptions } from '../options/resolve-options.js';

/**
 * What a coordinator sees of a breaker (every `Breaker` is one): enough to
 * share its transitions and adopt the fleet's, without the engine's files and
 * this contract importing each other.
 *
 * @publicApi
 */
export interface CoordinatedBreaker {
  readonly name: string;
  /** For a child of a per-key family: the family's breaker (children are not shared; their family is). */
  readonly parent: CoordinatedBreaker | undefined;
  readonly config: ResolvedBreakerOptions;
  readonly clock: Clock;
  /** The state as last decided, without making a due transition happen: a coordinator looks without acting. */
  readonly lastDecidedState: BreakerState;
  adoptOpen(openUntil: number): void;
  /** `closedAt`: when the fleet closed (wall time), which a slow start (`rampUp`) ramps from. */
  adoptClosed(closedAt?: number): void;
}

/**
 * What lets breakers of several replicas act as one (shared state), without
 * the engine knowing where the shared state lives. Both methods are called on
 * the hot path's rare branches and must answer synchronously from local
 * knowledge: a coordinator may talk to a remote store, but never makes a call
 * wait for it.
 *
 * @publicApi
 */
export interface BreakerCoordinator {
  /** After every transition of `breaker` (its own, or adopted). */
  transitioned(breaker: CoordinatedBreaker, change: StateChangeEvent): void;
  /**
   * The open duration of `breaker` has ended: may this replica admit probes
   * now? `false` keeps it open (another replica holds the fleet's probe
   * permit, or it is being asked for); the coordinator later adopts the
   * verdict with `adoptClosed()` or `adoptOpen()`, or answers `true`.
   */
  mayProbe(breaker: CoordinatedBreaker): boolean;
  /**
   * How `breaker` shares its state right now, for its snapshot (`coordination`)
   * and health details; `undefined` when it does not share (a per-key child).
   */
  coordinationOf?(breaker: CoordinatedBreaker): BreakerCoordination | undefined;
}

/** How a breaker shares its state with other replicas, as its snapshot shows it. @publicApi */
export interface BreakerCoordination {
  /**
   * Whether the breaker's transitions reach the other replicas now. `false`
   * while the store is unreachable: the breaker then decides alone, as an
   * unshared one would, until sharing resumes by itself.
   */
  shared: boolean;
  /** Store operations that failed or timed out since the store started (counted for the whole store). */
  storeErrors: number;
}

/**
 * Where breakers of several replicas share their state (`RedisBreakerStore`
 * from `nestjs-circuit-breaker/redis`). `CircuitBreakerModule.forRoot({ store })`
 * gives `coordinator` to every breaker that shares, calls `hydrate()` with
 * them before the application serves, and `close()` at shutdown. Without the
 * module: pass `{ coordinator: store.coordinator }` as the breaker's deps and
 * call `hydrate()` yourself.
 *
 * @publicApi
 */
export interface BreakerStore {
  /** The coordinator to give every breaker that shares its state through this store. */
  readonly coordinator: BreakerCoordinator;
  /**
   * Starts following the shared state of `breakers` and adopts it (an ongoing
   * outage opens them at once). Never rejects: when the store cannot answer
   * within its own deadline, the breakers start with local state.
   */
  hydrate(breakers: readonly CoordinatedBreaker[]): Promise<void>;
  /** Writes what is pending (within a deadline), stops following, and releases what the store opened itself. */
  close(): Promise<void>;
}
