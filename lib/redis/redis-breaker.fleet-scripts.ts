import { markLua } from './redis-breaker.changes.js';
import { GENERATION_MAX_LEAD_MS } from './redis-breaker.constants.js';
import { DECIMAL_LUA } from './redis-breaker.numbers.js';

/**
 * Needs `now`; defines `valid(value)`: a generation or time this version
 * could have written (a safe integer >= 0, at most GENERATION_MAX_LEAD_MS
 * ahead of the writer's clock), else nil, so that junk is overwritten, never
 * computed with (see the state scripts). Numbers are read as JavaScript reads
 * them (`decimal`, see DECIMAL_LUA).
 */
const PRELUDE = `
${DECIMAL_LUA}
local ahead = math.min(now + ${GENERATION_MAX_LEAD_MS}, 9007199254740991)
local function valid(value)
  local n = decimal(value)
  if n == nil or n ~= n or n < 0 or n > ahead then return nil end
  return n
end
`;

/**
 * The scripts of fleet-wide orders (`force`, `release`, fleet reconfiguration).
 * Each replaces its breaker's record whole (junk fields go with the old one),
 * gives it a generation that grows (`max(previous + 1, now)`), and publishes
 * it in the same atomic step, so a record and its signal never disagree.
 *
 * @internal
 */
export const FLEET_SCRIPTS = {
  /**
   * A force, or its release (state `released`), made fleet-wide. A force with
   * an end lives until a day after it (a restarted replica reads that it is
   * over); one without lives until it is released; a release a day.
   *
   * KEYS: force hash, then the change log's two keys (absent on a Cluster whose prefix has no hash tag). ARGV: instance, now, state, reason, by, until (0: none), channel, name, key TTL.
   * Returns {generation, subscribers the signal reached}.
   */
  force: `
local instance, now, untilMs = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[6])
${PRELUDE}
${markLua(2)}
local generation = math.max((valid(redis.call('HGET', KEYS[1], 'generation')) or 0) + 1, now)
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'state', ARGV[3], 'reason', ARGV[4], 'by', ARGV[5], 'until', ARGV[6],
  'generation', string.format('%.17g', generation), 'origin', instance, 'at', ARGV[2])
if ARGV[3] == 'released' then
  redis.call('PEXPIRE', KEYS[1], ARGV[9])
elseif untilMs > 0 then
  -- A whole number of milliseconds: PEXPIREAT refuses a fraction (an untilMs of Date.now() + 1.5 * 60_000 is one).
  redis.call('PEXPIREAT', KEYS[1], string.format('%.0f', math.ceil(untilMs + tonumber(ARGV[9]))))
end
mark(ARGV[8])
local subscribers = redis.call('PUBLISH', ARGV[7], cjson.encode({ v = 1, k = 'force', b = ARGV[8], f = ARGV[3],
  r = ARGV[4], y = ARGV[5], u = untilMs, g = generation, o = instance, a = now }))
return {generation, subscribers}
`,

  /**
   * A reconfiguration made fleet-wide: `patch` is every fleet patch so far,
   * merged by the writer over the record it last knew (generation ARGV[3]).
   * If another replica wrote one since, nothing is written and the stored
   * record comes back, for the writer to merge over and try again. The record
   * never expires: a replica started next month applies it too.
   *
   * KEYS: config hash, then the change log's two keys (see `force`). ARGV: instance, now, expected generation, patch (JSON), channel, name.
   * Returns {1, generation, subscribers} when written, {0, generation, patch, origin, at} as stored when not.
   */
  config: `
local instance, now = ARGV[1], tonumber(ARGV[2])
${PRELUDE}
${markLua(2)}
local stored = redis.call('HMGET', KEYS[1], 'generation', 'patch', 'origin', 'at')
local current = valid(stored[1]) or 0
-- Junk (a generation out of range) is no record to merge over: it is replaced.
if stored[2] and valid(stored[1]) and current ~= tonumber(ARGV[3]) then
  return {0, stored[1], stored[2], stored[3] or '', stored[4] or '0'}
end
local generation = math.max(current + 1, now)
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'patch', ARGV[4], 'generation', string.format('%.17g', generation), 'origin', instance, 'at', ARGV[2])
mark(ARGV[6])
local subscribers = redis.call('PUBLISH', ARGV[5], cjson.encode({ v = 1, k = 'config', b = ARGV[6], p = ARGV[4],
  g = generation, o = instance, a = now }))
return {1, generation, subscribers}
`,

  /**
   * A replica cannot apply the fleet's reconfiguration of generation ARGV[1]:
   * it says why next to it (`refused:<instance>`), unless a newer one was
   * written since (which clears every refusal).
   *
   * KEYS: config hash. ARGV: generation, instance, message. Returns 1 if written.
   */
  refuse: `
${DECIMAL_LUA}
local generation = decimal(redis.call('HGET', KEYS[1], 'generation'))
if generation and generation == tonumber(ARGV[1]) then
  redis.call('HSET', KEYS[1], 'refused:' .. ARGV[2], ARGV[3])
  return 1
end
return 0
`,
} as const;
