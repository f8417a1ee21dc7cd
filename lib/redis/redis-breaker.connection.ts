import type { Cluster, Redis } from 'ioredis';
import { timerDelay } from '../core/calls/timer-delay.js';
import type { RedisBreakerStoreLogger } from './redis-breaker-store-options.interface.js';
import { withDeadline } from './redis-breaker.deadline.js';
import { redisBreakerMessages as messages } from './redis-breaker.messages.js';

type Client = Redis | Cluster;
type Listener = (...args: unknown[]) => void;

/**
 * Where the store stands with Redis (see `RedisBreakerConnection`):
 *
 * - `idle`: made, not started; errors of the clients are heard and ignored;
 * - `connecting`: started, waiting for both connections to be ready and the
 *   channel subscribed (what `hydrate()` waits for); breakers decide locally;
 * - `shared`: both connections ready, the channel subscribed, and the last
 *   operation succeeded: breakers share their state;
 * - `outage`: an error, a closed connection or a failed operation was
 *   reported (one warning): breakers decide locally (fail open);
 * - `recovering`: an outage was reported (an `error` event) while both
 *   connections stayed ready and no operation failed: breakers share, and the
 *   next operation that succeeds ends the outage;
 * - `closed`: for good; nothing is reported any more.
 *
 * @internal
 */
export type ConnectionState = 'idle' | 'connecting' | 'shared' | 'outage' | 'recovering' | 'closed';

/** What the connection needs from the store. @internal */
export interface ConnectionOptions {
  /** The client every command goes through. */
  readonly redis: Client;
  /** The pub/sub connection given; `undefined`: a duplicate of `redis`, made on `start()` and quit on `close()`. */
  readonly subscriber: Client | undefined;
  /** The channel subscribed to (classic pub/sub). */
  readonly channel: string;
  /** Sharded pub/sub: `SSUBSCRIBE` to each channel given to `follow()`, instead of `SUBSCRIBE` to `channel`. */
  readonly sharded?: boolean;
  readonly operationTimeoutMs: number;
  /** Also quit `redis` on `close()`. */
  readonly closeClient: boolean;
  /** Where the one warning per outage and the line that ends it go. */
  readonly logger: RedisBreakerStoreLogger | undefined;
  /**
   * A Redis Cluster: a node can be down while the others answer (a `PING`, a
   * command for another slot, a `ready` event). An outage then ends only when a
   * read of every breaker succeeds (`verified()`), never on one success
   * elsewhere, which made every store flap between shared and local.
   */
  readonly cluster?: boolean;
  /** A Cluster: how many breakers have their slot down (see `SlotOutages`); an outage ends only once none has. */
  readonly slotsDown?: () => number;
  /** Measures how long an outage lasted. Default `Date.now()`. */
  readonly now?: () => number;
  /** A message on the channel. */
  message(message: string): void;
  /** An outage ended: tell the fleet again what it missed. */
  recovered(): void;
}

/**
 * The store's two connections to Redis (commands, and the subscription to
 * the channel) and whether they can be counted on: the state machine of
 * `ConnectionState`. It reports each outage once (a warning, whatever number
 * of errors, closes and failed operations it is made of), counts every
 * error, and says when it ends; it sends no command of its own but
 * `SUBSCRIBE` (and `UNSUBSCRIBE` / `QUIT` on close). What to send, and what
 * to do when sharing resumes, is the store's.
 *
 * Moves:
 * - `start()`: idle → connecting;
 * - both clients `ready` and the channel subscribed: connecting → shared, and
 *   outage → shared (a `ready` event also clears the last failed operation;
 *   on a Cluster an outage waits for `verified()`);
 * - an `error` event, a `close` event, a failed subscription or `failed()`:
 *   → outage (→ recovering for an `error` on connections that stay ready);
 * - `slotFailed()` (a Cluster, one breaker's slot down): → recovering, the
 *   outage reported, the other breakers sharing on;
 * - `succeeded()`: outage (with both connections ready) or recovering → shared
 *   (on a Cluster, only `verified()` with no breaker's slot down);
 * - `close()`: any → closed.
 *
 * Ending an outage logs how long it lasted, and the `recovered()` hook lets the
 * store tell the fleet what it missed.
 *
 * @internal
 */
export class RedisBreakerConnection {
  readonly redis: Client;
  private readonly now: () => number;
  /** See `ConnectionOptions.subscriber`: given, or made on `start()`. Its errors must have a listener from its first moment, or ioredis prints each of them. */
  private subscriber: Client | undefined;
  private readonly ownsSubscriber: boolean;
  private readonly detach: (() => void)[] = [];
  private phase: 'idle' | 'running' | 'closed' = 'idle';
  private isSubscribed = false;
  /** The last store operation failed or timed out; cleared by the next success, or a fresh connection. */
  private lastFailed = false;
  private errorCount = 0;
  /** When the current outage was reported (one warning per outage); undefined while none is. */
  private downSince: number | undefined;
  /** Sharded: the channels followed (one per breaker), subscribed on `start()` and when followed after it. */
  private readonly shardChannels = new Set<string>();
  /** Sharded on a Cluster: the channels whose `SSUBSCRIBE` failed (their slot is down), tried again until each lands. */
  private readonly shardsToRetry = new Set<string>();
  private retryingShards = false;
  /** `whenReady()` promises waiting for both connections to be ready and subscribed. */
  private readonly readyWaiters = new Set<() => void>();

  constructor(private readonly options: ConnectionOptions) {
    this.redis = options.redis;
    this.subscriber = options.subscriber;
    this.ownsSubscriber = options.subscriber === undefined;
    this.now = options.now ?? Date.now;
    // ioredis prints every error event nobody listens to, and a client made in the store's options (`new Redis(url)`)
    // is already connecting: with Redis down at boot, that is a stack trace per retry before the store ever starts.
    for (const client of [this.redis, this.subscriber])
      if (client !== undefined) this.on(client, 'error', this.onError);
  }

  get state(): ConnectionState {
    if (this.phase !== 'running') return this.phase;
    if (this.downSince === undefined) return this.shared ? 'shared' : 'connecting';
    return this.shared ? 'recovering' : 'outage';
  }

  /** Started and not closed: operations may be sent (they may still fail). */
  get running(): boolean {
    return this.phase === 'running';
  }

  /** Whether breakers share their state now: both connections are ready, the channel subscribed, and the last operation succeeded. */
  get shared(): boolean {
    return this.phase === 'running' && !this.lastFailed && this.isSubscribed && this.connected;
  }

  /** Both connections are ready (the last operation may still have failed: a frozen Redis keeps its connections "ready"). */
  get connected(): boolean {
    return this.redis.status === 'ready' && this.subscriber?.status === 'ready';
  }

  /** The last operation failed or timed out, and nothing has succeeded since. */
  get failing(): boolean {
    return this.lastFailed;
  }

  /** Connection errors, failed subscriptions and failed operations since the store started. */
  get errors(): number {
    return this.errorCount;
  }

  /** Connects both clients (making the subscriber if none was given) and subscribes; `false` if already started or closed. */
  start(): boolean {
    if (this.phase !== 'idle') return false;
    this.phase = 'running';
    // Redis.duplicate() and Cluster.duplicate() both copy the connection options; their signatures differ.
    // Made only now, and given its listeners in the same step: nothing it does goes unheard.
    const subscriber = (this.subscriber ??= (this.redis as Redis).duplicate());
    // A fresh connection is a fresh start: the failure of an operation on the old one no longer counts.
    const ready = () => {
      if (!this.verifying) this.lastFailed = false;
      this.notifyReady();
      this.recovered();
    };
    this.on(this.redis, 'ready', ready);
    this.on(subscriber, 'ready', ready);
    if (this.ownsSubscriber) this.on(subscriber, 'error', this.onError);
    for (const client of [this.redis, subscriber])
      this.on(client, 'close', () => this.down(new Error(messages.connectionClosed())));
    if (this.options.sharded === true)
      this.on(subscriber, 'smessage', (channel, message) => {
        if (this.shardChannels.has(String(channel))) this.options.message(String(message));
      });
    else
      this.on(subscriber, 'message', (channel, message) => {
        if (channel === this.options.channel) this.options.message(String(message));
      });
    if (this.ownsSubscriber && subscriber.status === 'wait')
      subscriber.connect().catch(() => undefined);
    if (this.redis.status === 'wait') this.redis.connect().catch(() => undefined);
    void this.subscribe(subscriber);
    return true;
  }

  /**
   * Sharded: listens on `channel` too (subscribed now if started, else on
   * `start()`); ioredis subscribes it again after a reconnect or a slot
   * moving. A failed subscription is an outage; the reconcile repairs what
   * was missed meanwhile. Classic: nothing (one channel for all).
   */
  follow(channel: string): void {
    if (this.options.sharded !== true || this.shardChannels.has(channel)) return;
    this.shardChannels.add(channel);
    if (this.phase !== 'running' || this.subscriber === undefined) return;
    if (this.options.cluster === true) void this.subscribeShards(this.subscriber, [channel]);
    else this.subscriber.ssubscribe(channel).catch((error: unknown) => this.failed(error));
  }

  /** Resolves once both connections are ready and the channel is subscribed, or the store closes; `cancel()` stops waiting. */
  whenReady(): Promise<void> & { cancel(): void } {
    let waiter: (() => void) | undefined;
    const promise = new Promise<void>((resolve) => {
      waiter = resolve;
      this.readyWaiters.add(resolve);
    });
    this.notifyReady();
    return Object.assign(promise, { cancel: () => this.readyWaiters.delete(waiter!) });
  }

  /** An operation failed or timed out: counted, and the outage reported if it is the first sign of one. */
  failed(error: unknown): void {
    if (this.phase !== 'running') return;
    this.errorCount++;
    this.lastFailed = true;
    this.down(error);
  }

  /** On a Cluster, an operation on one breaker's keys failed: its slot is down (`SlotOutages`), the others share on; reported once per outage. */
  slotFailed(error: unknown): void {
    if (this.phase !== 'running') return;
    this.errorCount++;
    this.down(error);
  }

  /** An operation succeeded: if that ends an outage, the store hears of it (on a Cluster, only `verified()` ends one). */
  succeeded(): void {
    if (this.verifying) return;
    this.lastFailed = false;
    this.recovered();
  }

  /** A read of every breaker succeeded: every node the store needs answers, and an outage (a Cluster's too) ends. */
  verified(): void {
    this.lastFailed = false;
    this.recovered(true);
  }

  /** A Cluster in an outage: one node's answer says nothing of the others, so sharing waits for `verified()`. */
  get verifying(): boolean {
    return this.options.cluster === true && this.downSince !== undefined;
  }

  /**
   * Closed for good: a `whenReady()` still waiting resolves now; the
   * subscriber made by the store is quit (a given one only unsubscribes),
   * `redis` too with `closeClient`, and the listeners go last.
   */
  async close(): Promise<void> {
    if (this.phase === 'closed') return;
    const wasRunning = this.phase === 'running';
    this.phase = 'closed';
    for (const resolve of this.readyWaiters) resolve();
    this.readyWaiters.clear();
    const ms = this.options.operationTimeoutMs;
    if (this.ownsSubscriber) {
      if (this.subscriber !== undefined) await this.shutdown(this.subscriber);
    } else if (wasRunning && this.subscriber !== undefined) {
      const unsubscribed =
        this.options.sharded === true
          ? Promise.all([...this.shardChannels].map((c) => this.subscriber!.sunsubscribe(c)))
          : this.subscriber.unsubscribe(this.options.channel);
      await withDeadline(unsubscribed, ms, () => messages.timedOut('unsubscribe', ms)).catch(
        () => undefined,
      );
    }
    if (this.options.closeClient) await this.shutdown(this.redis);
    // Only now: a connection being shut down may still emit an error, which nobody else may be listening for.
    for (const off of this.detach.splice(0)) off();
  }

  /** Counted and reported once per outage while the store runs; before it starts (and after close) only heard, so that ioredis prints nothing. */
  private readonly onError = (error: unknown): void => {
    if (this.phase !== 'running') return;
    this.errorCount++;
    this.down(error);
  };

  private async subscribe(subscriber: Client): Promise<void> {
    // ioredis resubscribes by itself after a reconnect; this first subscription is retried until it lands.
    for (;;) {
      try {
        // Sharded: one channel per command, since a Cluster takes the channels of one slot per SSUBSCRIBE.
        if (this.options.sharded === true && this.options.cluster === true)
          await this.subscribeShards(subscriber, [...this.shardChannels]);
        else if (this.options.sharded === true)
          await Promise.all([...this.shardChannels].map((c) => subscriber.ssubscribe(c)));
        else await subscriber.subscribe(this.options.channel);
        this.isSubscribed = true;
        this.notifyReady();
        this.recovered();
        return;
      } catch (error) {
        if (this.phase !== 'running') return;
        this.errorCount++;
        this.down(error);
        await new Promise<void>((resolve) =>
          setTimeout(resolve, timerDelay(Math.min(this.options.operationTimeoutMs, 1_000))).unref(),
        );
      }
    }
  }

  /**
   * Sharded on a Cluster: `SSUBSCRIBE` to each of `channels` on its slot's
   * node. A channel that fails is its slot's outage, not the store's (see
   * `SlotOutages`: the breaker's own commands fail too, and it decides
   * locally): reported once per outage, and tried again about every second
   * until it lands. Resolves once each channel has answered or had the
   * operation deadline to: one of a node that is down may wait for it, and
   * a master down at start-up must not keep `whenReady()`, and `hydrate()`
   * with it, from the breakers of the others. A slow one is not an outage.
   */
  private async subscribeShards(subscriber: Client, channels: readonly string[]): Promise<void> {
    const ms = this.options.operationTimeoutMs;
    await Promise.all(
      channels.map((channel) => {
        const subscribed = subscriber.ssubscribe(channel).then(
          () => undefined,
          (error: unknown) => {
            this.shardsToRetry.add(channel);
            this.slotFailed(error);
            void this.retryShards(subscriber);
          },
        );
        return withDeadline(subscribed, ms, () => channel).catch(() => undefined);
      }),
    );
  }

  /** The failed channels again, one round at a time, until none is left or the store closes. */
  private async retryShards(subscriber: Client): Promise<void> {
    if (this.retryingShards) return;
    this.retryingShards = true;
    try {
      while (this.phase === 'running' && this.shardsToRetry.size > 0) {
        await new Promise<void>((resolve) =>
          setTimeout(resolve, timerDelay(Math.min(this.options.operationTimeoutMs, 1_000))).unref(),
        );
        if (this.phase !== 'running') return;
        const channels = [...this.shardsToRetry];
        this.shardsToRetry.clear();
        await this.subscribeShards(subscriber, channels);
      }
    } finally {
      this.retryingShards = false;
    }
  }

  private notifyReady(): void {
    if (!this.isSubscribed || !this.connected) return;
    for (const resolve of this.readyWaiters) resolve();
    this.readyWaiters.clear();
  }

  /** Sharing is interrupted: the one warning of this outage, and breakers decide locally until it ends. */
  private down(error: unknown): void {
    if (this.phase !== 'running' || this.downSince !== undefined) return;
    this.downSince = this.now();
    this.options.logger?.warn(
      messages.unreachable(error instanceof Error ? error.message : String(error)),
    );
  }

  /**
   * Called whenever something worked: if that ends an outage, say so, and
   * let the store tell the fleet what it missed. On a Cluster only a read of
   * every breaker (`verified`) ends one: a reconnect (a `ready` event) says
   * nothing of a node that is down, and ending on it made a store that
   * started with a master down warn twice.
   */
  private recovered(verified = false): void {
    if (this.downSince === undefined || !this.shared || (this.options.slotsDown?.() ?? 0) > 0)
      return;
    if (this.options.cluster === true && !verified) return;
    const down = this.now() - this.downSince;
    this.downSince = undefined;
    this.options.logger?.log(messages.resumed(down));
    this.options.recovered();
  }

  /** QUIT within the operation deadline when connected (a lazy client that never connected is not woken for it), then drop the socket. */
  private async shutdown(client: Client): Promise<void> {
    if (client.status === 'end') return;
    const ms = this.options.operationTimeoutMs;
    const ended = new Promise<void>((resolve) => client.once('end', () => resolve()));
    if (client.status === 'ready')
      await withDeadline(client.quit(), ms, () => messages.timedOut('quit', ms)).catch(
        () => undefined,
      );
    client.disconnect();
    // Resolve close() only once the connection is gone, so that nothing of the store is left running after it.
    await withDeadline(ended, ms, () => messages.timedOut('end', ms)).catch(() => undefined);
  }

  private on(client: Client, event: string, listener: Listener): void {
    client.on(event, listener);
    this.detach.push(() => client.off(event, listener));
  }
}
