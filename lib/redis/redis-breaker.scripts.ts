import { markLua } from './redis-breaker.changes.js';
import { GENERATION_MAX_LEAD_MS } from './redis-breaker.constants.js';
import { DECIMAL_LUA } from './redis-breaker.numbers.js';
import { QUORUM_LUA } from './redis-breaker.quorum.js';

/**
 * What the open and close scripts read from the hash passes through `valid`:
 * a number this version could have written (finite, >= 0, at most `max`),
 * else nil, so that junk (a hand edit, a restore, another program) is treated
 * as absent and overwritten, never computed with. `ahead` bounds generations
 * and times: a safe integer no further than GENERATION_MAX_LEAD_MS ahead of
 * the writer's clock. A stored generation beyond it is repaired at once (set
 * to the writer's clock), whether or not the script changes the fleet's state.
 * Numbers are read as JavaScript reads them (`decimal`, see DECIMAL_LUA).
 * Needs `now`; defines `ahead`, `valid` and `storedGeneration(raw)`.
 */
const PRELUDE = `
${DECIMAL_LUA}
local ahead = math.min(now + ${GENERATION_MAX_LEAD_MS}, 9007199254740991)
local function valid(value, max)
  local n = decimal(value)
  if n == nil or n ~= n or n < 0 or n > max then return nil end
  return n
end
local function storedGeneration(raw)
  local generation = valid(raw, ahead)
  if raw and not generation then redis.call('HSET', KEYS[1], 'generation', string.format('%.17g', now)) end
  return generation or 0
end
`;

/**
 * The store's Lua scripts. Each runs atomically on the node of its breaker's
 * slot (every key it touches carries the breaker's hash tag) and publishes the
 * change it made in the same step, so the state hash and the signals never
 * disagree. Times are milliseconds of the writer's clock; numbers are stored
 * with `%.17g` so that none is rounded. Stored numbers are validated before
 * use (see PRELUDE): junk left in Redis is repaired, never propagated.
 *
 * @internal
 */
export const REDIS_BREAKER_SCRIPTS = {
  /**
   * This replica opened its breaker: a trip (a report), or its fleet probe
   * failed (a reopen verdict, ARGV[5] = '1'). The fleet opens when `quorum`
   * distinct replicas report it open within their open periods, until the
   * latest of their open-until times; a failed fleet probe reopens it at once.
   *
   * KEYS: state hash, open reports, probe permit, then the change log's two keys and the registry of replicas (absent on a Cluster whose prefix has no hash tag).
   * ARGV: instance, openUntil, now, quorum, reopen ('1'/'0'), channel, name, key TTL, quorum 'auto' ('1'/'0': see QUORUM_LUA).
   * Returns {live reports, 1 if the fleet state changed else 0}.
   */
  open: `
local instance, untilMs, now = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
${PRELUDE}
${markLua(4)}
${QUORUM_LUA}
if redis.call('GET', KEYS[3]) == instance then redis.call('DEL', KEYS[3]) end
-- Reports are open-until times: past ones no longer count, absurd ones never did (they would become the fleet's time).
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '(' .. string.format('%.17g', ahead), '+inf')
if untilMs > now then
  redis.call('ZADD', KEYS[2], untilMs, instance)
  redis.call('PEXPIRE', KEYS[2], ARGV[8])
end
local reports = redis.call('ZCARD', KEYS[2])
local fleet = redis.call('HMGET', KEYS[1], 'state', 'openUntil', 'generation')
local fleetOpen = fleet[1] == 'open'
local fleetUntil = valid(fleet[2], ahead) or 0
local fleetGeneration = storedGeneration(fleet[3])
local newUntil
if ARGV[5] == '1' and fleetOpen then
  newUntil = math.max(untilMs, fleetUntil)
elseif reports >= quorum then
  newUntil = tonumber(redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')[2])
  if fleetOpen and fleetUntil >= newUntil then return {reports, 0} end
else
  return {reports, 0}
end
if newUntil <= now then return {reports, 0} end
local generation = math.max(fleetGeneration + 1, now)
redis.call('HSET', KEYS[1], 'state', 'open', 'openUntil', string.format('%.17g', newUntil), 'generation', string.format('%.17g', generation),
  'origin', instance, 'at', ARGV[3], 'reports', reports)
redis.call('PEXPIRE', KEYS[1], ARGV[8])
mark(ARGV[7])
redis.call('PUBLISH', ARGV[6], cjson.encode({ v = 1, b = ARGV[7], s = 'open', u = newUntil, g = generation, o = instance, a = now }))
return {reports, 1}
`,

  /**
   * This replica's probe succeeded (half-open → closed). If the fleet is open
   * it closes, and every report is dropped (they described the outage that
   * just ended); if not, this replica only withdraws its own report. A verdict
   * older than the fleet's last change (written late, after an outage) is
   * ignored.
   *
   * KEYS: state hash, open reports, probe permit, then the change log's two keys (see `open`).
   * ARGV: instance, now, channel, name, key TTL.
   * Returns 1 if the fleet closed, else 0.
   */
  close: `
local instance, now = ARGV[1], tonumber(ARGV[2])
${PRELUDE}
${markLua(4)}
if redis.call('GET', KEYS[3]) == instance then redis.call('DEL', KEYS[3]) end
local fleet = redis.call('HMGET', KEYS[1], 'state', 'generation', 'at')
local fleetGeneration = storedGeneration(fleet[2])
if fleet[1] ~= 'open' then
  redis.call('ZREM', KEYS[2], instance)
  return 0
end
if (valid(fleet[3], ahead) or 0) > now then return 0 end
local generation = math.max(fleetGeneration + 1, now)
redis.call('DEL', KEYS[2])
redis.call('HSET', KEYS[1], 'state', 'closed', 'openUntil', '0', 'generation', string.format('%.17g', generation),
  'origin', instance, 'at', ARGV[2], 'reports', 0)
redis.call('PEXPIRE', KEYS[1], ARGV[5])
mark(ARGV[4])
redis.call('PUBLISH', ARGV[3], cjson.encode({ v = 1, b = ARGV[4], s = 'closed', u = 0, g = generation, o = instance, a = now }))
return 1
`,

  /**
   * This replica's breaker was reset by hand: its report no longer holds, and
   * a permit it holds is given back. The fleet's state is left alone.
   *
   * KEYS: open reports, probe permit. ARGV: instance.
   */
  withdraw: `
if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
return redis.call('ZREM', KEYS[1], ARGV[1])
`,

  /**
   * Asks for the fleet's probe permit: won when nobody holds it (or this
   * replica already does: renewed). A permit without expiry (PTTL -1: set by
   * hand, or restored without its TTL) is stale, whoever it names: every
   * permit this store writes expires, and one that never does would block the
   * fleet's probe for good. It is taken over. One with more time left than
   * the asker ever holds the permit (ARGV[3], its whole half-open period: set
   * by hand with an hour to run, restored) is cut to that, so that it lapses
   * within one half-open period. Returns {1, ttl} when won, {0, remaining ms
   * of the holder's permit} when lost.
   *
   * KEYS: probe permit. ARGV: instance, TTL in ms, the longest permit the asker writes (ms).
   */
  permit: `
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return {1, tonumber(ARGV[2])} end
local left = redis.call('PTTL', KEYS[1])
if left == -1 or redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return {1, tonumber(ARGV[2])}
end
local longest = tonumber(ARGV[3])
if longest and left > longest then
  redis.call('PEXPIRE', KEYS[1], longest)
  left = longest
end
return {0, left}
`,

  /**
   * The holder half-opened: its claim becomes the whole probe deadline. If the
   * claim lapsed meanwhile and nobody took the permit (or only a stale one
   * without expiry is left, see `permit`), it is taken again; if another
   * replica holds it, nothing changes and the caller must stop probing.
   *
   * KEYS: probe permit. ARGV: instance, TTL in ms.
   * Returns {1, ttl} if this replica holds the permit now, {0, remaining ms of the holder's permit} if another does.
   */
  renew: `
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] or not holder or redis.call('PTTL', KEYS[1]) == -1 then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return {1, tonumber(ARGV[2])}
end
return {0, redis.call('PTTL', KEYS[1])}
`,
} as const;
