import type { Cluster, Redis } from 'ioredis';
import { outcome } from './redis-breaker.commands.js';
import type { RedisBreakerConnection } from './redis-breaker.connection.js';
import type { SharedBreaker } from './redis-breaker.coordinator.js';
import type { CorruptKeys } from './redis-breaker.corrupt-keys.js';
import { deferred, withDeadline } from './redis-breaker.deadline.js';
import { redisBreakerMessages as messages } from './redis-breaker.messages.js';

/** The hashes of one breaker as a read found them. @internal */
export interface SharedHashes {
  readonly state: Record<string, string>;
  readonly force: Record<string, string>;
  readonly config: Record<string, string>;
}

/** The hashes a read fetches per breaker, in this order. */
const READ = ['state', 'force', 'config'] as const;

/** What the reads need from the store. @internal */
export interface ReadsLink {
  readonly redis: Redis | Cluster;
  readonly connection: RedisBreakerConnection;
  readonly corrupt: CorruptKeys;
  readonly operationTimeoutMs: number;
  /** Every breaker the store follows: what a reconcile reads. */
  all(): SharedBreaker[];
  /** What Redis holds for `record` (`HGETALL` of its state, force and config hashes), read at `sentAt` (`Date.now()` when the read went out). */
  applyHashes(record: SharedBreaker, hashes: SharedHashes, sentAt: number): void;
}

/**
 * The store's reads of the shared state: the periodic reconcile (repairing
 * what pub/sub missed), the read at start-up and after a repair. A frozen
 * Redis keeps its connections "ready" and answers nothing: until it answers
 * what it was sent, reconcile sends nothing more, so what waits in ioredis'
 * queue is one round of reads per breaker at most.
 *
 * @internal
 */
export class SharedStateReads {
  /** Reads (and PINGs) sent and not settled yet: answered, failed, or given up by ioredis, whatever their deadline decided meanwhile. */
  private inFlight = 0;
  /** A reconcile asked for while reads were in flight: it runs once they have settled. */
  private afterReads: { promise: Promise<void>; resolve: () => void } | undefined;

  constructor(private readonly link: ReadsLink) {}

  /**
   * Reads the shared state of every breaker now and adopts what changed. If
   * Redis has not yet answered the last reads, the read goes out once it has,
   * and this call waits for it at most `operationTimeoutMs`. Resolves whether
   * or not Redis answers.
   */
  async reconcile(): Promise<void> {
    const { connection, operationTimeoutMs } = this.link;
    if (!connection.running || !connection.connected) return;
    if (this.inFlight === 0) return this.reconcileNow();
    // The last reads are still unanswered: this round goes out once they settle, and this call waits for it within the deadline.
    this.afterReads ??= deferred();
    await withDeadline(this.afterReads.promise, operationTimeoutMs, () =>
      messages.timedOut('reconcile', operationTimeoutMs),
    ).catch(() => undefined);
  }

  /** Reads and applies the fleet's state of `records`, within `timeoutMs` (the operation deadline unless told). */
  async read(
    records: readonly SharedBreaker[],
    timeoutMs = this.link.operationTimeoutMs,
    timedOut = () => messages.timedOut('read', this.link.operationTimeoutMs),
  ): Promise<void> {
    if (records.length === 0) return;
    const { redis, connection, corrupt } = this.link;
    const sentAt = Date.now();
    const replies = await withDeadline(
      this.track(
        records.flatMap((record) => READ.map((key) => outcome(redis.hgetall(record.keys[key])))),
      ),
      timeoutMs,
      timedOut,
    );
    // One error per breaker, the first of its keys: any of them makes it a breaker with corrupt keys.
    const of = (i: number) => replies.slice(i * READ.length, (i + 1) * READ.length);
    corrupt.sort(
      records,
      records.map((_, i) => of(i).find((reply) => reply.error !== undefined)?.error),
    );
    connection.succeeded();
    records.forEach((record, i) => {
      const [state, force, config] = of(i);
      if (state!.error !== undefined || force!.error !== undefined || config!.error !== undefined)
        return;
      this.link.applyHashes(
        record,
        { state: state!.value!, force: force!.value!, config: config!.value! },
        sentAt,
      );
    });
  }

  private async reconcileNow(): Promise<void> {
    const { redis, connection, corrupt, operationTimeoutMs } = this.link;
    if (!connection.running || !connection.connected) return;
    try {
      if (connection.failing) {
        // Redis has not answered lately: one PING asks whether it does now, rather than a read per breaker.
        await withDeadline(this.track([redis.ping()]), operationTimeoutMs, () =>
          messages.timedOut('ping', operationTimeoutMs),
        );
        // Sharing resumes, and recovered() may have started the read already.
        connection.succeeded();
        if (this.inFlight > 0) return;
      }
      corrupt.retry();
      await this.read(this.link.all());
    } catch (error) {
      connection.failed(error);
    }
  }

  /** Counts `commands` in flight until each settles, and runs a reconcile that waited for them. */
  private track<T>(commands: Promise<T>[]): Promise<T[]> {
    this.inFlight += commands.length;
    const settled = () => {
      if (--this.inFlight > 0 || this.afterReads === undefined) return;
      const waiting = this.afterReads;
      this.afterReads = undefined;
      void this.reconcileNow().finally(waiting.resolve);
    };
    for (const command of commands) command.then(settled, settled);
    return Promise.all(commands);
  }
}
