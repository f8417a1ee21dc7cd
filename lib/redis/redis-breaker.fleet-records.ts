import type { BreakerOptions, ForcedMode } from '../core/index.js';
import { SIGNAL_VERSION } from './redis-breaker.constants.js';
import { isWireNumber, numberOf } from './redis-breaker.signal.js';

/** What the fleet holds a breaker in: a forced state, or `released` (the force was ended fleet-wide). @internal */
export type FleetForceState = ForcedMode | 'closed' | 'released';

/**
 * The fleet's forced state of one breaker, as its `force` hash holds it and
 * as a signal carries it after every `force`/`release` made fleet-wide.
 *
 * @internal
 */
export interface ForceRecord {
  readonly kind: 'force';
  readonly name: string;
  readonly state: FleetForceState;
  /** Empty for a release. */
  readonly reason: string;
  readonly by: string | undefined;
  /** When the force ends by itself (wall clock, the origin's); 0: until released. */
  readonly until: number;
  /** Grows with every force and release of this breaker; a replica applies only newer ones. */
  readonly generation: number;
  readonly origin: string;
  readonly at: number;
}

/**
 * The fleet's reconfiguration of one breaker: every patch made fleet-wide so
 * far, merged (a restarted replica applies it whole), as its `config` hash
 * holds it and as a signal carries it.
 *
 * @internal
 */
export interface ConfigRecord {
  readonly kind: 'config';
  readonly name: string;
  readonly patch: BreakerOptions;
  readonly generation: number;
  readonly origin: string;
  readonly at: number;
}

/** An order to every replica: a force (or its release), or a reconfiguration. @internal */
export type FleetOrder = ForceRecord | ConfigRecord;

const FORCE_STATES: ReadonlySet<unknown> = new Set<unknown>([
  'open',
  'metrics-only',
  'closed',
  'disabled',
  'released',
]);

/**
 * A parsed message of the channel as a fleet order, or `undefined` for
 * anything that is not a well-formed one (ignored, never thrown). Wire format
 * (JSON, written by the fleet scripts with cjson):
 * - `{ "v": 1, "k": "force", "b": name, "f": state | "released", "r": reason, "y": by, "u": until, "g": generation, "o": origin, "a": at }`;
 * - `{ "v": 1, "k": "config", "b": name, "p": patch (JSON text), "g": generation, "o": origin, "a": at }`.
 *
 * Orders carry no `s` field: a replica of a version without fleet orders reads them as no state signal, and ignores them.
 *
 * @internal
 */
export function orderOf(raw: Record<string, unknown>): FleetOrder | undefined {
  const { v, k, b, g, o, a } = raw;
  if (v !== SIGNAL_VERSION || typeof b !== 'string' || typeof o !== 'string') return undefined;
  if (!isWireNumber(g) || !isWireNumber(a)) return undefined;
  if (k === 'force') return forceOf(b, raw.f, raw.r, raw.y, raw.u, g, o, a);
  if (k === 'config') return configOf(b, raw.p, g, o, a);
  return undefined;
}

/**
 * Reads the `force` hash (`HGETALL`): `null` when Redis holds none (never
 * forced fleet-wide, or expired), `undefined` when it holds one this version
 * did not write (junk: ignored; the next fleet-wide force replaces it whole).
 *
 * @internal
 */
export function decodeForceHash(
  name: string,
  hash: Record<string, string>,
): ForceRecord | null | undefined {
  if (Object.keys(hash).length === 0) return null;
  const { state, reason, by, until, generation, origin, at } = hash;
  return forceOf(
    name,
    state,
    reason,
    by,
    numberOf(until),
    numberOf(generation),
    origin ?? '',
    numberOf(at),
  );
}

/** Reads the `config` hash (`HGETALL`): `null` when Redis holds none, `undefined` for junk (see `decodeForceHash`). @internal */
export function decodeConfigHash(
  name: string,
  hash: Record<string, string>,
): ConfigRecord | null | undefined {
  if (hash.patch === undefined && hash.generation === undefined) return null;
  return configOf(
    name,
    hash.patch,
    numberOf(hash.generation),
    hash.origin ?? '',
    numberOf(hash.at),
  );
}

function forceOf(
  name: string,
  state: unknown,
  reason: unknown,
  by: unknown,
  until: unknown,
  generation: unknown,
  origin: string,
  at: unknown,
): ForceRecord | undefined {
  if (!FORCE_STATES.has(state) || typeof reason !== 'string') return undefined;
  // A force nobody can explain is refused by force() itself: such a record was not written by a replica.
  if (state !== 'released' && reason.trim() === '') return undefined;
  if (by !== undefined && typeof by !== 'string') return undefined;
  if (!isWireNumber(until) || !isWireNumber(generation) || !isWireNumber(at)) return undefined;
  return {
    kind: 'force',
    name,
    state: state as FleetForceState,
    reason,
    by: by === '' ? undefined : by,
    until,
    generation,
    origin,
    at,
  };
}

function configOf(
  name: string,
  text: unknown,
  generation: unknown,
  origin: string,
  at: unknown,
): ConfigRecord | undefined {
  if (typeof text !== 'string' || !isWireNumber(generation) || !isWireNumber(at)) return undefined;
  let patch: unknown;
  try {
    patch = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return undefined;
  return { kind: 'config', name, patch: patch as BreakerOptions, generation, origin, at };
}
