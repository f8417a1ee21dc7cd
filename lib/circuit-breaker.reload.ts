import {
  BreakerConfigError,
  type BreakerOptions,
  type BreakerStore,
  type ResolvedBreakerOptions,
} from './core/index.js';
import { OptionChecker, pathKey } from './core/options/option-checker.js';
import { reconfigured } from './core/options/reconfiguration.js';
import {
  breakerOptionChecker,
  copyBreakerOptions,
  resolveBreakerOptions,
} from './core/options/resolve-options.js';
import { circuitBreakerMessages } from './circuit-breaker.messages.js';
import { checkBreakerDefinition } from './circuit-breaker.options.js';

/** What `registry.reload()` takes: the breaker part of `forRoot()`'s options. @publicApi */
export interface CircuitBreakerConfigTree {
  defaults?: BreakerOptions;
  breakers?: Record<string, BreakerOptions>;
}

/** What `registry.reload()` did. @publicApi */
export interface CircuitBreakerReload {
  /** Breakers of the tree that did not exist: created. */
  added: string[];
  /** Breakers whose effective options changed (their own, or the defaults under them): reconfigured, state kept. */
  reconfigured: string[];
  /** Breakers whose effective options are the same. */
  unchanged: string[];
  /** Breakers `forRoot()` (or an earlier reload) defined that the tree no longer names: kept, on their last options over the new defaults. */
  notInTree: string[];
}

/** The site named in the messages of a reload. @internal */
export const RELOAD = 'CircuitBreakerRegistry.reload()';

/** One breaker's part of a reload: its own options, and what they make over the new defaults. @internal */
export interface ReloadEntry {
  readonly name: string;
  readonly own: BreakerOptions | undefined;
  readonly merged: BreakerOptions;
  /** The breaker as it runs now; undefined for a new one. */
  readonly current: ResolvedBreakerOptions | undefined;
}

/** A breaker that exists already: its options now, and its own options as defined. @internal */
export interface ExistingBreaker {
  readonly name: string;
  readonly config: ResolvedBreakerOptions;
  readonly own: BreakerOptions | undefined;
}

/**
 * Checks a whole tree before anything changes: the defaults, every breaker of
 * the tree, and every other breaker of the application under the new
 * defaults. Every error is collected; with any, the reload is refused whole.
 *
 * @internal
 */
export function planReload(
  tree: unknown,
  existing: readonly ExistingBreaker[],
  store: BreakerStore | undefined,
): { defaults: BreakerOptions | undefined; entries: ReloadEntry[] } {
  const check = new OptionChecker(RELOAD);
  const given = check.record(
    '',
    tree,
    ['defaults', 'breakers'],
    'an object { defaults?, breakers? }',
    false,
  );
  const errors: string[] = [];
  const attempt = <T>(run: () => T): T | undefined => {
    try {
      return run();
    } catch (error) {
      errors.push(error instanceof Error ? error.message : String(error));
      return undefined;
    }
  };
  const defaults = attempt(() => {
    if (given.defaults === undefined) return undefined;
    const source = {
      subject: RELOAD,
      pathOf: (option: string) => (option === 'options' ? 'defaults' : `defaults.${option}`),
    };
    const copy = copyBreakerOptions(breakerOptionChecker('(defaults)', source), given.defaults);
    resolveBreakerOptions('(defaults)', copy, source);
    return copy;
  });
  const entries: ReloadEntry[] = [];
  const byName = new Map(existing.map((breaker) => [breaker.name, breaker]));
  const named = new Set<string>();
  const plan = (name: string, options: unknown, path: string) =>
    attempt(() => {
      const { own, merged } = checkBreakerDefinition(name, options, defaults, RELOAD, path);
      if (store === undefined && merged.share !== undefined && merged.share !== false) {
        throw new BreakerConfigError(circuitBreakerMessages.shareWithoutStore(name), name, 'share');
      }
      const current = byName.get(name)?.config;
      if (current !== undefined) reconfigured(name, current, merged);
      entries.push({ name, own, merged, current });
    });
  const breakers = attempt(() =>
    given.breakers === undefined
      ? []
      : check.entries('breakers', given.breakers, 'a record of breaker name → options'),
  );
  for (const [name, options] of breakers ?? []) {
    named.add(name);
    plan(name, options, `breakers${pathKey(name)}`);
  }
  for (const breaker of existing) if (!named.has(breaker.name)) plan(breaker.name, breaker.own, '');
  if (errors.length > 0)
    throw new BreakerConfigError(circuitBreakerMessages.reloadRefused(errors), RELOAD);
  return { defaults, entries };
}

/** Whether two effective options are the same: plain values by value, classifiers by identity. @internal */
export function sameOptions(a: ResolvedBreakerOptions, b: ResolvedBreakerOptions): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const key of keys) {
    const x: unknown = (a as unknown as Record<string, unknown>)[key];
    const y: unknown = (b as unknown as Record<string, unknown>)[key];
    if (
      typeof x === 'function' || typeof y === 'function'
        ? x !== y
        : JSON.stringify(x) !== JSON.stringify(y)
    )
      return false;
  }
  return true;
}
