import type { Cluster, Redis } from 'ioredis';
import type { BreakerState } from '../core/index.js';
import type { FleetBreaker, FleetReplica, FleetView } from '../interfaces/fleet-view.interface.js';
import type { RedisBreakerStoreOptions } from './redis-breaker-store-options.interface.js';
import { evalCall, outcome, type ScriptCall } from './redis-breaker.commands.js';
import {
  KEY_TTL_MS,
  MAX_TIMER_MS,
  REDIS_BREAKER_STORE_DEFAULTS,
} from './redis-breaker.constants.js';
import type { SharedBreaker } from './redis-breaker.coordinator.js';
import { withDeadline } from './redis-breaker.deadline.js';
import { breakerKeys, replicasSeenKey } from './redis-breaker.keys.js';
import { redisBreakerMessages as messages } from './redis-breaker.messages.js';
import { decodeStateHash } from './redis-breaker.signal.js';

/**
 * A replica is listed this many reconcile intervals after its last report: a
 * report late by one interval (a slow tick, a short Redis hiccup) does not
 * drop it, and one that stopped is gone within a few intervals.
 *
 * @internal
 */
export const REPLICA_TTL_INTERVALS = 3;

/**
 * After a gap in this replica's reports (Redis unreachable or slow, a report
 * that failed) or when its report finds it no longer listed (Redis came back
 * empty, a flush, its listing expired), the fleet size counted before is kept this long on top of
 * `REPLICA_TTL_INTERVALS` intervals: the other replicas' listings may have
 * expired or been lost meanwhile, and each one needs to reconnect before it
 * reports again. ioredis waits at most 2 s between reconnection attempts by
 * default (a single Redis and a Cluster alike); this leaves 2.5 times that.
 *
 * @internal
 */
export const RELIST_GRACE_MS = 5_000;

/** The most breakers one replica's report lists not closed: the report's size stays bounded. @internal */
export const MAX_REPORTED_NOT_CLOSED = 1_000;

/** The registry's two keys: in one hash slot (`{~replicas}`, or the prefix's own tag), so one script updates both. @internal */
export function registryKeys(prefix: string): { seen: string; reports: string } {
  return { seen: replicasSeenKey(prefix), reports: `${prefix}{~replicas}:reports` };
}

// A key of another type where the registry keeps one of its two (a hand fix, another program under the prefix) is no
// registry: the scripts delete it and go on, found by the error of a command they send anyway (pcall), so a healthy
// registry costs no command more. Defines `failed(reply)`.
const REPAIR = `
local function failed(reply) return type(reply) == 'table' and reply.err ~= nil end
`;

// One round trip per interval, whatever the number of breakers: drops the replicas whose listing expired, records this
// one until now + its own TTL (replicas may reconcile at different intervals), as "<now> <report>" on Redis' clock. The
// two keys themselves live a day after the last report (KEY_TTL_MS), as a breaker's keys do. Answers how many replicas
// are listed, this one included: what the quorum 'auto' counts; and 1 when this replica was not listed (ZADD added it):
// Redis lost the registry, or this replica's listing expired, so the others' may be gone too until they report again.
const REPORT_SCRIPT = `
${REPAIR}
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[1])
local stale = redis.pcall('ZRANGEBYSCORE', KEYS[1], '-inf', now)
if failed(stale) then
  redis.call('DEL', KEYS[1])
  stale = {}
end
for _, id in ipairs(stale) do
  redis.call('ZREM', KEYS[1], id)
  redis.pcall('HDEL', KEYS[2], id)
end
local added = redis.call('ZADD', KEYS[1], now + ttl, ARGV[2])
if failed(redis.pcall('HSET', KEYS[2], ARGV[2], now .. ' ' .. ARGV[3])) then
  redis.call('DEL', KEYS[2])
  redis.call('HSET', KEYS[2], ARGV[2], now .. ' ' .. ARGV[3])
end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return { redis.call('ZCARD', KEYS[1]), added }
`;

// A replica that closes leaves at once.
const LEAVE_SCRIPT = `
redis.call('ZREM', KEYS[1], ARGV[1])
return redis.call('HDEL', KEYS[2], ARGV[1])
`;

// The replicas whose listing has not expired, with their reports, and Redis' time. A listing that expires later than
// any replica's TTL could make it (ARGV[1] from now: a score of +inf, a hand edit) is no replica's: it is dropped, or it
// would be listed for good, its breakers counted as open.
const LIST_SCRIPT = `
${REPAIR}
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local latest = now + tonumber(ARGV[1])
local seen = redis.pcall('ZRANGEBYSCORE', KEYS[1], '(' .. now, latest)
if failed(seen) then
  redis.call('DEL', KEYS[1])
  seen = {}
end
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. latest, '+inf')) do
  redis.call('ZREM', KEYS[1], id)
  redis.pcall('HDEL', KEYS[2], id)
end
local out = { tostring(now) }
for _, id in ipairs(seen) do
  local line = redis.pcall('HGET', KEYS[2], id)
  if failed(line) then
    redis.call('DEL', KEYS[2])
    line = false
  end
  out[#out + 1] = id
  out[#out + 1] = line or ''
end
return out
`;

/** What the registry reads of the store: its names, and whether it shares now. @internal */
export interface ReplicaRegistryStore {
  readonly keyPrefix: string;
  readonly instanceId: string;
  readonly shared: boolean;
}

/** A replica's report as stored: `s` shared, `b` breakers, `n` those not closed, `t` truncated. */
interface Report {
  s: boolean;
  b: number;
  n: Record<string, BreakerState>;
  t?: true;
}

/**
 * The fleet's registry of replicas: each one reports itself at every
 * reconcile interval (one script, its size bounded by the breakers not
 * closed), and `fleetView()` lists them with the shared state of every
 * breaker one of them sees not closed.
 *
 * @internal
 */
export class ReplicaRegistry {
  private readonly keys: { seen: string; reports: string };
  private readonly ttlMs: number;
  private readonly operationTimeoutMs: number;
  private readonly redis: Redis | Cluster;
  /** The report under way, which a second report waits for instead of doubling it. */
  private reporting: Promise<void> | undefined;
  /**
   * How many replicas were listed, itself included: the most of its last
   * `REPLICA_TTL_INTERVALS` reports, while a fleet that shrinks is counted
   * smaller once its replicas age out; and after a gap in its reports or a
   * registry Redis lost, at least the count from before, until the others
   * had the time to report again (`kept`). `undefined` before its first report.
   */
  get listed(): number | undefined {
    if (this.counts.length === 0) return undefined;
    const counted = Math.max(...this.counts);
    const kept = this.kept;
    return kept !== undefined && this.now() < kept.until ? Math.max(counted, kept.size) : counted;
  }
  private readonly counts: number[] = [];
  /**
   * The fleet size counted before a gap (see `RELIST_GRACE_MS`), kept until
   * `until` (this replica's clock): a replica back first after an outage
   * lists alone for a while, and the others are not gone for that.
   */
  private kept: { size: number; until: number } | undefined;
  /** A report was skipped (Redis unreachable) or failed since the last one that answered. */
  private missed = false;

  constructor(
    private readonly store: ReplicaRegistryStore,
    /** Every breaker the store follows. */
    private readonly followed: { all(): readonly SharedBreaker[] },
    options: Pick<RedisBreakerStoreOptions, 'redis' | 'reconcileIntervalMs' | 'operationTimeoutMs'>,
    /**
     * The store's connections: the replica reports itself as soon as they are
     * ready, then at every reconcile while they work (`shared`), also while a
     * Cluster slot of some breaker is down.
     */
    private readonly connection: { whenReady(): Promise<void>; readonly shared: boolean },
    /** What times how long a count from before a gap is kept. */
    private readonly now: () => number = Date.now,
  ) {
    const d = REDIS_BREAKER_STORE_DEFAULTS;
    this.redis = options.redis;
    this.keys = registryKeys(store.keyPrefix);
    this.ttlMs = (options.reconcileIntervalMs ?? d.reconcileIntervalMs) * REPLICA_TTL_INTERVALS;
    this.operationTimeoutMs = options.operationTimeoutMs ?? d.operationTimeoutMs;
    // A replica is listed from its start, not one interval later (resolves on close() too: report() then sends nothing).
    void connection.whenReady().then(() => this.report());
  }

  /** Records this replica (one at a time: a report Redis has not answered yet is not doubled, but waited for). Never rejects. */
  report(): Promise<void> {
    if (this.reporting !== undefined) return this.reporting;
    // Not while Redis is unreachable: the outage is the connection's to notice, and the replica ages out meanwhile. A
    // Cluster slot down (some breakers local, the store not `shared`) is no reason: the registry's own slot may well
    // answer, and a replica missing from it would drop out of the fleet view and of the quorum 'auto' count. If the
    // registry's slot is the one down, the report fails and only ages this replica.
    if (!this.connection.shared) {
      this.missed = true;
      return Promise.resolve();
    }
    this.reporting = this.send<[number, number]>([
      REPORT_SCRIPT,
      [this.keys.seen, this.keys.reports],
      [this.ttlMs, this.store.instanceId, JSON.stringify(this.ownReport()), KEY_TTL_MS],
    ]).then(
      ([listed, added]) => {
        this.counted(Number(listed), Number(added) === 1);
        this.reporting = undefined;
      },
      // The reconcile that runs beside it notices an outage; a missed report only ages this replica.
      () => {
        this.missed = true;
        this.reporting = undefined;
      },
    );
    return this.reporting;
  }

  /**
   * A report answered: `listed` replicas; `added` when this replica was not
   * listed any more (Redis lost the registry, or its listing expired). After
   * that, or after a gap in its reports, the others may not be listed again
   * yet: the count from before is kept a while.
   */
  private counted(listed: number, added: boolean): void {
    const before = this.listed;
    if ((this.missed || added) && before !== undefined)
      this.kept = { size: before, until: this.now() + this.ttlMs + RELIST_GRACE_MS };
    this.missed = false;
    this.counts.push(listed);
    if (this.counts.length > REPLICA_TTL_INTERVALS) this.counts.shift();
  }

  /** Removes this replica from the list (the store closes). Never rejects. */
  async leave(): Promise<void> {
    if (!this.connection.shared) return;
    await this.send([
      LEAVE_SCRIPT,
      [this.keys.seen, this.keys.reports],
      [this.store.instanceId],
    ]).catch(() => undefined);
  }

  /** The replicas listed now and the breakers any of them sees not closed; rejects when Redis does not answer within the operation deadline. */
  async read(): Promise<FleetView> {
    const reply = await this.send<string[]>([
      LIST_SCRIPT,
      [this.keys.seen, this.keys.reports],
      [REPLICA_TTL_INTERVALS * MAX_TIMER_MS],
    ]);
    const at = Number(reply[0]);
    const replicas: FleetReplica[] = [];
    for (let i = 1; i + 1 < reply.length; i += 2) {
      const line = reply[i + 1]!;
      const space = line.indexOf(' ');
      const report = parseReport(line.slice(space + 1));
      const seen = space > 0 ? Number(line.slice(0, space)) : Number.NaN;
      // A hand-edited line without a time reads as seen now: it is listed, and expires as any other.
      const lastSeenAt = Number.isFinite(seen) ? seen : at;
      replicas.push({
        instanceId: reply[i]!,
        lastSeenAt,
        ageMs: Math.max(0, at - lastSeenAt),
        shared: report.s,
        notClosed: report.n,
        breakers: report.b,
        ...(report.t === true ? { truncated: true } : {}),
      });
    }
    replicas.sort((a, b) =>
      a.instanceId < b.instanceId ? -1 : a.instanceId > b.instanceId ? 1 : 0,
    );
    // No prototype: a breaker named `__proto__` is a key like any other.
    const breakers = Object.create(null) as Record<string, FleetBreaker>;
    for (const replica of replicas)
      for (const [name, state] of Object.entries(replica.notClosed)) {
        const entry = (breakers[name] ??= {
          shared: { state: 'none' },
          replicasOpen: 0,
          replicasHalfOpen: 0,
          replicasNotClosed: 0,
        });
        entry.replicasNotClosed++;
        if (state === 'open' || state === 'isolated') entry.replicasOpen++;
        else if (state === 'half-open') entry.replicasHalfOpen++;
      }
    await this.readShared(breakers);
    return { at, replicas, breakers };
  }

  /**
   * The shared state hash of each breaker listed (bounded by the breakers not
   * closed somewhere). On a Cluster, each key within its own deadline: a
   * breaker whose slot is down reads as `unavailable`, and the others as
   * Redis holds them (a single Redis that does not answer rejects the view).
   */
  private async readShared(breakers: Record<string, FleetBreaker>): Promise<void> {
    const names = Object.keys(breakers);
    if (names.length === 0) return;
    const { redis, operationTimeoutMs } = this;
    const keyPrefix = this.store.keyPrefix;
    const timedOut = () => messages.timedOut('read', operationTimeoutMs);
    const each = (name: string) => {
      const read = redis.hgetall(breakerKeys(keyPrefix, name).state);
      return redis.isCluster === true
        ? outcome(withDeadline(read, operationTimeoutMs, timedOut))
        : read.then((value) => ({ value }));
    };
    const hashes = await withDeadline(Promise.all(names.map(each)), operationTimeoutMs, timedOut);
    names.forEach((name, i) => {
      const { value, error } = hashes[i]! as { value?: Record<string, string>; error?: unknown };
      if (error !== undefined) {
        breakers[name]!.shared = { state: 'unavailable' };
        return;
      }
      const fleet = decodeStateHash(name, value!);
      breakers[name]!.shared =
        fleet === undefined
          ? { state: 'none' }
          : fleet.state === 'open'
            ? { state: 'open', openUntil: fleet.openUntil }
            : { state: 'closed' };
    });
  }

  private ownReport(): Report {
    const notClosed = Object.create(null) as Record<string, BreakerState>;
    let count = 0;
    let truncated = false;
    const all = this.followed.all();
    for (const record of all) {
      const state = record.breaker.lastDecidedState;
      if (state === 'closed') continue;
      if (count === MAX_REPORTED_NOT_CLOSED) {
        truncated = true;
        break;
      }
      notClosed[record.name] = state;
      count++;
    }
    return {
      s: this.store.shared,
      b: all.length,
      n: notClosed,
      ...(truncated ? { t: true } : {}),
    };
  }

  private send<T>(call: ScriptCall): Promise<T> {
    const { operationTimeoutMs } = this;
    return withDeadline(evalCall<T>(this.redis, call), operationTimeoutMs, () =>
      messages.timedOut('read', operationTimeoutMs),
    );
  }
}

/** A report as stored; junk (a hand edit, another version) reads as an empty one. */
function parseReport(text: string): Report {
  try {
    const raw = JSON.parse(text) as Partial<Report> | null;
    const notClosed = Object.create(null) as Record<string, BreakerState>;
    if (raw !== null && typeof raw.n === 'object' && raw.n !== null)
      for (const [name, state] of Object.entries(raw.n))
        if (typeof state === 'string') notClosed[name] = state;
    return {
      s: raw?.s === true,
      b: typeof raw?.b === 'number' ? raw.b : 0,
      n: notClosed,
      ...(raw?.t === true ? { t: true as const } : {}),
    };
  } catch {
    return { s: false, b: 0, n: {} };
  }
}
