import type { Cluster, Redis } from 'ioredis';
import {
  readChanged,
  readHead,
  startHead,
  type ChangeHead,
  type ChangeKeys,
} from './redis-breaker.changes.js';
import { outcome } from './redis-breaker.commands.js';
import type { RedisBreakerConnection } from './redis-breaker.connection.js';
import type { SharedBreaker } from './redis-breaker.coordinator.js';
import type { CorruptKeys } from './redis-breaker.corrupt-keys.js';
import type { SlotOutages } from './redis-breaker.slots.js';
import { deferred, withDeadline } from './redis-breaker.deadline.js';
import { redisBreakerMessages as messages } from './redis-breaker.messages.js';
import { nextMoment } from './redis-breaker.moments.js';

/** The hashes of one breaker as a read found them. @internal */
export interface SharedHashes {
  readonly state: Record<string, string>;
  readonly force: Record<string, string>;
  readonly config: Record<string, string>;
}

/** The hashes a read fetches per breaker, in this order. */
const READ = ['state', 'force', 'config'] as const;

/**
 * How many breakers one round trip reads (three `HGETALL` each, sent
 * together): a read of every breaker (hydration, recovery, `reconcile()`)
 * goes out in batches of this many, one after the other, so that what waits
 * in ioredis' queue and in Redis' output buffer stays bounded.
 *
 * @internal
 */
export const READ_BATCH = 250;

/** What the reads need from the store. @internal */
export interface ReadsLink {
  readonly redis: Redis | Cluster;
  readonly connection: RedisBreakerConnection;
  readonly corrupt: CorruptKeys;
  /** A Cluster: the breakers whose slot is down (what a read marks, and brings back). */
  readonly slots: SlotOutages;
  readonly operationTimeoutMs: number;
  /** The prefix's change log: what tells a quiet reconcile there is nothing to read. */
  readonly changes: ChangeKeys;
  /** This replica's name: it signs a count it starts. */
  readonly instanceId: string;
  /** Every breaker the store follows: what a read of everything reads. */
  all(): SharedBreaker[];
  /** The followed breakers named `name`. */
  named(name: string): readonly SharedBreaker[];
  /** What Redis holds for `record` (`HGETALL` of its state, force and config hashes), read at `sentAt` (the moment the read went out, see `nextMoment`). */
  applyHashes(record: SharedBreaker, hashes: SharedHashes, sentAt: number): void;
}

/** Where this replica stands in the change log: every change up to `version` of `epoch` is read. */
/** On a Cluster, the change log's slot did not answer (see `SlotOutages.logFailed`). */
const LOG_DOWN = Symbol('log down');

interface Cursor {
  readonly epoch: string | undefined;
  readonly version: number;
}

/**
 * The store's reads of the shared state. The periodic reconcile costs one
 * command when nothing changed (`HMGET` of the change log's head), whatever
 * the number of breakers; otherwise it reads the breakers changed since it
 * last looked (and those heard on the channel since, so that a forged signal
 * is undone by what Redis holds). Everything is read, in bounded batches, at
 * start-up, after an outage, when the log cannot be followed (Redis lost it,
 * it was trimmed past this replica, junk) and on `reconcile()`.
 *
 * A frozen Redis keeps its connections "ready" and answers nothing: until it
 * answers what it was sent, reconcile sends nothing more, so what waits in
 * ioredis' queue is one batch of reads at most.
 *
 * @internal
 */
export class SharedStateReads {
  /** Reads (and PINGs) sent and not settled yet: answered, failed, or given up by ioredis, whatever their deadline decided meanwhile. */
  private inFlight = 0;
  /** Reconcile rounds under way: a round of several batches has moments with nothing in flight, and must not be overtaken then. */
  private rounds = 0;
  /** A reconcile asked for while reads were in flight: it runs once they have settled, reading everything if one of them asked to. */
  private afterReads: { promise: Promise<void>; resolve: () => void; all: boolean } | undefined;
  /** `undefined`: the next reconcile reads everything. */
  private cursor: Cursor | undefined;
  /** Breakers read at least once: one followed later (registered after hydration) is read at the next reconcile. */
  private readonly readOnce = new WeakSet<SharedBreaker>();
  /** Names of followed breakers heard on the channel since the last reconcile. */
  private heardSince = new Set<string>();

  constructor(private readonly link: ReadsLink) {}

  /** A signal or an order about `name` arrived: the next reconcile reads it back, whatever the log says. */
  heard(name: string): void {
    if (this.link.named(name).length > 0) this.heardSince.add(name);
  }

  /**
   * Reads the shared state now and adopts what changed: every breaker, or
   * with `changedOnly` those the change log names (what the periodic
   * reconcile does). If Redis has not yet answered the last reads, the read
   * goes out once they settle, and this call waits for it at most
   * `operationTimeoutMs`. Resolves whether or not Redis answers.
   */
  async reconcile(changedOnly = false): Promise<void> {
    const { connection, operationTimeoutMs } = this.link;
    if (!connection.running || !connection.connected) return;
    if (this.inFlight === 0 && this.rounds === 0) return this.reconcileNow(!changedOnly);
    // The last reads are still unanswered: this round goes out once they settle, and this call waits for it within the deadline.
    this.afterReads ??= { ...deferred(), all: false };
    this.afterReads.all ||= !changedOnly;
    await withDeadline(this.afterReads.promise, operationTimeoutMs, () =>
      messages.timedOut('reconcile', operationTimeoutMs),
    ).catch(() => undefined);
  }

  /**
   * Holds the periodic rounds back until the returned function is called: a
   * start-up read, with its wait for the connections. A round due meanwhile
   * waits for it instead of finding no cursor yet and reading everything a
   * second time.
   */
  hold(): () => void {
    this.rounds++;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.rounds--;
      this.runWaiting();
    };
  }

  /**
   * Start-up: reads `records` (within `timeoutMs` in all when told, else each
   * batch within the operation deadline), and starts following the change
   * log from where it stood before the read.
   */
  async hydrate(
    records: readonly SharedBreaker[],
    timeoutMs?: number,
    timedOut?: () => string,
  ): Promise<void> {
    const started = Date.now();
    // On a Cluster, the change log's slot down makes no breaker local: each is read, and sorted by its own slot.
    const head = await this.logHead(undefined, timeoutMs, timedOut);
    await this.read(
      records,
      timeoutMs === undefined ? undefined : Math.max(1, timeoutMs - (Date.now() - started)),
      timedOut,
    );
    if (head !== LOG_DOWN) this.cursor ??= head && { epoch: head.epoch, version: head.version };
    this.link.connection.verified();
  }

  /**
   * Reads and applies the fleet's state of `records`, in batches of
   * `READ_BATCH` breakers: within `timeoutMs` in all when told, else each
   * batch within the operation deadline.
   */
  async read(
    records: readonly SharedBreaker[],
    timeoutMs?: number,
    timedOut = () => messages.timedOut('read', this.link.operationTimeoutMs),
  ): Promise<void> {
    const until = timeoutMs === undefined ? undefined : Date.now() + timeoutMs;
    for (let from = 0; from < records.length; from += READ_BATCH) {
      const left =
        until === undefined ? this.link.operationTimeoutMs : Math.max(1, until - Date.now());
      await this.readBatch(records.slice(from, from + READ_BATCH), left, timedOut);
    }
  }

  private async readBatch(
    records: readonly SharedBreaker[],
    timeoutMs: number,
    timedOut: () => string,
  ): Promise<void> {
    const { redis, connection, corrupt, slots } = this.link;
    const sentAt = nextMoment();
    // A Cluster: a deadline per key, so that the keys of a dead node's slots time out alone.
    const each = <T>(reply: Promise<T>) =>
      redis.isCluster === true ? withDeadline(reply, timeoutMs, timedOut) : reply;
    const replies = await withDeadline(
      this.track(
        records.flatMap((record) =>
          READ.map((key) => outcome(each(redis.hgetall(record.keys[key])))),
        ),
      ),
      timeoutMs,
      timedOut,
    );
    // One error per breaker, the first of its keys: any of them makes it a breaker with corrupt keys (or, on a
    // Cluster, whose slot is down).
    const of = (i: number) => replies.slice(i * READ.length, (i + 1) * READ.length);
    corrupt.sort(
      records,
      slots.sift(
        records,
        records.map((_, i) => of(i).find((reply) => reply.error !== undefined)?.error),
      ),
    );
    connection.succeeded();
    records.forEach((record, i) => {
      const [state, force, config] = of(i);
      if (state!.error !== undefined || force!.error !== undefined || config!.error !== undefined)
        return;
      this.readOnce.add(record);
      this.link.applyHashes(
        record,
        { state: state!.value!, force: force!.value!, config: config!.value! },
        sentAt,
      );
    });
  }

  /** The change log's head, within `timeoutMs` (the operation deadline unless told); `undefined` when it is junk. */
  private head(
    timeoutMs = this.link.operationTimeoutMs,
    timedOut = () => messages.timedOut('read', this.link.operationTimeoutMs),
  ): Promise<ChangeHead | undefined> {
    const { redis, changes } = this.link;
    return withDeadline(
      this.track([readHead(redis, changes)]).then(([head]) => head),
      timeoutMs,
      timedOut,
    );
  }

  /**
   * `head` if it is a count to follow; else (no count, junk) the one
   * `START_SCRIPT` starts. What a read of everything follows from.
   */
  private async startedHead(
    head: ChangeHead | undefined,
    timeoutMs = this.link.operationTimeoutMs,
    timedOut = () => messages.timedOut('read', this.link.operationTimeoutMs),
  ): Promise<ChangeHead | undefined> {
    if (head?.epoch !== undefined) return head;
    const { redis, changes, instanceId } = this.link;
    return withDeadline(
      this.track([startHead(redis, changes, Date.now(), instanceId)]).then(([h]) => h),
      timeoutMs,
      timedOut,
    );
  }

  /** Reads every breaker, and follows the log from where its head stood before the read (`known`: the head, already read). */
  private async readAll(known?: { head: ChangeHead | undefined | typeof LOG_DOWN }): Promise<void> {
    this.cursor = undefined;
    const head = await this.logHead(known);
    this.heardSince.clear();
    await this.read(this.link.all());
    // The log's slot down (a Cluster): the next reconcile reads everything again.
    if (head !== LOG_DOWN) this.cursor = head && { epoch: head.epoch, version: head.version };
    // Every breaker answered (or, on a Cluster, is marked down): what ends an outage (one node's answer does not).
    this.link.connection.verified();
  }

  /** The head a read of everything follows from; on a Cluster, `LOG_DOWN` when only the change log's slot fails. */
  private async logHead(
    known?: { head: ChangeHead | undefined | typeof LOG_DOWN },
    timeoutMs?: number,
    timedOut?: () => string,
  ): Promise<ChangeHead | undefined | typeof LOG_DOWN> {
    if (known?.head === LOG_DOWN) return LOG_DOWN;
    try {
      const head = await this.startedHead(
        known === undefined ? await this.head(timeoutMs, timedOut) : known.head,
        timeoutMs,
        timedOut,
      );
      this.link.slots.logAnswered();
      return head;
    } catch (error) {
      if (this.link.redis.isCluster !== true) throw error;
      this.link.slots.logFailed(error);
      return LOG_DOWN;
    }
  }

  /** Reads the breakers changed since the cursor (or everything, when the log cannot tell). */
  private async readChanged(): Promise<void> {
    const cursor = this.cursor;
    if (cursor === undefined) return this.readAll();
    let head: ChangeHead | undefined;
    try {
      head = await this.head();
    } catch (error) {
      // A Cluster: the log's slot alone may be down, and the breakers' own slots answer.
      if (this.link.redis.isCluster !== true) throw error;
      this.link.slots.logFailed(error);
      return this.readAll({ head: LOG_DOWN });
    }
    if (
      head === undefined ||
      // Another count than the one this replica follows: Redis lost it (a restart without persistence, FLUSHALL), or it was junk.
      head.epoch !== cursor.epoch ||
      head.version < cursor.version ||
      head.trimmed > cursor.version
    )
      return this.readAll({ head });
    const names = this.heardSince;
    this.heardSince = new Set();
    if (head.version > cursor.version) {
      const { redis, changes, operationTimeoutMs } = this.link;
      const [changed] = await withDeadline(
        this.track([readChanged(redis, changes, cursor.version, head.version)]),
        operationTimeoutMs,
        () => messages.timedOut('read', operationTimeoutMs),
      );
      if (changed === undefined) return this.readAll({ head });
      for (const name of changed) names.add(name);
    }
    const records = this.link.all().filter((record) => !this.readOnce.has(record));
    for (const name of names)
      for (const record of this.link.named(name))
        if (this.readOnce.has(record)) records.push(record);
    await this.read(records);
    this.cursor = { epoch: head.epoch, version: head.version };
  }

  private async reconcileNow(all: boolean): Promise<void> {
    const { redis, connection, corrupt, operationTimeoutMs } = this.link;
    if (!connection.running || !connection.connected) return;
    this.rounds++;
    try {
      if (connection.verifying) {
        // A Cluster answers a PING while a node is down: only a read of every breaker (each batch marking the
        // breakers whose slot is down, the change log's head first) says that every node the store needs answers.
        all = true;
      } else if (connection.failing) {
        // Redis has not answered lately: one PING asks whether it does now, rather than a read per breaker.
        await withDeadline(this.track([redis.ping()]), operationTimeoutMs, () =>
          messages.timedOut('ping', operationTimeoutMs),
        );
        // Sharing resumes, and recovered() may have started the read already.
        connection.succeeded();
        // recovered() asked for a read of everything meanwhile: it runs once this round ends.
        if (this.inFlight > 0 || this.afterReads !== undefined) return;
        // After an outage, everything is read once: what changed meanwhile may be anywhere.
        all = true;
      }
      corrupt.retry();
      await (all ? this.readAll() : this.readChanged());
    } catch (error) {
      // Whatever was missed is read by the next reconcile, which reads everything.
      this.cursor = undefined;
      connection.failed(error);
    } finally {
      this.rounds--;
      this.runWaiting();
    }
  }

  /** Runs the reconcile that waited, once nothing is in flight and no round is under way. */
  private runWaiting(): void {
    if (this.inFlight > 0 || this.rounds > 0 || this.afterReads === undefined) return;
    const waiting = this.afterReads;
    this.afterReads = undefined;
    void this.reconcileNow(waiting.all).finally(waiting.resolve);
  }

  /** Counts `commands` in flight until each settles, and runs a reconcile that waited for them. */
  private track<T>(commands: Promise<T>[]): Promise<T[]> {
    this.inFlight += commands.length;
    const settled = () => {
      this.inFlight--;
      this.runWaiting();
    };
    for (const command of commands) command.then(settled, settled);
    return Promise.all(commands);
  }
}
