import type { Cluster, Redis } from 'ioredis';
import type { RedisBreakerPubsub } from './redis-breaker-store-options.interface.js';
import { escapeKeyPart } from './redis-breaker.keys.js';
import { KEY_SUFFIX } from './redis-breaker.constants.js';
import { redisBreakerMessages as messages } from './redis-breaker.messages.js';

type Client = Redis | Cluster;

/** A Cluster client that routes `SSUBSCRIBE` to the node owning each channel's slot (ioredis `shardedSubscribers`). @internal */
export function routesShardedSubscriptions(client: Client): boolean {
  return client.isCluster === true && (client as Cluster).options?.shardedSubscribers === true;
}

/**
 * Whether the store signals with sharded pub/sub (`SPUBLISH` / `SSUBSCRIBE`,
 * one channel per breaker, in its slot) or classic `PUBLISH` on one channel.
 * `auto`: sharded on a Cluster client made with `shardedSubscribers: true`,
 * classic otherwise (a single Redis, an older server, a Cluster without it).
 * `sharded` on a Cluster that cannot route `SSUBSCRIBE` is refused: ioredis
 * would send every subscription to one node, which refuses the channels of
 * the slots it does not own.
 *
 * @internal
 */
export function isSharded(
  mode: RedisBreakerPubsub,
  redis: Client,
  subscriber: Client | undefined,
): boolean {
  // The subscriber is the one that subscribes: a given one decides; else it is a duplicate of `redis`, with its options.
  const listener = subscriber ?? redis;
  if (mode === 'classic') return false;
  if (mode === 'auto') return routesShardedSubscriptions(listener);
  if (listener.isCluster === true && !routesShardedSubscriptions(listener))
    throw new TypeError(
      messages.shardedWithoutRouting(subscriber === undefined ? 'redis' : 'subscriber'),
    );
  return true;
}

/**
 * The channel of breaker `name` in sharded mode: it carries the breaker's
 * hash tag, so it lives in the slot of the breaker's keys, where the scripts
 * that change them can `SPUBLISH` on it (a script stays within one slot).
 *
 * @internal
 */
export function shardChannelOf(prefix: string, name: string): string {
  return `${prefix}{${escapeKeyPart(name)}}:${KEY_SUFFIX.channel}`;
}

const sharded = new Map<string, string>();

/** `script` publishing with `SPUBLISH` instead of `PUBLISH` (made once per script). @internal */
export function shardedScript(script: string): string {
  let text = sharded.get(script);
  if (text === undefined) {
    text = script.replaceAll("redis.call('PUBLISH'", "redis.call('SPUBLISH'");
    sharded.set(script, text);
  }
  return text;
}
