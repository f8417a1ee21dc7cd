import { Logger } from '@nestjs/common';
import type { Cluster, Redis } from 'ioredis';
import { hostname } from 'node:os';
import type { Breaker, BreakerCoordinator, BreakerStore } from '../core/index.js';
import { timerDelay } from '../core/timer-delay.js';
import type {
  RedisBreakerStoreLogger,
  RedisBreakerStoreOptions,
} from './redis-breaker-store-options.interface.js';
import { validateOptions } from './redis-breaker-store.validation.js';
import {
  evalCall,
  evalEach,
  markApart,
  signalChannel,
  writeCall,
  writerOf,
  type Writer,
} from './redis-breaker.commands.js';
import { RedisBreakerConnection } from './redis-breaker.connection.js';
import { LOGGER_CONTEXT, REDIS_BREAKER_STORE_DEFAULTS } from './redis-breaker.constants.js';
import {
  RedisBreakerCoordinator,
  type FleetLink,
  type SharedBreaker,
  type WriteOp,
} from './redis-breaker.coordinator.js';
import { CorruptKeys } from './redis-breaker.corrupt-keys.js';
import { SlotOutages } from './redis-breaker.slots.js';
import { ProbePermits } from './redis-breaker.permits.js';
import { SharedStateReads } from './redis-breaker.reads.js';
import { withDeadline } from './redis-breaker.deadline.js';
import { redisBreakerMessages as messages } from './redis-breaker.messages.js';
import { parseMessage, signalOf, decodeStateHash } from './redis-breaker.signal.js';
import { refuseCall, RedisFleetControl } from './redis-breaker.fleet-control.js';
import { FleetOrders } from './redis-breaker.fleet-orders.js';
import { decodeConfigHash, decodeForceHash, orderOf } from './redis-breaker.fleet-records.js';
import type { FleetControl } from '../interfaces/fleet-control.interface.js';
import { WriteQueue } from './redis-breaker-write.queue.js';
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
   * fleet-wide (the module's `registry.force(name, state, options, { fleet: true })`
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
  private readonly queue: WriteQueue<SharedBreaker, WriteOp>;
  /** Breakers whose keys Redis rejects (a key of the wrong type): isolated and repaired one by one, never an outage. */
  private readonly corrupt: CorruptKeys;
  /** A Cluster: the breakers whose slot is down, which decide locally while the others share. */
  private readonly slots: SlotOutages;
  /** Reconcile, and the reads of hydration and repairs. */
  private readonly reads: SharedStateReads;
  private readonly replicas: ReplicaRegistry;
  /** Says at start-up how many reports open each shared breaker, and when the quorum `'auto'` changes. */
  private readonly quorums: QuorumLog;

  private flushing = false;
  private flushScheduled = false;
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
    const logger: RedisBreakerStoreLogger | undefined =
      options.logger === false ? undefined : (options.logger ?? new Logger(LOGGER_CONTEXT));
    this.queue = new WriteQueue(options.maxQueue ?? d.maxQueue);
    this.connection = new RedisBreakerConnection({
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
    const link: FleetLink = {
      isShared: (record) =>
        record === undefined
          ? this.shared
          : this.connection.shared && !this.corrupt.isolated(record) && !this.slots.has(record),
      storeErrors: (record) =>
        this.connection.errors +
        (record === undefined ? this.corrupt.total : this.corrupt.errorsOf(record)),
      write: (record, op) => this.write(record, op),
      requestPermit: (record, ttlMs) => permits.request(record, ttlMs),
      renewPermit: (record, ttlMs) => permits.renew(record, ttlMs),
      transitioned: (record, change) => this.orders.transitioned(record, change),
      registered: (record) => this.connection.follow(signalChannel(this.writer, record.name)),
    };
    this.coordination = new RedisBreakerCoordinator(this.keyPrefix, link);
    this.coordinator = this.coordination;
    this.reads = new SharedStateReads({
      redis: this.redis,
      connection: this.connection,
      corrupt: this.corrupt,
      slots: this.slots,
      operationTimeoutMs: this.operationTimeoutMs,
      changes: this.writer.changes,
      instanceId: this.instanceId,
      all: () => this.coordination.all(),
      named: (name) => this.coordination.named(name),
      applyHashes: (record, hashes, sentAt) => {
        const fleet = decodeStateHash(record.name, hashes.state);
        // The options first: the state and the force are then those of the breaker as reconfigured.
        this.orders.fromHashes(
          record,
          undefined,
          decodeConfigHash(record.name, hashes.config),
          sentAt,
        );
        if (fleet !== undefined) this.coordination.apply(fleet, true);
        // No hash at all (junk fields in one are the scripts' to repair: the fleet's state is still there).
        else if (Object.keys(hashes.state).length === 0) this.coordination.noneHeld(record, sentAt);
        this.orders.fromHashes(
          record,
          decodeForceHash(record.name, hashes.force),
          undefined,
          sentAt,
        );
      },
    });
    this.replicas = new ReplicaRegistry(this, this.coordination, options, this.connection);
    this.quorums = new QuorumLog(logger);
    this.fleet = this.control = new RedisFleetControl({
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
    return this.queue.dropped;
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
    if (this.connection.running && this.connection.shared && this.queue.size > 0) {
      // What this replica did last still matters to the others: give it one deadline to get out.
      await this.send(this.queue.drain()).catch(() => undefined);
    }
    clearInterval(this.reconcileTimer);
    await this.replicas.leave();
    this.coordination.close();
    this.queue.clear();
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
    for (const [record, op] of this.coordination.replay()) this.queue.push(record, op);
    this.scheduleFlush();
    void this.reconcile();
    this.coordination.wake();
  }

  // ---------------------------------------------------------------------------
  // Writes

  private write(record: SharedBreaker, op: WriteOp): void {
    if (this.connection.state === 'closed') return;
    // A breaker shared without hydrate() (the engine used without the module): start on its first transition.
    this.start();
    this.queue.push(record, op);
    this.scheduleFlush();
  }

  private scheduleFlush(): void {
    if (this.flushScheduled || !this.connection.running) return;
    this.flushScheduled = true;
    // Once per tick: the transitions of one tick go out together.
    setImmediate(() => {
      this.flushScheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    // One batch at a time, and only while Redis answers: the rest waits in the bounded queue.
    if (this.flushing || this.queue.size === 0 || !this.connection.shared) return;
    this.flushing = true;
    try {
      await this.send(this.queue.drain());
      this.connection.succeeded();
    } catch (error) {
      // The batch is not retried as such: replay() resends every breaker's latest own transition when sharing resumes.
      this.connection.failed(error);
    } finally {
      this.flushing = false;
      if (this.queue.size > 0) this.scheduleFlush();
    }
  }

  private async send(all: [SharedBreaker, WriteOp][]): Promise<void> {
    // A breaker whose slot is down writes its latest transition again once it is back (slotUp).
    const batch = all.filter(([record]) => !this.slots.has(record));
    const timedOut = () => messages.timedOut('write', this.operationTimeoutMs);
    const errors = evalEach(
      this.redis,
      batch.map(([record, op]) => writeCall(this.writer, record, op, this.replicas.listed)),
      // A Cluster: a deadline per breaker, so that a dead node's slots time out alone.
      this.redis.isCluster === true ? { ms: this.operationTimeoutMs, timedOut } : undefined,
    );
    const outcomes = await withDeadline(errors, this.operationTimeoutMs, timedOut);
    const records = batch.map(([record]) => record);
    this.corrupt.sort(records, this.slots.sift(records, outcomes));
    // A Cluster: the change log lives in another slot than the breakers, so the writes are marked apart.
    markApart(
      this.redis,
      this.writer,
      Date.now(),
      batch
        .filter(([, op], i) => op.kind !== 'withdraw' && outcomes[i] === undefined)
        .map(([r]) => r.name),
    );
  }

  /** A Cluster: the slot of `record` answers again; it tells the fleet its latest transition again (the outage ends at the next read of every breaker). */
  private slotUp(record: SharedBreaker): void {
    if (!this.connection.running) return;
    const op = this.coordination.replayOf(record);
    if (op !== undefined) this.write(record, op);
  }

  /** The keys of `record` were repaired: it tells the fleet its latest transition again, and reads the fleet's state back. */
  private release(record: SharedBreaker): void {
    if (!this.connection.running) return;
    const op = this.coordination.replayOf(record);
    if (op !== undefined) this.write(record, op);
    this.reads.read([record]).catch((error: unknown) => this.slots.keysFailed(record, error));
  }
}
