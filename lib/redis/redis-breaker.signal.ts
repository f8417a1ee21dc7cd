import { SIGNAL_VERSION } from './redis-breaker.constants.js';
import { decimalOf } from './redis-breaker.numbers.js';

/**
 * The fleet's state of one breaker, as the state hash holds it and as a
 * signal (pub/sub message) carries it after every change.
 *
 * @internal
 */
export interface FleetState {
  /** The breaker's name (not escaped). */
  readonly name: string;
  readonly state: 'open' | 'closed';
  /** While open: until when the fleet rejects (the origin's clock). 0 when closed. */
  readonly openUntil: number;
  /** Grows with every change of the fleet's state; a replica applies only newer ones. */
  readonly generation: number;
  /** The instance whose write made the change. */
  readonly origin: string;
  /** When the change was made (the origin's clock). */
  readonly at: number;
}

/**
 * Reads a signal; `undefined` for anything that is not a well-formed signal of
 * this version (another version's replicas during a rolling upgrade, someone
 * else's message on the channel, junk such as a generation past 2^53), which
 * is ignored, never thrown.
 *
 * Wire format (JSON, written by the scripts with cjson):
 * `{ "v": 1, "b": name, "s": "open" | "closed", "u": openUntil, "g": generation, "o": origin, "a": at }`.
 *
 * @internal
 */
export function decodeSignal(message: string): FleetState | undefined {
  const raw = parseMessage(message);
  return raw === undefined ? undefined : signalOf(raw);
}

/**
 * A message of the channel as an object, or `undefined` when it is no JSON
 * object. What it is (a state signal, a fleet order) is for the readers.
 *
 * @internal
 */
export function parseMessage(message: string): Record<string, unknown> | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(message);
  } catch {
    return undefined;
  }
  return typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>) : undefined;
}

/** A parsed message as a state signal (see `decodeSignal`), or `undefined`. @internal */
export function signalOf(raw: Record<string, unknown>): FleetState | undefined {
  const { v, b, s, u, g, o, a } = raw;
  if (
    v !== SIGNAL_VERSION ||
    typeof b !== 'string' ||
    (s !== 'open' && s !== 'closed') ||
    typeof o !== 'string'
  )
    return undefined;
  if (!isWireNumber(u) || !isWireNumber(g) || !isWireNumber(a)) return undefined;
  return { name: b, state: s, openUntil: u, generation: g, origin: o, at: a };
}

/**
 * Reads the state hash (`HGETALL`); `undefined` when the breaker has no shared
 * state yet (or it expired) or the hash is not one this version wrote.
 *
 * @internal
 */
export function decodeStateHash(
  name: string,
  hash: Record<string, string>,
): FleetState | undefined {
  const state = hash.state;
  if (state !== 'open' && state !== 'closed') return undefined;
  const openUntil = numberOf(hash.openUntil ?? '0');
  const generation = numberOf(hash.generation);
  const at = numberOf(hash.at ?? '0');
  if (!isWireNumber(openUntil) || !isWireNumber(generation) || !isWireNumber(at)) return undefined;
  return { name, state, openUntil, generation, origin: hash.origin ?? '', at };
}

/** A number field of a hash as the scripts read it too (`decimalOf`); `NaN` for anything else. @internal */
export function numberOf(text: string | undefined): number {
  return decimalOf(text);
}

/**
 * A number as the scripts write them: generations and millisecond times,
 * finite, >= 0 and a safe integer in size. Past 2^53 a generation stops
 * growing (`+ 1` rounds away), and a replica that applied one would ignore
 * every later state. How far ahead of a clock a generation may be is the
 * coordinator's check (it has the clock).
 *
 * @internal
 */
export function isWireNumber(value: unknown): value is number {
  return (
    typeof value === 'number' &&
    Number.isFinite(value) &&
    value >= 0 &&
    value <= Number.MAX_SAFE_INTEGER
  );
}
