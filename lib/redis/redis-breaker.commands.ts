import type { Cluster, Redis } from 'ioredis';
import { changeKeys, hasHashTag, MARK_SCRIPT, type ChangeKeys } from './redis-breaker.changes.js';
import { KEY_TTL_MS, REDIS_BREAKER_STORE_DEFAULTS } from './redis-breaker.constants.js';
import { permitTtlMs } from './redis-breaker.durations.js';
import { channelOf, replicasSeenKey } from './redis-breaker.keys.js';
import type { SharedBreaker, WriteOp } from './redis-breaker.coordinator.js';
import { redisBreakerMessages as messages } from './redis-breaker.messages.js';
import { withDeadline } from './redis-breaker.deadline.js';
import { isSharded, shardChannelOf, shardedScript } from './redis-breaker.pubsub.js';
import type { RedisBreakerStoreOptions } from './redis-breaker-store-options.interface.js';
import { isAuto, quorumOf } from './redis-breaker.quorum.js';
import { REDIS_BREAKER_SCRIPTS as SCRIPTS } from './redis-breaker.scripts.js';

/**
 * One call of a script (`EVAL`): the script, its KEYS and its ARGV, in the
 * order the script reads them (see `REDIS_BREAKER_SCRIPTS`).
 *
 * @internal
 */
export type ScriptCall = readonly [
  script: string,
  keys: readonly string[],
  args: readonly (string | number)[],
];

/** Who writes, and where the scripts publish: what every call of one store has in common. @internal */
export interface Writer {
  /** This replica's name in the quorum. */
  readonly instanceId: string;
  /** The channel the scripts publish each change on (classic pub/sub; see `signalChannel` for sharded). */
  readonly channel: string;
  /** The keys' prefix. */
  readonly prefix: string;
  /** Sharded pub/sub: each breaker's changes go out with `SPUBLISH` on a channel in its slot. */
  readonly sharded: boolean;
  /** The prefix's change log. */
  readonly changes: ChangeKeys;
  /**
   * Whether the scripts mark their changes in the log themselves (a single
   * Redis, or a prefix with a hash tag: one slot). Otherwise (a Cluster) the
   * writer marks them with `markCall` once the script has answered.
   */
  readonly marksInScript: boolean;
}

/** The writer of a store of `redis` under `prefix`, signalling as `options.pubsub` says (see `isSharded`). @internal */
export function writerOf(
  redis: Redis | Cluster,
  instanceId: string,
  prefix: string,
  options: Pick<RedisBreakerStoreOptions, 'pubsub' | 'subscriber'> = {},
): Writer {
  return {
    instanceId,
    channel: channelOf(prefix),
    prefix,
    sharded: isSharded(
      options.pubsub ?? REDIS_BREAKER_STORE_DEFAULTS.pubsub,
      redis,
      options.subscriber,
    ),
    changes: changeKeys(prefix),
    // A Cluster runs a script on one slot: the change log is in the breakers' slot only when the prefix has a hash tag.
    marksInScript: redis.isCluster !== true || hasHashTag(prefix),
  };
}

/** The channel the changes of breaker `name` are published on. @internal */
export function signalChannel(writer: Writer, name: string): string {
  return writer.sharded ? shardChannelOf(writer.prefix, name) : writer.channel;
}

/** `script` as `writer` runs it: publishing with `SPUBLISH` when sharded. @internal */
export function scriptOf(writer: Writer, script: string): string {
  return writer.sharded ? shardedScript(script) : script;
}

/** The change log's keys, as the state and order scripts take them after their own: none when they live in another slot. @internal */
export function markKeys(writer: Writer): readonly string[] {
  return writer.marksInScript ? [writer.changes.version, writer.changes.log] : [];
}

/**
 * On a Cluster whose prefix has no hash tag, marks `names` changed once their
 * scripts have answered (see `Writer.marksInScript`); elsewhere nothing (the
 * scripts did). A lost mark is a missed signal's twin: the replicas heard the
 * signal, and Redis holds the state for the next read of everything.
 *
 * @internal
 */
export function markApart(
  redis: Redis | Cluster,
  writer: Writer,
  now: number,
  names: readonly string[],
): void {
  if (writer.marksInScript || names.length === 0) return;
  void evalCall(redis, markCall(writer, now, names)).catch(() => undefined);
}

/** Marks `names` changed in the log, apart from the scripts that changed them (see `Writer.marksInScript`). @internal */
export function markCall(writer: Writer, now: number, names: readonly string[]): ScriptCall {
  return [
    MARK_SCRIPT,
    [writer.changes.version, writer.changes.log],
    [now, writer.instanceId, ...names],
  ];
}

/**
 * The script call that tells the fleet about one own transition of `record`:
 * an open report (or reopen verdict), a close verdict, or the withdrawal of
 * a report (a reset). `listed`: the replicas that report, for a quorum
 * `'auto'` (see `quorumOf`).
 *
 * @internal
 */
export function writeCall(
  writer: Writer,
  record: SharedBreaker,
  op: WriteOp,
  listed?: number,
): ScriptCall {
  const { keys } = record;
  const id = writer.instanceId;
  switch (op.kind) {
    case 'open':
      return [
        scriptOf(writer, SCRIPTS.open),
        // The registry too when it is in reach (a single Redis, or a prefix with a hash tag): the quorum 'auto' then
        // counts the replicas listed at the time of the write, not at this replica's last report.
        [
          keys.state,
          keys.opens,
          keys.probe,
          ...markKeys(writer),
          ...(writer.marksInScript ? [replicasSeenKey(writer.prefix)] : []),
        ],
        [
          id,
          op.openUntil,
          op.at,
          quorumOf(record, listed),
          op.reopen ? '1' : '0',
          signalChannel(writer, record.name),
          record.name,
          KEY_TTL_MS,
          isAuto(record) ? '1' : '0',
        ],
      ];
    case 'close':
      return [
        scriptOf(writer, SCRIPTS.close),
        [keys.state, keys.opens, keys.probe, ...markKeys(writer)],
        [id, op.at, signalChannel(writer, record.name), record.name, KEY_TTL_MS],
      ];
    default:
      return [SCRIPTS.withdraw, [keys.opens, keys.probe], [id]];
  }
}

/** Asks for the fleet's probe permit of `record` for `ttlMs`; the script answers `[won (1/0), ms left]`. @internal */
export function permitCall(writer: Writer, record: SharedBreaker, ttlMs: number): ScriptCall {
  return [
    SCRIPTS.permit,
    [record.keys.probe],
    [writer.instanceId, ttlMs, permitTtlMs(record.breaker.config)],
  ];
}

/** Extends the permit `writer` holds to `ttlMs`; the script answers `[renewed (1/0), ms left on the holder's permit]`. @internal */
export function renewCall(writer: Writer, record: SharedBreaker, ttlMs: number): ScriptCall {
  return [SCRIPTS.renew, [record.keys.probe], [writer.instanceId, ttlMs]];
}

/** Sends one script call. @internal */
export function evalCall<T>(redis: Redis | Cluster, [script, keys, args]: ScriptCall): Promise<T> {
  return redis.eval(script, keys.length, ...keys, ...args) as Promise<T>;
}

/**
 * Sends `calls` together and settles with one error per call (`undefined`
 * for a success), so that one breaker's error does not hide the others'
 * results. A single node gets one pipeline; a cluster gets the calls one by
 * one, since a pipeline must stay within one slot and breakers spread over slots.
 *
 * @internal
 */
export function evalEach(
  redis: Redis | Cluster,
  calls: readonly ScriptCall[],
  deadline?: { ms: number; timedOut: () => string },
): Promise<unknown[]> {
  if (redis.isCluster)
    return Promise.all(
      calls.map((call) => {
        const reply = evalCall(redis, call);
        return outcome(
          deadline === undefined ? reply : withDeadline(reply, deadline.ms, deadline.timedOut),
        ).then((o) => o.error);
      }),
    );
  const pipeline = redis.pipeline();
  for (const [script, keys, args] of calls) pipeline.eval(script, keys.length, ...keys, ...args);
  return pipeline.exec().then((replies) => calls.map((_, i) => replies?.[i]?.[0] ?? undefined));
}

/** Settles with the value or the error of `command`, so that one command's error does not hide the others' results. @internal */
export function outcome<T>(command: Promise<T>): Promise<{ value?: T; error?: unknown }> {
  return command.then(
    (value) => ({ value }),
    (error: unknown) => ({ error: error ?? new Error(messages.failedWithoutError()) }),
  );
}
