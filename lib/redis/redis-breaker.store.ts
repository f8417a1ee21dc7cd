import { Logger } from '@nestjs/common';
import type { Cluster, Redis } from 'ioredis';
import { hostname } from 'node:os';
import type { Breaker, BreakerCoordinator, BreakerStore } from '../core/index.js';
import { timerDelay } from '../core/calls/timer-delay.js';
import type {
  RedisBreakerStoreLogger,
  RedisBreakerStoreOptions,
} from './redis-breaker-store-options.interface.js';
import { validateOptions } from './redis-breaker-store.validation.js';
import { evalCall, signalChannel, writerOf, type Writer } from './redis-breaker.commands.js';
import { RedisBreakerConnection } from './redis-breaker.connection.js';
import { LOGGER_CONTEXT, REDIS_BREAKER_STORE_DEFAULTS } from './redis-breaker.constants.js';
import {
  RedisBreakerCoordinator,
  type FleetLink,
  type SharedBreaker,
} from './redis-breaker.coordinator.js';
import { CorruptKeys } from './redis-breaker.corrupt-keys.js';
import { SlotOutages } from './redis-breaker.slots.js';
import { ProbePermits } from './redis-breaker.permits.js';
import { SharedStateReads, type SharedHashes } from './redis-breaker.reads.js';
import { withDeadline } from './redis-breaker.deadline.js';
import { redisBreakerMessages as messages } from './redis-breaker.messages.js';
import { parseMessage, signalOf, decodeStateHash } from './redis-breaker.signal.js';
import { refuseCall, RedisFleetControl } from './redis-breaker.fleet-control.js';
import { FleetOrders } from './redis-breaker.fleet-orders.js';
import { decodeConfigHash, decodeForceHash, orderOf } from './redis-breaker.fleet-records.js';
import type { FleetControl } from '../interfaces/fleet-control.interface.js';
import { SharedWrites } from './redis-breaker.writes.js';
import { ReplicaRegistry } from './redis-breaker.fleet-view.js';
import type { FleetView } from '../interfaces/fleet-view.interface.js';
import { QuorumLog } from './redis-breaker.quorum.js';

/**
 * Shares circuit breaker state between the replicas of an application through
 * Redis, without ever making a call wait for Redis:
 *
 * - every replica keeps its own window and decides locally; its transitions are
 *   written asynchronously (a bounded queue, flushed once per tick) and
 *   published;
 * - the others adopt an open state once `quorum` distinct replicas report it
 *   within their open periods, until the shared open-until (the default,
 *   `'auto'`, counts the replicas that report: 1 for up to two, 2 from three);
 * - at the end of the open period one replica at a time holds the fleet's
 *   probe permit (`SET NX PX`, expiring with the probe deadline), and its
 *   verdict closes or reopens every replica;
 * - start-up reads the shared state (`hydrate`) before the application serves;
 * - when Redis is unreachable or slow every breaker keeps working locally: no
 *   Redis error ever reaches a caller, one warning per outage, `shared: false`
 *   in snapshots, and sharing resumes by itself on reconnect.
 *
 * @publicApi
 */
export class RedisBreakerStore implements BreakerStore {
  readonly coordinator: BreakerCoordinator;
  /** This replica's name in the quorum. */
  readonly instanceId: string;
  /** The prefix of every key and of the channel. */
  readonly keyPrefix: string;

  /**
   * Orders to every replica: `force()`, `release()` and `reconfigure()` made
   * fleet-wide (the module's `registry.control(name, { fleet: true }).force(state, options)`
   * and its siblings use it). Each is obeyed here at once, stored and signalled;
   * every replica obeys it, and so does one that starts later.
   */
  readonly fleet: FleetControl;

  private readonly coordination: RedisBreakerCoordinator;
  /** The replica's side of the fleet's orders. */
  private readonly orders: FleetOrders;
  /** The caller's side (`fleet`), with what the orders need of it. */
  private readonly control: RedisFleetControl;
  /** The two connections and whether they can be counted on: connecting, shared, outage, recovering, closed. */
  private readonly connection: RedisBreakerConnection;
  private readonly redis: Redis | Cluster;
  /** Who writes, and on which channel: what every script call of this store has in common. */
  private readonly writer: Writer;
  private readonly reconcileIntervalMs: number;
  private readonly operationTimeoutMs: number;
  private readonly hydrateTimeoutMs: number;
  /** This replica's transitions, on their way to Redis. */
  private readonly writes: SharedWrites;
  /** Breakers whose keys Redis rejects (a key of the wrong type): isolated and repaired one by one, never an outage. */
  private readonly corrupt: CorruptKeys;
  /** A Cluster: the breakers whose slot is down, which decide locally while the others share. */
  private readonly slots: SlotOutages;
  /** Reconcile, and the reads of hydration and repairs. */
  private readonly reads: SharedStateReads;
  private readonly replicas: ReplicaRegistry;
  /** Says at start-up how many reports open each shared breaker, and when the quorum `'auto'` changes. */
  private readonly quorums: QuorumLog;

  private reconcileTimer: ReturnType<typeof setInterval> | undefined;

  constructor(given: RedisBreakerStoreOptions) {
    const options = validateOptions(given);
    const d = REDIS_BREAKER_STORE_DEFAULTS;
    this.redis = options.redis;
    this.keyPrefix = options.keyPrefix ?? d.keyPrefix;
    this.instanceId = options.instanceId ?? `${hostname()}:${process.pid}`;
    this.writer = writerOf(this.redis, this.instanceId, this.keyPrefix, options);
    this.reconcileIntervalMs = options.reconcileIntervalMs ?? d.reconcileIntervalMs;
    this.operationTimeoutMs = options.operationTimeoutMs ?? d.operationTimeoutMs;
    this.hydrateTimeoutMs = options.hydrateTimeoutMs ?? d.hydrateTimeoutMs;
    const logger = loggerOf(options);
    // In this order: each collaborator is given those made before it (later ones only through closures).
    this.connection = this.connectionOf(options, logger);
    this.slots = new SlotOutages({
      cluster: this.redis.isCluster === true,
      failed: (error) => this.connection.slotFailed(error),
      up: (record) => this.slotUp(record),
      outage: (error) => this.connection.failed(error),
    });
    this.corrupt = new CorruptKeys({
      redis: this.redis,
      logger,
      keyPrefix: this.keyPrefix,
      operationTimeoutMs: this.operationTimeoutMs,
      release: (record) => this.release(record),
      failed: (record, error) => this.slots.keysFailed(record, error),
    });
    this.orders = new FleetOrders({
      logger,
      restore: (record, order) => this.control.restore(record, order),
      refuse: (record, generation, message) =>
        void evalCall(this.redis, refuseCall(this.writer, record, generation, message)).catch(
          () => undefined,
        ),
    });
    this.writes = new SharedWrites({
      redis: this.redis,
      writer: this.writer,
      connection: this.connection,
      corrupt: this.corrupt,
      slots: this.slots,
      operationTimeoutMs: this.operationTimeoutMs,
      maxQueue: options.maxQueue ?? d.maxQueue,
      listed: () => this.replicas.listed,
      start: () => this.start(),
    });
    this.coordination = new RedisBreakerCoordinator(this.keyPrefix, this.fleetLink());
    this.coordinator = this.coordination;
    this.reads = this.sharedStateReads();
    this.replicas = new ReplicaRegistry(this, this.coordination, options, this.connection);
    this.quorums = new QuorumLog(logger);
    this.fleet = this.control = this.fleetControl();
  }

  // ---------------------------------------------------------------------------
  // Construction: the collaborators, and what each needs of the store

  private connectionOf(
    options: RedisBreakerStoreOptions,
    logger: RedisBreakerStoreLogger | undefined,
  ): RedisBreakerConnection {
    return new RedisBreakerConnection({
      redis: this.redis,
      subscriber: options.subscriber,
      channel: this.writer.channel,
      sharded: this.writer.sharded,
      cluster: this.redis.isCluster === true,
      slotsDown: () => this.slots.size,
      operationTimeoutMs: this.operationTimeoutMs,
      closeClient: options.closeClient === true,
      logger,
      message: (message) => this.heard(message),
      recovered: () => this.recovered(),
    });
  }

  /** What the coordinator asks of the store: whether a breaker shares now, its writes, its probe permits. */
  private fleetLink(): FleetLink {
    const permits = new ProbePermits({
      redis: this.redis,
      writer: this.writer,
      operationTimeoutMs: this.operationTimeoutMs,
      connection: this.connection,
      corrupt: this.corrupt,
      slots: this.slots,
      isShared: () => this.connection.shared,
      coordination: () => this.coordination,
    });
    return {
      isShared: (record) =>
        record === undefined
          ? this.shared
          : this.connection.shared && !this.corrupt.isolated(record) && !this.slots.has(record),
      storeErrors: (record) =>
        this.connection.errors +
        (record === undefined ? this.corrupt.total : this.corrupt.errorsOf(record)),
      write: (record, op) => this.writes.write(record, op),
      requestPermit: (record, ttlMs) => permits.request(record, ttlMs),
      renewPermit: (record, ttlMs) => permits.renew(record, ttlMs),
      transitioned: (record, change) => this.orders.transitioned(record, change),
      registered: (record) => this.connection.follow(signalChannel(this.writer, record.name)),
    };
  }

  private sharedStateReads(): SharedStateReads {
    return new SharedStateReads({
      redis: this.redis,
      connection: this.connection,
      corrupt: this.corrupt,
      slots: this.slots,
      operationTimeoutMs: this.operationTimeoutMs,
      changes: this.writer.changes,
      instanceId: this.instanceId,
      all: () => this.coordination.all(),
      named: (name) => this.coordination.named(name),
      applyHashes: (record, hashes, sentAt) => this.applyHashes(record, hashes, sentAt),
    });
  }

  private fleetControl(): RedisFleetControl {
    return new RedisFleetControl({
      redis: this.redis,
      writer: this.writer,
      operationTimeoutMs: this.operationTimeoutMs,
      connection: this.connection,
      corrupt: this.corrupt,
      slots: this.slots,
      orders: this.orders,
      recordOf: (breaker) =>
        breaker.snapshot().coordination === undefined
          ? undefined
          : this.coordination.register(breaker),
      start: () => this.start(),
    });
  }

  /** What a read found in Redis for `record`: its fleet options first, then its shared state, then its force. */
  private applyHashes(record: SharedBreaker, hashes: SharedHashes, sentAt: number): void {
    const fleet = decodeStateHash(record.name, hashes.state);
    // The options first: the state and the force are then those of the breaker as reconfigured.
    this.orders.fromHashes(record, undefined, decodeConfigHash(record.name, hashes.config), sentAt);
    if (fleet !== undefined) this.coordination.apply(fleet, true);
    // No hash at all (junk fields in one are the scripts' to repair: the fleet's state is still there).
    else if (Object.keys(hashes.state).length === 0) this.coordination.noneHeld(record, sentAt);
    this.orders.fromHashes(record, decodeForceHash(record.name, hashes.force), undefined, sentAt);
  }

  /** A message on the channel: a state signal, a fleet order, or junk (ignored). Either is read back at the next reconcile: what Redis holds undoes a forged one. */
  private heard(message: string): void {
    const raw = parseMessage(message);
    const fleet = raw === undefined || raw.k !== undefined ? undefined : signalOf(raw);
    const order = raw === undefined || raw.k === undefined ? undefined : orderOf(raw);
    if (fleet !== undefined) this.coordination.apply(fleet);
    else if (order !== undefined)
      for (const record of this.coordination.named(order.name)) this.orders.apply(record, order);
    else return;
    this.reads.heard((fleet ?? order)!.name);
  }

  /** Whether breakers share their state now: both connections are ready, the last operation succeeded, and (on a Cluster) no breaker's slot is down. */
  get shared(): boolean {
    return this.connection.shared && this.slots.size === 0;
  }

  /** Store operations that failed or timed out, connection errors, and key errors of any breaker, since the store started. */
  get storeErrors(): number {
    return this.connection.errors + this.corrupt.total;
  }

  /** Writes dropped because the queue was full (each breaker's latest state is written again when sharing resumes). */
  get droppedWrites(): number {
    return this.writes.dropped;
  }

  async hydrate(breakers: readonly Breaker[]): Promise<void> {
    if (this.connection.state === 'closed') return;
    const records = breakers
      .map((breaker) => this.coordination.register(breaker))
      .filter((r): r is SharedBreaker => r !== undefined);
    const release = this.reads.hold();
    this.start();
    // One deadline for the whole start-up, the wait for the connections and the read together.
    const deadline = Date.now() + this.hydrateTimeoutMs;
    const timedOut = () => messages.hydrateTimedOut(this.hydrateTimeoutMs);
    const ready = this.connection.whenReady();
    try {
      await withDeadline(ready, this.hydrateTimeoutMs, timedOut);
      const left = Math.max(1, deadline - Date.now());
      if (this.connection.running)
        await (left < this.operationTimeoutMs
          ? this.reads.hydrate(records, left, timedOut)
          : this.reads.hydrate(records));
      // The quorum 'auto' counts the replicas that report: this replica's first report (under way since the connections
      // became ready), waited for within what is left of the deadline. Late, it only leaves the count unknown a while.
      if (this.replicas.listed === undefined)
        await withDeadline(
          this.replicas.report(),
          Math.max(1, deadline - Date.now()),
          timedOut,
        ).catch(() => undefined);
    } catch (error) {
      this.connection.failed(error);
    } finally {
      ready.cancel();
      release();
      this.quorums.started(records, this.replicas.listed);
    }
  }

  /**
   * Reads the shared state of every breaker now (in batches) and adopts what
   * changed: a repair after editing Redis by hand. With `{ changedOnly: true }`,
   * what the periodic reconcile does: one command when nothing changed, else a
   * read of the breakers changed (or heard on the channel) since the last look.
   * Waits for Redis at most `operationTimeoutMs`; resolves whether or not it answers.
   */
  reconcile(options?: { changedOnly?: boolean }): Promise<void> {
    return this.reads.reconcile(options?.changedOnly === true);
  }

  /** Which replicas report (each at every reconcile) and what they see not closed: {@link FleetView}. Rejects when Redis does not answer within `operationTimeoutMs`. */
  readonly fleetView = (): Promise<FleetView> => this.replicas.read();

  async close(): Promise<void> {
    if (this.connection.state === 'closed') return;
    await this.writes.last();
    clearInterval(this.reconcileTimer);
    await this.replicas.leave();
    this.coordination.close();
    this.writes.clear();
    this.corrupt.clear();
    this.slots.clear();
    // Releases a hydrate() still waiting for Redis (the application is stopping), then quits what the store made.
    await this.connection.close();
  }

  /** Connects, and reconciles every `reconcileIntervalMs` from then on (a timer that never keeps the process alive). */
  private start(): void {
    if (!this.connection.start()) return;
    const tick = () =>
      void Promise.all([
        this.reads.reconcile(true),
        this.replicas
          .report()
          .then(() => this.quorums.counted(this.coordination.all(), this.replicas.listed)),
      ]);
    this.reconcileTimer = setInterval(tick, timerDelay(this.reconcileIntervalMs));
    this.reconcileTimer.unref();
  }

  /** An outage ended: tell the fleet again what it missed, read back what this replica missed, and ask for the permits now due. */
  private recovered(): void {
    this.writes.replay(this.coordination.replay());
    void this.reconcile();
    this.coordination.wake();
  }

  /** A Cluster: the slot of `record` answers again; it tells the fleet its latest transition again (the outage ends at the next read of every breaker). */
  private slotUp(record: SharedBreaker): void {
    if (!this.connection.running) return;
    const op = this.coordination.replayOf(record);
    if (op !== undefined) this.writes.write(record, op);
  }

  /** The keys of `record` were repaired: it tells the fleet its latest transition again, and reads the fleet's state back. */
  private release(record: SharedBreaker): void {
    if (!this.connection.running) return;
    const op = this.coordination.replayOf(record);
    if (op !== undefined) this.writes.write(record, op);
    this.reads.read([record]).catch((error: unknown) => this.slots.keysFailed(record, error));
  }
}

/** The store's logger: the one given, none with `false`, else Nest's under the store's context. */
function loggerOf(options: RedisBreakerStoreOptions): RedisBreakerStoreLogger | undefined {
  return options.logger === false ? undefined : (options.logger ?? new Logger(LOGGER_CONTEXT));
}
