import type { Cluster, Redis } from 'ioredis';
import { evalCall, permitCall, renewCall, type Writer } from './redis-breaker.commands.js';
import type { RedisBreakerConnection } from './redis-breaker.connection.js';
import type { RedisBreakerCoordinator, SharedBreaker } from './redis-breaker.coordinator.js';
import { isKeyError, type CorruptKeys } from './redis-breaker.corrupt-keys.js';
import type { SlotOutages } from './redis-breaker.slots.js';
import { withDeadline } from './redis-breaker.deadline.js';
import { redisBreakerMessages as messages } from './redis-breaker.messages.js';

/** What the permits need of their store. @internal */
export interface PermitLink {
  readonly redis: Redis | Cluster;
  readonly writer: Writer;
  readonly operationTimeoutMs: number;
  readonly connection: RedisBreakerConnection;
  readonly corrupt: CorruptKeys;
  readonly slots: SlotOutages;
  isShared(): boolean;
  /** Told how each request and renewal went (made after the permits, so asked for when needed). */
  coordination(): RedisBreakerCoordinator;
}

/**
 * The fleet's probe permit on Redis, for one replica: asked for when a shared
 * breaker half-opens, renewed while its probe runs. A rare path, kept out of
 * the store.
 *
 * @internal
 */
export class ProbePermits {
  constructor(private readonly link: PermitLink) {}

  renew(record: SharedBreaker, ttlMs: number): void {
    // Redis unreachable: the breaker probes locally anyway, and the claim lapses by itself.
    if (!this.link.isShared()) return;
    const episode = record.episode;
    const reply = evalCall<[number, number]>(
      this.link.redis,
      renewCall(this.link.writer, record, ttlMs),
    );
    withDeadline(reply, this.link.operationTimeoutMs, () =>
      messages.timedOut('renew', this.link.operationTimeoutMs),
    ).then(
      ([renewed, ms]) => {
        this.link.connection.succeeded();
        this.link.corrupt.healthy(record);
        this.link.slots.answered(record);
        // Not renewed: the claim lapsed and another replica took the permit; this one stops probing.
        this.link.coordination().onRenewed(record, episode, renewed === 1, ms);
      },
      (error: unknown) => this.failedOn(record, error),
    );
  }

  request(record: SharedBreaker, ttlMs: number): void {
    const reply = evalCall<[number, number]>(
      this.link.redis,
      permitCall(this.link.writer, record, ttlMs),
    );
    withDeadline(reply, this.link.operationTimeoutMs, () =>
      messages.timedOut('permit', this.link.operationTimeoutMs),
    ).then(
      ([won, ms]) => {
        this.link.connection.succeeded();
        this.link.corrupt.healthy(record);
        this.link.slots.answered(record);
        this.link.coordination().onPermit(record, won === 1, ms);
      },
      (error: unknown) => {
        this.failedOn(record, error);
        this.link.coordination().onPermit(record, undefined, 0);
      },
    );
  }

  /** An operation on the keys of `record` failed: a key error isolates that breaker, anything else is an outage (on a Cluster, of its slot). */
  private failedOn(record: SharedBreaker, error: unknown): void {
    if (isKeyError(error)) this.link.corrupt.report(record, error);
    else this.link.slots.keysFailed(record, error);
  }
}
