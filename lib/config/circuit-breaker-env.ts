import { closestName } from '../core/options/closest-name.js';
import { BreakerConfigError } from '../core/errors/breaker.errors.js';
import type { BreakerOptions } from '../core/options/breaker-options.js';
import { resolveBreakerOptions } from '../core/options/resolve-options.js';
import { mergeOptions } from '../circuit-breaker.options.js';
import { envMessages } from './circuit-breaker-env.messages.js';

/** @publicApi */
export interface CircuitBreakerEnvOptions {
  /** The breakers the variables may configure. A variable that names another is an error (a typo must not pass silently). */
  breakers: readonly string[];
  /** What every variable starts with. Default `CB_`; `CB` means the same (the `_` is added). */
  prefix?: string;
  /** Where to read. Default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
}

/** What the variables give: spread it into `forRoot()` (or return it from `forRootAsync()`'s factory). @publicApi */
export interface CircuitBreakerEnvConfig {
  defaults?: BreakerOptions;
  breakers?: Record<string, BreakerOptions>;
}

type Kind =
  'number' | 'number-or-false' | 'number-or-auto' | 'boolean' | 'false' | 'window-type' | 'word';

/** Every option a variable can set: the scalar ones (a classifier cannot come from a string). */
const OPTIONS: readonly (readonly [path: string, kind: Kind])[] = [
  ['window.type', 'window-type'],
  ['window.size', 'number'],
  ['window.durationMs', 'number'],
  ['window.buckets', 'number'],
  ['failureRateThreshold', 'number'],
  ['minimumThroughput', 'number'],
  ['consecutiveFailures', 'number-or-false'],
  ['slowCallDurationMs', 'number'],
  ['slowCallRateThreshold', 'number'],
  ['timeoutMs', 'number-or-false'],
  ['openDurationMs', 'number'],
  ['backoff.multiplier', 'number'],
  ['backoff.maxMs', 'number'],
  ['jitter', 'number'],
  ['maxRetryAfterMs', 'number'],
  ['halfOpen.maxProbes', 'number'],
  ['halfOpen.maxConcurrent', 'number'],
  ['halfOpen.successesToClose', 'number'],
  ['halfOpen.probeTimeoutMs', 'number'],
  ['halfOpen.maxWaitMs', 'number'],
  ['overload', 'false'],
  ['overload.k', 'number'],
  ['perKey.maxKeys', 'number'],
  ['perKey.idleMs', 'number'],
  ['perKey.maxKeyLength', 'number'],
  ['aggregate.openWhenOpenRatio', 'number'],
  ['aggregate.minKeys', 'number'],
  ['share', 'boolean'],
  ['share.quorum', 'number-or-auto'],
  ['bulkhead.maxConcurrent', 'number'],
  ['bulkhead.algorithm', 'word'],
  ['bulkhead.initialLimit', 'number'],
  ['bulkhead.minLimit', 'number'],
  ['bulkhead.maxLimit', 'number'],
  ['bulkhead.maxQueue', 'number'],
  ['bulkhead.queueTimeoutMs', 'number'],
  ['rampUp.durationMs', 'number'],
  ['rampUp.initialRatio', 'number'],
];

const DEFAULTS_SEGMENT = 'DEFAULTS';
// A decimal number as people write one in a variable: no hex, no blanks, no "Infinity".
const NUMBER = /^-?(\d+(\.\d*)?|\.\d+)(e[+-]?\d+)?$/i;

/** `halfOpen.maxProbes` → `HALF_OPEN_MAX_PROBES`; `catalog.search` → `CATALOG_SEARCH`. */
function segmentOf(text: string): string {
  return text
    .replace(/([a-z\d])([A-Z])/g, '$1_$2')
    .replace(/[^A-Za-z\d]+/g, '_')
    .toUpperCase();
}

const SUFFIXES = new Map(OPTIONS.map(([path, kind]) => [segmentOf(path), { path, kind }]));

/**
 * Reads breaker options from environment variables named
 * `<prefix><BREAKER>_<OPTION>`: `CB_PAYMENTS_TIMEOUT_MS=2000`,
 * `CB_CATALOG_SEARCH_HALF_OPEN_MAX_PROBES=3`, `CB_DEFAULTS_OPEN_DURATION_MS=30000`
 * (a breaker's name and an option's path in upper snake case). Every value is
 * checked here, and an error names the variable: a typo in a deployment fails
 * start-up instead of being ignored. A variable with the prefix that names no
 * option is an error only when it clearly targets this package (a breaker
 * given or DEFAULTS, then a typo of an option; or a typo of a breaker given,
 * then an option): another program's `CB_API_KEY`, `CB_PAYMENTS_URL` or
 * `CB_HTTP_TIMEOUT_MS` is ignored.
 *
 * @publicApi
 */
export function circuitBreakerOptionsFromEnv(
  options: CircuitBreakerEnvOptions,
): CircuitBreakerEnvConfig {
  const given = options.prefix ?? 'CB_';
  if (typeof given !== 'string' || !/^\w+$/.test(given))
    throw new TypeError(envMessages.badPrefix(given));
  // `CB` reads CB_PAYMENTS_*, never CBX_*: a prefix is a whole word of the variable's name.
  const prefix = given.endsWith('_') ? given : `${given}_`;
  if (!Array.isArray(options.breakers))
    throw new TypeError(envMessages.badBreakers(options.breakers));
  const env =
    options.env ??
    (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env ??
    {};
  const owners = segmentsOf(options.breakers);

  const tree = new Map<string, Record<string, unknown>>();
  const variables = new Map<string, Map<string, string>>();
  for (const [variable, text] of Object.entries(env)) {
    if (!variable.startsWith(prefix) || text === undefined) continue;
    const rest = variable.slice(prefix.length);
    const found = match(rest, owners);
    if (found === undefined) {
      refuseUnknown(variable, prefix, rest, owners);
      continue;
    }
    const { owner, path, kind } = found;
    const names = variables.get(owner) ?? variables.set(owner, new Map()).get(owner)!;
    names.set(path, variable);
    setPath(
      tree.get(owner) ?? tree.set(owner, {}).get(owner)!,
      path,
      parse(variable, text.trim(), kind),
      names,
    );
  }

  const config: CircuitBreakerEnvConfig = {};
  const defaults = tree.get(DEFAULTS) as BreakerOptions | undefined;
  for (const given of tree.values()) completeWindow(given);
  for (const [owner, given] of tree) {
    if (owner !== DEFAULTS) inheritWindow(given, defaults);
    // Checked as start-up will check it (over the defaults the variables give), each option named by its variable.
    const own = variables.get(owner)!;
    const fromDefaults = variables.get(DEFAULTS);
    resolveBreakerOptions(
      owner,
      owner === DEFAULTS ? given : mergeOptions(defaults, given as BreakerOptions),
      {
        subject: envMessages.breakerSubject(owner),
        pathOf: (option) => own.get(option) ?? fromDefaults?.get(option) ?? option,
      },
    );
    if (owner === DEFAULTS) config.defaults = given as BreakerOptions;
    else (config.breakers ??= {})[owner] = given as BreakerOptions;
  }
  return config;
}

/** A window given by its size alone is a count window; by its duration alone, a time window. */
function completeWindow(options: Record<string, unknown>): void {
  const window = options.window as Record<string, unknown> | undefined;
  if (window === undefined || window.type !== undefined) return;
  if (window.size !== undefined) window.type = 'count';
  else if (window.durationMs !== undefined || window.buckets !== undefined) window.type = 'time';
}

/**
 * Each variable is one setting: `CB_PAYMENTS_WINDOW_BUCKETS=6` under
 * `CB_DEFAULTS_WINDOW_DURATION_MS=30000` means a 30 s window of 6 buckets, not
 * a window of 6 buckets over the built-in duration. (Options written in code
 * replace a window whole, since two kinds of window do not mix; a breaker's
 * window of the other kind still does here.)
 */
function inheritWindow(given: Record<string, unknown>, defaults: BreakerOptions | undefined): void {
  const own = given.window as Record<string, unknown> | undefined;
  const base = defaults?.window as Record<string, unknown> | undefined;
  if (own === undefined || base === undefined || own.type !== base.type) return;
  given.window = { ...base, ...own };
}

const DEFAULTS = 'defaults';

/** Each breaker's variable segment; two names that would read the same variables are an error. */
function segmentsOf(breakers: readonly string[]): Map<string, string> {
  const owners = new Map<string, string>([[DEFAULTS_SEGMENT, DEFAULTS]]);
  for (const name of breakers) {
    if (typeof name !== 'string' || name === '')
      throw new TypeError(envMessages.badBreakers(breakers));
    const segment = segmentOf(name);
    if (segment === DEFAULTS_SEGMENT)
      throw new BreakerConfigError(envMessages.reservedName(name), name);
    const other = owners.get(segment);
    if (other !== undefined && other !== name)
      throw new BreakerConfigError(envMessages.sameSegment(other, name, segment), name);
    owners.set(segment, name);
  }
  return owners;
}

/** The breaker and option a variable names; the longest breaker segment wins (`A_B_TIMEOUT_MS` for `a.b` over `a`). */
function match(
  rest: string,
  owners: Map<string, string>,
): { owner: string; path: string; kind: Kind } | undefined {
  let best: { owner: string; path: string; kind: Kind; length: number } | undefined;
  for (const [segment, owner] of owners) {
    if (!rest.startsWith(segment + '_')) continue;
    const option = SUFFIXES.get(rest.slice(segment.length + 1));
    if (option !== undefined && (best === undefined || segment.length > best.length))
      best = { owner, ...option, length: segment.length };
  }
  return best;
}

/**
 * A variable with the prefix that names no option: an error only when it
 * clearly targets this package, naming the variable it most likely meant;
 * ignored otherwise (another program's `CB_API_KEY`, `CB_PAYMENTS_URL`,
 * `CB_HTTP_TIMEOUT_MS`).
 */
function refuseUnknown(
  variable: string,
  prefix: string,
  rest: string,
  owners: Map<string, string>,
): void {
  const meant = meantVariable(rest, owners);
  if (meant === undefined) return;
  throw new BreakerConfigError(
    envMessages.unknownVariable(variable, prefix, `${prefix}${meant}`),
    '',
    variable,
  );
}

/**
 * What a variable that names no option meant, when it clearly targets this
 * package: a breaker given (or DEFAULTS) followed by a typo of an option's
 * name (`PAYMENTS_HALF_OPEN_MAX_PROBS`), or a typo of a breaker given followed
 * by an option's exact name (`PAYMENT_TIMEOUT_MS`). A segment that is no
 * breaker (`HTTP_TIMEOUT_MS`) or a word that is no option (`PAYMENTS_URL`)
 * targets something else.
 */
function meantVariable(rest: string, owners: Map<string, string>): string | undefined {
  let best: string | undefined;
  let bestLength = -1;
  for (const segment of owners.keys()) {
    if (!rest.startsWith(`${segment}_`) || segment.length <= bestLength) continue;
    const option = nearOption(rest.slice(segment.length + 1));
    if (option === undefined) continue;
    best = `${segment}_${option}`;
    bestLength = segment.length;
  }
  if (best !== undefined) return best;
  for (let at = rest.indexOf('_'); at !== -1; at = rest.indexOf('_', at + 1)) {
    const suffix = rest.slice(at + 1);
    if (!SUFFIXES.has(suffix)) continue;
    const near = closestName(rest.slice(0, at), owners.keys());
    if (near !== undefined) return `${near}_${suffix}`;
  }
  return undefined;
}

// An option of one word (`JITTER`, `SHARE`) is near only one edit away: `_STATE` is two from `_SHARE`.
const MULTI_WORD = [...SUFFIXES.keys()].filter((suffix) => suffix.includes('_'));
const ONE_WORD = [...SUFFIXES.keys()].filter((suffix) => !suffix.includes('_'));

/** The option a word names with a typo: within `closestName()`'s reach of a multi-word one, one edit of a one-word one. */
function nearOption(tail: string): string | undefined {
  const multi = closestName(tail, MULTI_WORD);
  if (multi !== undefined) return multi;
  return ONE_WORD.find((word) => oneEditApart(tail, word));
}

/** One insertion, deletion, substitution or swap of neighbours. */
function oneEditApart(a: string, b: string): boolean {
  if (Math.abs(a.length - b.length) > 1 || a === b) return false;
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  if (a.length === b.length)
    return (
      a.slice(i + 1) === b.slice(i + 1) ||
      (a[i] === b[i + 1] && a[i + 1] === b[i] && a.slice(i + 2) === b.slice(i + 2))
    );
  return a.length > b.length ? a.slice(i + 1) === b.slice(i) : a.slice(i) === b.slice(i + 1);
}

function parse(variable: string, text: string, kind: Kind): unknown {
  const lower = text.toLowerCase();
  if (kind === 'window-type') {
    if (lower === 'count' || lower === 'time') return lower;
    throw new BreakerConfigError(envMessages.notAWindowType(variable, text), '', variable);
  }
  // A name the options check (`bulkhead.algorithm`): their error names the variable.
  if (kind === 'word') return text;
  if (kind === 'boolean' || kind === 'false') {
    if (lower === 'false') return false;
    if (lower === 'true' && kind === 'boolean') return true;
    throw new BreakerConfigError(envMessages.notABoolean(variable, text, false), '', variable);
  }
  if (kind === 'number-or-false' && lower === 'false') return false;
  if (kind === 'number-or-auto' && lower === 'auto') return 'auto';
  if (!NUMBER.test(text)) {
    throw new BreakerConfigError(
      kind === 'number-or-false'
        ? envMessages.notABoolean(variable, text, true)
        : kind === 'number-or-auto'
          ? envMessages.notANumberOrAuto(variable, text)
          : envMessages.notANumber(variable, text),
      '',
      variable,
    );
  }
  return Number(text);
}

/**
 * Sets `halfOpen.maxProbes` in `target`. `SHARE=true` with `SHARE_QUORUM` is
 * one wish (share, with this quorum); `OVERLOAD=false` or `SHARE=false` with
 * an option of the same group contradict each other, and say so.
 */
function setPath(
  target: Record<string, unknown>,
  path: string,
  value: unknown,
  names: Map<string, string>,
): void {
  const dot = path.indexOf('.');
  const head = dot === -1 ? path : path.slice(0, dot);
  const current = target[head];
  if (dot === -1) {
    if (typeof current === 'object' && current !== null) {
      if (value === false) throw conflict(names, head, path);
      return;
    }
    target[path] = value;
    return;
  }
  if (current === false) throw conflict(names, head, path);
  const group =
    typeof current === 'object' && current !== null
      ? (current as Record<string, unknown>)
      : (target[head] = {});
  (group as Record<string, unknown>)[path.slice(dot + 1)] = value;
}

function conflict(names: Map<string, string>, head: string, path: string): BreakerConfigError {
  const off = names.get(head)!;
  const other =
    [...names].find(([option]) => option.startsWith(head + '.') && option !== head)?.[1] ??
    names.get(path)!;
  return new BreakerConfigError(envMessages.contradicting(off, other), '', off);
}
