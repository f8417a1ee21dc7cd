import type { OptionChecker } from './option-checker.js';

/*
 * Options as a table of rules: one entry per option (where it is read, its
 * default, its check), and one per pair of options that cannot go together,
 * applied in order by `applyOptionRules()`. A table is compiled once, when its
 * module loads: resolving options then makes no closure, no message text and
 * no regular expression unless an option is refused.
 */

/**
 * A check of one value: returns the value as resolved, or throws through the
 * checker, naming `option`. `fields` are the values resolved so far, for a
 * bound that depends on another option.
 *
 * @internal
 */
export type ValueCheck<F> = (
  check: OptionChecker,
  option: string,
  value: unknown,
  optional: boolean,
  fields: F,
) => unknown;

/** One option of a table. `G` is the options as given (after their shape checks), `F` the fields resolved. @internal */
export interface OptionRule<F, G> {
  /** Its path in the options the table reads (`halfOpen.maxProbes`): what messages name, after the table's prefix. */
  readonly option: string;
  /** The field of the resolution it sets. */
  readonly field: keyof F & string;
  readonly check: ValueCheck<F>;
  /** Its default when not given; `derive` instead when the default depends on other options. */
  readonly default?: unknown;
  readonly derive?: (fields: F, given: G) => unknown;
  /** Not given while its object is: an error. */
  readonly required?: boolean;
  /** A value taken as it is, without the check, and what it becomes (`timeoutMs: false`: no deadline). */
  readonly literal?: { readonly value: unknown; readonly becomes: unknown };
  /**
   * Whether the rule applies at all (`window.size` only to a count window); when not, its field stays
   * `undefined`. An option of an object not given needs none: it takes its default, and is not required.
   */
  readonly when?: (given: G) => boolean;
}

/** Two options, each valid, that cannot go together: `option` is the one the error names first. @internal */
export interface CrossRule<F, G> {
  readonly option: string;
  readonly conflicts: (fields: F, given: G) => boolean;
  /** The text after the subject, from `breakerOptionMessages`. */
  readonly message: (check: OptionChecker, fields: F) => string;
}

/**
 * The shape of one object of the options, checked where the table puts it
 * (plain object, known keys) and replaced by its plain copy. @internal
 */
export interface ShapeRule {
  readonly option: string;
  readonly known: readonly string[];
  /** What it must be, as messages say. */
  readonly expected: string;
  /** Values taken as they are instead (`budget: false`). */
  readonly asIs?: readonly unknown[];
}

/** @internal */
export type TableEntry<F, G> = OptionRule<F, G> | CrossRule<F, G> | ShapeRule;

const NOT_LITERAL: unique symbol = Symbol('not a literal');

/** An entry as the applier reads it: every entry has the same shape, so the loop stays monomorphic. */
class CompiledEntry<F, G> {
  /** The option's path as messages name it (with the table's prefix). */
  readonly path: string;
  /** Where the value is read: `given[section][key]`, or `given[key]` without a section. */
  readonly section: string | undefined;
  readonly key: string;
  /** The index of its field among the resolution's values; -1 for a conflict or a shape. */
  readonly slot: number;
  readonly check: ValueCheck<F> | undefined;
  readonly fallback: unknown;
  readonly derive: ((fields: F, given: G) => unknown) | undefined;
  readonly required: boolean;
  readonly literal: unknown = NOT_LITERAL;
  readonly becomes: unknown;
  readonly when: ((given: G) => boolean) | undefined;
  readonly conflicts: ((fields: F, given: G) => boolean) | undefined;
  readonly message: ((check: OptionChecker, fields: F) => string) | undefined;
  readonly shape: ShapeRule | undefined;

  constructor(prefix: string, entry: TableEntry<F, G>, slot: number) {
    this.path = prefix + entry.option;
    const dot = entry.option.indexOf('.');
    this.section = dot === -1 ? undefined : internalized(entry.option.slice(0, dot));
    this.key = dot === -1 ? entry.option : internalized(entry.option.slice(dot + 1));
    this.slot = slot;
    const rule = 'field' in entry ? entry : undefined;
    this.check = rule?.check;
    this.fallback = rule?.default;
    this.derive = rule?.derive;
    this.required = rule?.required === true;
    if (rule?.literal !== undefined) this.literal = rule.literal.value;
    this.becomes = rule?.literal?.becomes;
    this.when = rule?.when;
    this.conflicts = 'conflicts' in entry ? entry.conflicts : undefined;
    this.message = 'conflicts' in entry ? entry.message : undefined;
    this.shape = 'known' in entry ? entry : undefined;
  }
}

/**
 * The same string, as the engine keeps property names: a key made by
 * `slice()` would be looked up in the engine's string table on every read.
 */
function internalized(key: string): string {
  return Object.keys({ [key]: true })[0]!;
}

/** The fields of a resolution, read by name (rules, and whoever puts the result together), held by slot. */
interface FieldsView {
  readonly values: unknown[];
}

/** A compiled table: its entries in order, and how its fields are held. @internal */
export interface OptionTable<F, G> {
  readonly entries: readonly CompiledEntry<F, G>[];
  readonly blank: readonly unknown[];
  readonly View: new (values: unknown[]) => FieldsView;
}

/**
 * Compiles a table; `prefix` is the path of the options it reads
 * (`retry.`), put before every option a message names.
 *
 * A resolution holds its fields in an array, one slot per field, and rules
 * read them by name through getters of one class per table: a store by
 * field name on an object would be a megamorphic keyed store per option,
 * several times slower than the whole of the rest.
 *
 * @internal
 */
export function optionTable<F, G>(
  prefix: string,
  entries: readonly TableEntry<F, G>[],
): OptionTable<F, G> {
  const slots = new Map<string, number>();
  const compiled = entries.map((entry) => {
    if (!('field' in entry)) return new CompiledEntry<F, G>(prefix, entry, -1);
    if (!slots.has(entry.field)) slots.set(entry.field, slots.size);
    return new CompiledEntry<F, G>(prefix, entry, slots.get(entry.field)!);
  });
  class View implements FieldsView {
    constructor(readonly values: unknown[]) {}
  }
  for (const [field, slot] of slots)
    Object.defineProperty(View.prototype, field, {
      get(this: View) {
        return this.values[slot];
      },
    });
  return { entries: compiled, blank: Array.from({ length: slots.size }), View };
}

/**
 * Applies a table to options that passed their shape checks (plain copies):
 * each option is read, checked or given its default, in the table's order,
 * and each conflict is checked where the table puts it, so that the first
 * error is always the same one. Returns the resolved fields, read by name.
 *
 * @internal
 */
export function applyOptionRules<F, G extends object>(
  check: OptionChecker,
  table: OptionTable<F, G>,
  given: G,
): F {
  const values = table.blank.slice();
  const fields = new table.View(values) as unknown as F;
  const entries = table.entries;
  // Entries of one object follow each other: the object is read once for them.
  let section: string | undefined = '';
  let owner: unknown;
  let present = false;
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    if (entry.shape !== undefined) {
      copyShape(check, entry.path, entry.shape, given as Record<string, unknown>);
      section = '';
      continue;
    }
    if (entry.slot === -1) {
      if (entry.conflicts!(fields, given)) check.fail(entry.path, entry.message!(check, fields));
      continue;
    }
    if (entry.when !== undefined && !entry.when(given)) continue;
    if (entry.section !== section) {
      section = entry.section;
      owner = section === undefined ? given : (given as Record<string, unknown>)[section];
      present = typeof owner === 'object' && owner !== null;
    }
    const value = present ? (owner as Record<string, unknown>)[entry.key] : undefined;
    if (value !== undefined) {
      values[entry.slot] =
        value === entry.literal
          ? entry.becomes
          : entry.check!(check, entry.path, value, !entry.required, fields);
    } else if (entry.required && present) {
      entry.check!(check, entry.path, value, false, fields);
    } else {
      values[entry.slot] =
        entry.derive === undefined ? entry.fallback : entry.derive(fields, given);
    }
  }
  return fields;
}

function copyShape(
  check: OptionChecker,
  path: string,
  { option, known, expected, asIs }: ShapeRule,
  given: Record<string, unknown>,
): void {
  const value = given[option];
  if (value !== undefined && (asIs === undefined || !asIs.includes(value)))
    given[option] = check.record(path, value, known, expected);
}
