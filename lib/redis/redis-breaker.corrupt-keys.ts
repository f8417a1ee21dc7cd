import type { Cluster, Redis } from 'ioredis';
import type { RedisBreakerStoreLogger } from './redis-breaker-store-options.interface.js';
import type { SharedBreaker } from './redis-breaker.coordinator.js';
import { withDeadline } from './redis-breaker.deadline.js';
import { redisBreakerMessages as messages } from './redis-breaker.messages.js';

/**
 * Whether Redis answered `error` because of what one breaker's keys hold (a
 * key of the wrong type, a script tripping over its data), not because Redis
 * cannot serve: it is about that breaker alone, and says Redis is reachable.
 * Errors that concern the whole server (OOM, BUSY, LOADING, READONLY, NOAUTH,
 * ...) and every connection or timeout error are outages.
 *
 * @internal
 */
export function isKeyError(error: unknown): boolean {
  if (!(error instanceof Error) || error.name !== 'ReplyError') return false;
  return (
    error.message.startsWith('WRONGTYPE ') ||
    /^ERR (user_script:\d+:|Error running script)/.test(error.message)
  );
}

/** A breaker's keys, in the order of `EXPECTED_TYPES`. */
const KEYS = ['state', 'opens', 'probe', 'force', 'config'] as const;

/** The type `TYPE` answers for each of a breaker's keys, in the order of `KEYS`. */
const EXPECTED_TYPES = ['hash', 'zset', 'string', 'hash', 'hash'] as const;

/**
 * Deletes each of a breaker's keys that holds a type the store never writes
 * there (every one of them is the store's own: its prefix, its breaker's hash
 * tag). Deleting loses nothing the fleet needs: replicas write their latest
 * transitions again, and a missing permit is simply free.
 *
 * KEYS: state hash, open reports, probe permit, force hash, config hash. ARGV: the expected types.
 * Returns {key, type found, ...} for every key deleted.
 *
 * @internal
 */
export const REPAIR_SCRIPT = `
local deleted = {}
for i, key in ipairs(KEYS) do
  local found = redis.call('TYPE', key).ok
  if found ~= 'none' and found ~= ARGV[i] then
    redis.call('DEL', key)
    table.insert(deleted, key)
    table.insert(deleted, found)
  end
end
return deleted
`;

interface Episode {
  /** Decides locally until released: the store's other breakers keep sharing. */
  isolated: boolean;
  repairing: boolean;
  /** The one line of this episode was logged. */
  logged: boolean;
  /** Repairs that found nothing to delete: another replica got there first, or it is no type problem. */
  emptyRepairs: number;
}

/** What the tracker needs from the store. @internal */
export interface CorruptKeysLink {
  readonly redis: Redis | Cluster;
  readonly logger: RedisBreakerStoreLogger | undefined;
  readonly keyPrefix: string;
  readonly operationTimeoutMs: number;
  /** The breaker may share again: write its latest own transition again and read its state back. */
  release(record: SharedBreaker): void;
  /** The repair itself hit an outage (on a Cluster, of the breaker's slot). */
  failed(record: SharedBreaker, error: unknown): void;
}

/**
 * Keeps a corrupt key to its breaker. A key error (see `isKeyError`) on one
 * breaker's keys isolates that breaker (it decides locally, `shared: false` in
 * its snapshot, the error counted in its `storeErrors`), while the store and
 * its other breakers go on sharing; no outage is reported. The keys of the
 * wrong type are deleted at once, one line is logged for the episode (naming
 * the breaker and the key), and the breaker shares again. A key error that no
 * repair explains keeps the breaker isolated, and is tried again at every
 * reconcile, without a second line.
 *
 * @internal
 */
export class CorruptKeys {
  private readonly episodes = new Map<SharedBreaker, Episode>();
  private readonly counts = new WeakMap<SharedBreaker, number>();
  private errors = 0;

  constructor(private readonly link: CorruptKeysLink) {}

  /** Key errors since the store started, every breaker included. */
  get total(): number {
    return this.errors;
  }

  isolated(record: SharedBreaker): boolean {
    return this.episodes.get(record)?.isolated === true;
  }

  /** Key errors of `record`'s own keys since the store started. */
  errorsOf(record: SharedBreaker): number {
    return this.counts.get(record) ?? 0;
  }

  /** An operation on `record`'s keys failed with a key error. */
  report(record: SharedBreaker, error: unknown): void {
    this.errors++;
    this.counts.set(record, this.errorsOf(record) + 1);
    let episode = this.episodes.get(record);
    if (episode === undefined) {
      episode = { isolated: true, repairing: false, logged: false, emptyRepairs: 0 };
      this.episodes.set(record, episode);
    }
    episode.isolated = true;
    if (!episode.repairing) void this.repair(record, episode, error);
  }

  /** An operation on `record`'s keys succeeded: once it shares again, its episode is over (a new corruption is reported again). */
  healthy(record: SharedBreaker): void {
    if (this.episodes.get(record)?.isolated === false) this.episodes.delete(record);
  }

  /** At each reconcile: the breakers still isolated try to share again. */
  retry(): void {
    for (const [record, episode] of this.episodes)
      if (episode.isolated && !episode.repairing) this.release(record, episode);
  }

  /**
   * Sorts the errors of one command per record: a key error concerns that
   * breaker alone (isolated and repaired); any other error is an outage,
   * thrown once the rest is sorted.
   */
  sort(records: readonly SharedBreaker[], errors: readonly unknown[]): void {
    let outage: unknown;
    errors.forEach((error, i) => {
      if (error === undefined || error === null) this.healthy(records[i]!);
      else if (isKeyError(error)) this.report(records[i]!, error);
      else outage ??= error;
    });
    if (outage !== undefined) throw outage;
  }

  clear(): void {
    this.episodes.clear();
  }

  private async repair(record: SharedBreaker, episode: Episode, error: unknown): Promise<void> {
    episode.repairing = true;
    const keys = KEYS.map((key) => record.keys[key]);
    let deleted: string[];
    try {
      const reply = this.link.redis.eval(
        REPAIR_SCRIPT,
        keys.length,
        ...keys,
        ...EXPECTED_TYPES,
      ) as Promise<string[]>;
      deleted = await withDeadline(reply, this.link.operationTimeoutMs, () =>
        messages.timedOut('repair', this.link.operationTimeoutMs),
      );
    } catch (repairError) {
      this.link.failed(record, repairError);
      return;
    } finally {
      episode.repairing = false;
    }
    if (this.episodes.get(record) !== episode) return;
    if (deleted.length > 0) {
      const found: { key: string; type: string; expected: string }[] = [];
      for (let i = 0; i < deleted.length; i += 2) {
        const key = deleted[i]!;
        found.push({
          key,
          type: deleted[i + 1]!,
          expected: EXPECTED_TYPES[keys.indexOf(key)]!,
        });
      }
      this.log(episode, () => messages.corruptKeys(record.name, found, this.link.keyPrefix));
      this.release(record, episode);
      return;
    }
    // Nothing to delete: the first time, most likely another replica repaired it first; after that, a problem no delete solves.
    if (++episode.emptyRepairs === 1) return this.release(record, episode);
    this.log(episode, () => messages.keyError(record.name, keys, reason(error)));
  }

  private release(record: SharedBreaker, episode: Episode): void {
    episode.isolated = false;
    this.link.release(record);
  }

  private log(episode: Episode, line: () => string): void {
    if (episode.logged) return;
    episode.logged = true;
    this.link.logger?.warn(line());
  }
}

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
