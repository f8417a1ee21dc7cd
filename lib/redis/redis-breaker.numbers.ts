/**
 * The one form of a number the store accepts in a field of Redis: decimal
 * digits with an optional decimal fraction, at most this many characters,
 * which is every form the scripts (`%.17g` of a safe integer or a time) and
 * the writers (`String(n)`) produce. Lua's `tonumber` alone also reads hex
 * (`0x10`), hex floats (`0x1p4`), exponents, `inf`, `nan` and padding, and
 * JavaScript's `Number` reads a different set (`0b101`, `Infinity`, a blank
 * as 0): a field one side reads as a number and the other as junk made a
 * replica read every breaker at every interval, or refuse every fleet
 * reconfiguration. Both sides parse with this pattern, so a field is a number
 * to both or junk to both, and junk is repaired.
 *
 * @internal
 */
export const MAX_DECIMAL_LENGTH = 40;

const DECIMAL = /^\d+(?:\.\d+)?$/;

/**
 * The number in `text` if it has the one accepted form (see
 * `MAX_DECIMAL_LENGTH`), else `NaN`. What the Lua function `decimal` of
 * `DECIMAL_LUA` answers for the same text (there `nil`).
 *
 * @internal
 */
export function decimalOf(text: string | null | undefined): number {
  return typeof text === 'string' && text.length <= MAX_DECIMAL_LENGTH && DECIMAL.test(text)
    ? Number(text)
    : Number.NaN;
}

/**
 * Lua: `decimal(raw)`, the number in `raw` if it has the one accepted form,
 * else nil (`raw` may be `false`: a field `HMGET` did not find). `%d` is an
 * ASCII digit in Redis' C locale, as `\d` is in JavaScript. Both sides read a
 * decimal text to the same nearest double.
 *
 * @internal
 */
export const DECIMAL_LUA = `
local function decimal(raw)
  if type(raw) ~= 'string' or #raw > ${MAX_DECIMAL_LENGTH} then return nil end
  if not (string.match(raw, '^%d+$') or string.match(raw, '^%d+%.%d+$')) then return nil end
  return tonumber(raw)
end
`;
