import type { SharedBreaker } from './redis-breaker.coordinator.js';
import { isKeyError } from './redis-breaker.corrupt-keys.js';

/** What the tracker needs from the store. @internal */
export interface SlotOutagesLink {
  /** A Redis Cluster: errors are sorted per breaker; on a single server, any is an outage of the store. */
  readonly cluster: boolean;
  /** A breaker's slot stopped answering: the store's one warning of the outage, if it is the first sign of one. */
  failed(error: unknown): void;
  /** A breaker's slot answers again: it writes its latest transition again. */
  up(record: SharedBreaker): void;
  /** On a single server: an operation failed, an outage of the whole store. */
  outage(error: unknown): void;
}

/**
 * On a Redis Cluster, the breakers whose slot does not answer (its master is
 * down, or the cluster refuses it): each decides locally (`shared: false` in
 * its snapshot) while the breakers of the other slots keep sharing, and
 * shares again once a command on its own keys succeeds. The store reports
 * one outage for all of them, which ends when none is left down.
 *
 * @internal
 */
export class SlotOutages {
  private readonly down = new Set<SharedBreaker>();
  /** The change log's slot (`{~changes}`) did not answer: no breaker is local for it, but the outage goes on. */
  private logDown = false;

  constructor(private readonly link: SlotOutagesLink) {}

  /** Breakers whose slot is down now, and the change log's if it is. */
  get size(): number {
    return this.down.size + (this.logDown ? 1 : 0);
  }

  has(record: SharedBreaker): boolean {
    return this.down.has(record);
  }

  /** The breakers whose slot is down, by name (for a log line). */
  names(): string[] {
    return [...this.down].map((record) => record.name);
  }

  /**
   * Sorts one error per record (`undefined` for a success): on a Cluster,
   * each error that is not a key error marks its breaker's slot down, and is
   * left out of what it returns (the errors left for `CorruptKeys.sort`); each
   * success brings its breaker back. On a single server, `errors` as given.
   */
  sift(records: readonly SharedBreaker[], errors: readonly unknown[]): unknown[] {
    if (!this.link.cluster) return [...errors];
    return errors.map((error, i) => {
      const record = records[i]!;
      if (error === undefined || error === null) this.answered(record);
      else if (!isKeyError(error)) {
        this.failed(record, error);
        return undefined;
      }
      return error;
    });
  }

  /** On a Cluster, an operation on `record`'s keys failed with anything but a key error: its slot is down. */
  failed(record: SharedBreaker, error: unknown): void {
    this.down.add(record);
    this.link.failed(error);
  }

  /**
   * An operation on `record`'s keys alone (a fleet order, a key repair, a
   * read of it) failed with anything but a key error: on a Cluster its slot
   * is down, the other breakers share on; on a single server, the store is.
   */
  keysFailed(record: SharedBreaker, error: unknown): void {
    if (this.link.cluster) this.failed(record, error);
    else this.link.outage(error);
  }

  /** An operation on `record`'s keys succeeded: if its slot was down, it shares again. */
  answered(record: SharedBreaker): void {
    if (this.down.delete(record)) this.link.up(record);
  }

  /** On a Cluster, a read of the change log failed: the outage goes on until it answers, the breakers share on. */
  logFailed(error: unknown): void {
    this.logDown = true;
    this.link.failed(error);
  }

  logAnswered(): void {
    this.logDown = false;
  }

  clear(): void {
    this.down.clear();
    this.logDown = false;
  }
}
