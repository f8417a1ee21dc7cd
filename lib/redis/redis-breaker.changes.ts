import type { Cluster, Redis } from 'ioredis';
import { DECIMAL_LUA, decimalOf } from './redis-breaker.numbers.js';

/**
 * The most breakers the change log remembers. Past it the oldest entry is
 * dropped (and its version noted as `trimmed`): a replica that looked last
 * before that version reads everything once instead. A breaker takes one
 * entry whatever its number of changes, so only a prefix with more breakers
 * than this (or many that no longer exist) ever trims.
 *
 * @internal
 */
export const CHANGE_LOG_MAX = 100_000;

/** How many changed names one `ZRANGEBYSCORE` answers at most. @internal */
export const CHANGE_PAGE = 1_000;

/** The two keys of a prefix's change log: a hash and a sorted set, in one slot. @internal */
export interface ChangeKeys {
  /** Hash: `version` (grows with every change of the prefix's shared state), `epoch` (who started the count, and when), `trimmed`. */
  readonly version: string;
  /** Sorted set: one member per breaker name, scored by the version of its last change. */
  readonly log: string;
}

/**
 * The change log's keys. They carry a hash tag of their own (`{~changes}`:
 * `~` is escaped in breaker names, so no breaker shares it), so both live in
 * one Cluster slot; a `keyPrefix` with its own hash tag (`'{shop}:'`) puts
 * them in the slot of every breaker of the prefix instead.
 *
 * @internal
 */
export function changeKeys(prefix: string): ChangeKeys {
  return Object.freeze({
    version: `${prefix}{~changes}:version`,
    log: `${prefix}{~changes}:log`,
  });
}

/** Whether `prefix` holds a Redis Cluster hash tag of its own (a non-empty `{...}`), which then decides the slot of every key. @internal */
export function hasHashTag(prefix: string): boolean {
  const open = prefix.indexOf('{');
  if (open === -1) return false;
  const close = prefix.indexOf('}', open + 1);
  return close > open + 1;
}

/** Lua: `isCount(raw)`, the number in `raw` if it is a whole number in [0, 2^53) written as JavaScript reads it (`decimal`), else nil. */
const COUNT_LUA = `
${DECIMAL_LUA}
local function isCount(raw)
  local n = decimal(raw)
  if n == nil or n ~= n or n < 0 or n >= 9007199254740992 or n ~= math.floor(n) then return nil end
  return n
end
`;

/**
 * Lua: defines `mark(name)`, which records that breaker `name` changed: the
 * prefix's version grows by one and the breaker's entry in the log takes it.
 * The change log's keys are `KEYS[first]` and `KEYS[first + 1]`; without
 * them (a Cluster whose prefix has no hash tag: another slot) `mark` does
 * nothing and the store marks with `MARK_SCRIPT` right after. Needs `now` and
 * `instance`. Junk (a key of another type, a version that is no count) starts
 * a new count under a new epoch: every replica then reads everything once.
 *
 * @internal
 */
export function markLua(first: number): string {
  return `
${COUNT_LUA}
local function mark(name)
  local versionKey, logKey = KEYS[${first}], KEYS[${first + 1}]
  if not versionKey then return end
  if redis.call('TYPE', logKey).ok ~= 'zset' then redis.call('DEL', logKey) end
  local version, epoch, trimmed
  if redis.call('TYPE', versionKey).ok == 'hash' then
    local head = redis.call('HMGET', versionKey, 'version', 'epoch', 'trimmed')
    version, epoch, trimmed = isCount(head[1]), head[2], isCount(head[3] or '0')
  else
    redis.call('DEL', versionKey)
  end
  if not version or not epoch or not trimmed or trimmed > version or version >= 9007199254740991 then
    redis.call('DEL', versionKey, logKey)
    version = 0
    redis.call('HSET', versionKey, 'epoch', string.format('%.17g', now) .. ':' .. instance, 'trimmed', '0')
  end
  version = version + 1
  redis.call('HSET', versionKey, 'version', string.format('%.17g', version))
  redis.call('ZADD', logKey, version, name)
  if redis.call('ZCARD', logKey) > ${CHANGE_LOG_MAX} then
    local oldest = redis.call('ZRANGE', logKey, 0, 0, 'WITHSCORES')
    redis.call('ZREMRANGEBYRANK', logKey, 0, 0)
    redis.call('HSET', versionKey, 'trimmed', oldest[2])
  end
end
`;
}

/**
 * Marks breakers changed on their own (see `markLua`): what a Cluster's writer
 * sends after a change whose script could not reach the change log's slot.
 *
 * KEYS: version hash, log. ARGV: now, instance, names...
 *
 * @internal
 */
export const MARK_SCRIPT = `
local now, instance = tonumber(ARGV[1]), ARGV[2]
${markLua(1)}
for i = 3, #ARGV do mark(ARGV[i]) end
return #ARGV - 2
`;

/**
 * Starts a count where none is (never marked, lost, junk), so that a replica
 * that has read everything knows from when it follows: a count that starts
 * later (Redis lost it meanwhile) has another epoch, and tells it to read
 * everything again. Run only with a read of everything.
 *
 * KEYS: version hash, log. ARGV: now, instance. Returns {epoch, version, trimmed}.
 *
 * @internal
 */
export const START_SCRIPT = `
local now, instance = tonumber(ARGV[1]), ARGV[2]
local versionKey, logKey = KEYS[1], KEYS[2]
${COUNT_LUA}
if redis.call('TYPE', logKey).ok ~= 'zset' then redis.call('DEL', logKey) end
local head = {}
if redis.call('TYPE', versionKey).ok == 'hash' then
  head = redis.call('HMGET', versionKey, 'epoch', 'version', 'trimmed')
end
local version, trimmed = isCount(head[2]), isCount(head[3] or '0')
if not head[1] or not version or not trimmed or trimmed > version or version >= 9007199254740991 then
  redis.call('DEL', versionKey, logKey)
  head = { string.format('%.17g', now) .. ':' .. instance, '0', '0' }
  redis.call('HSET', versionKey, 'epoch', head[1], 'version', head[2], 'trimmed', head[3])
end
return head
`;

/** The head of the change log as one `HMGET` found it. @internal */
export interface ChangeHead {
  /** `undefined`: nothing was ever marked under this prefix (or Redis lost it all). */
  readonly epoch: string | undefined;
  readonly version: number;
  /** Entries older than this version were dropped from the log. */
  readonly trimmed: number;
}

/** A count as `isCount` reads it in Lua: the same text is a count to both, or junk to both. */
const count = (raw: string | null | undefined): number | undefined => {
  const n = decimalOf(raw);
  return Number.isSafeInteger(n) && n >= 0 ? n : undefined;
};

/** A head as the log holds it (`[epoch, version, trimmed]`), or `undefined` for junk. */
function headOf([epoch, version, trimmed]: readonly (string | null | undefined)[]):
  ChangeHead | undefined {
  if (epoch === null || epoch === undefined) {
    // Never marked, or lost (a restart without persistence, FLUSHALL): no count to follow.
    return version === null || version === undefined
      ? { epoch: undefined, version: 0, trimmed: 0 }
      : undefined;
  }
  const v = count(version);
  const t = trimmed === null || trimmed === undefined ? 0 : count(trimmed);
  return v === undefined || t === undefined || t > v
    ? undefined
    : { epoch, version: v, trimmed: t };
}

/** Starts a count where none is (see `START_SCRIPT`), and answers the head. @internal */
export async function startHead(
  redis: Redis | Cluster,
  keys: ChangeKeys,
  now: number,
  instance: string,
): Promise<ChangeHead | undefined> {
  const reply = (await redis.eval(START_SCRIPT, 2, keys.version, keys.log, now, instance)) as (
    string | null
  )[];
  return headOf(reply);
}

/**
 * Reads the head of the change log: one command, whatever the number of
 * breakers. Junk (not numbers, a key of another type) reads as `undefined`:
 * the reader cannot trust the log, and reads everything.
 *
 * @internal
 */
export async function readHead(
  redis: Redis | Cluster,
  keys: ChangeKeys,
): Promise<ChangeHead | undefined> {
  let fields: (string | null)[];
  try {
    fields = await redis.hmget(keys.version, 'epoch', 'version', 'trimmed');
  } catch (error) {
    if (error instanceof Error && error.message.startsWith('WRONGTYPE ')) return undefined;
    throw error;
  }
  return headOf(fields);
}

/**
 * The names of the breakers changed after version `after`, up to `upTo`, in
 * pages of `CHANGE_PAGE` (one command each). `undefined` when the log is not
 * one the store wrote.
 *
 * @internal
 */
export async function readChanged(
  redis: Redis | Cluster,
  keys: ChangeKeys,
  after: number,
  upTo: number,
): Promise<string[] | undefined> {
  const names: string[] = [];
  let from = after;
  while (from < upTo) {
    let page: string[];
    try {
      page = await redis.zrangebyscore(
        keys.log,
        `(${from}`,
        upTo,
        'WITHSCORES',
        'LIMIT',
        0,
        CHANGE_PAGE,
      );
    } catch (error) {
      if (error instanceof Error && error.message.startsWith('WRONGTYPE ')) return undefined;
      throw error;
    }
    for (let i = 0; i < page.length; i += 2) names.push(page[i]!);
    if (page.length < 2 * CHANGE_PAGE) break;
    const last = Number(page[page.length - 1]);
    if (!(last > from)) return undefined;
    from = last;
  }
  return names;
}
