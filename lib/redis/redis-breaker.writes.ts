import type { Cluster, Redis } from 'ioredis';
import { WriteQueue } from './redis-breaker-write.queue.js';
import { evalEach, markApart, writeCall, type Writer } from './redis-breaker.commands.js';
import type { RedisBreakerConnection } from './redis-breaker.connection.js';
import type { SharedBreaker, WriteOp } from './redis-breaker.coordinator.js';
import type { CorruptKeys } from './redis-breaker.corrupt-keys.js';
import { withDeadline } from './redis-breaker.deadline.js';
import { redisBreakerMessages as messages } from './redis-breaker.messages.js';
import type { SlotOutages } from './redis-breaker.slots.js';

/** What the writes need from the store. @internal */
export interface WritesLink {
  readonly redis: Redis | Cluster;
  readonly writer: Writer;
  readonly connection: RedisBreakerConnection;
  readonly corrupt: CorruptKeys;
  readonly slots: SlotOutages;
  readonly operationTimeoutMs: number;
  /** The most breakers whose write waits (see `WriteQueue`). */
  readonly maxQueue: number;
  /** The replicas the registry lists now: what the quorum `'auto'` of a write comes to. */
  listed(): number | undefined;
  /** Connects, if the store has not started yet. */
  start(): void;
}

/**
 * The store's writes of its breakers' own transitions, which never make a
 * call wait: queued (bounded, the latest per breaker), flushed once per tick,
 * one batch at a time and only while Redis answers. A batch that fails is
 * not retried as such: the store replays every breaker's latest own
 * transition when sharing resumes.
 *
 * @internal
 */
export class SharedWrites {
  private readonly queue: WriteQueue<SharedBreaker, WriteOp>;
  private flushing = false;
  private flushScheduled = false;

  constructor(private readonly link: WritesLink) {
    this.queue = new WriteQueue(link.maxQueue);
  }

  /** Writes dropped because the queue was full. */
  get dropped(): number {
    return this.queue.dropped;
  }

  write(record: SharedBreaker, op: WriteOp): void {
    if (this.link.connection.state === 'closed') return;
    // A breaker shared without hydrate() (the engine used without the module): start on its first transition.
    this.link.start();
    this.queue.push(record, op);
    this.scheduleFlush();
  }

  /** What the fleet missed during an outage, queued and flushed. */
  replay(ops: readonly [SharedBreaker, WriteOp][]): void {
    for (const [record, op] of ops) this.queue.push(record, op);
    this.scheduleFlush();
  }

  /** The store closes: what this replica did last still matters to the others, and gets one deadline to get out. */
  async last(): Promise<void> {
    const { connection } = this.link;
    if (connection.running && connection.shared && this.queue.size > 0)
      await this.send(this.queue.drain()).catch(() => undefined);
  }

  clear(): void {
    this.queue.clear();
  }

  private scheduleFlush(): void {
    if (this.flushScheduled || !this.link.connection.running) return;
    this.flushScheduled = true;
    // Once per tick: the transitions of one tick go out together.
    setImmediate(() => {
      this.flushScheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    const { connection } = this.link;
    // One batch at a time, and only while Redis answers: the rest waits in the bounded queue.
    if (this.flushing || this.queue.size === 0 || !connection.shared) return;
    this.flushing = true;
    try {
      await this.send(this.queue.drain());
      connection.succeeded();
    } catch (error) {
      // The batch is not retried as such: replay() resends every breaker's latest own transition when sharing resumes.
      connection.failed(error);
    } finally {
      this.flushing = false;
      if (this.queue.size > 0) this.scheduleFlush();
    }
  }

  private async send(all: [SharedBreaker, WriteOp][]): Promise<void> {
    const { redis, writer, slots, corrupt, operationTimeoutMs } = this.link;
    // A breaker whose slot is down writes its latest transition again once it is back (slotUp).
    const batch = all.filter(([record]) => !slots.has(record));
    const timedOut = () => messages.timedOut('write', operationTimeoutMs);
    const listed = this.link.listed();
    const errors = evalEach(
      redis,
      batch.map(([record, op]) => writeCall(writer, record, op, listed)),
      // A Cluster: a deadline per breaker, so that a dead node's slots time out alone.
      redis.isCluster === true ? { ms: operationTimeoutMs, timedOut } : undefined,
    );
    const outcomes = await withDeadline(errors, operationTimeoutMs, timedOut);
    const records = batch.map(([record]) => record);
    corrupt.sort(records, slots.sift(records, outcomes));
    // A Cluster: the change log lives in another slot than the breakers, so the writes are marked apart.
    markApart(
      redis,
      writer,
      Date.now(),
      batch
        .filter(([, op], i) => op.kind !== 'withdraw' && outcomes[i] === undefined)
        .map(([r]) => r.name),
    );
  }
}
