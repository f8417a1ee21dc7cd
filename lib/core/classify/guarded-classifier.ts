import type { CallOutcome } from '../state/breaker-state.js';
import { BreakerHookError } from '../errors/breaker.errors.js';
import { breakerMessages } from '../errors/breaker.messages.js';
import { defaultClassifyError, defaultClassifyResult } from './classify.js';
import type { ResolvedBreakerOptions } from '../options/resolve-options.js';

const OUTCOMES: ReadonlySet<unknown> = new Set<unknown>([
  'success',
  'failure',
  'ignored',
  'overload',
]);

/**
 * Runs one of the application's classifiers without trusting it. A classifier
 * that throws or answers nonsense is a bug in the application: it is reported
 * through `reporter` (never to the caller, who gets its own outcome), and the
 * call counts as a failure so the breaker still protects and no permit is
 * lost. `undefined` means "no opinion": the default classification applies.
 *
 * @internal
 */
export function runClassifier(
  breaker: string,
  option: string,
  classifier: (subject: unknown) => CallOutcome | undefined,
  subject: unknown,
  reporter: { reportHookError(source: string, error: Error): void },
): CallOutcome | undefined {
  let outcome: unknown;
  try {
    outcome = classifier(subject);
  } catch (fault) {
    reporter.reportHookError(
      option,
      new BreakerHookError(breakerMessages.classifierThrew(breaker, option, fault), fault),
    );
    return 'failure';
  }
  if (outcome === undefined || OUTCOMES.has(outcome)) return outcome as CallOutcome | undefined;
  reporter.reportHookError(
    option,
    new BreakerHookError(breakerMessages.classifierAnswered(breaker, option, outcome), undefined),
  );
  return 'failure';
}

/**
 * How `breaker` counts a rejected call (`classify`) or a resolved one
 * (`classifyResult`): the application's classifier, guarded, then the default.
 *
 * @internal
 */
export function classifyWith(
  breaker: {
    readonly name: string;
    readonly config: ResolvedBreakerOptions;
    reportHookError(source: string, error: Error): void;
  },
  option: 'classify' | 'classifyResult',
  subject: unknown,
  /** The options the call started under. */
  config: ResolvedBreakerOptions = breaker.config,
  /** What the caller decided (`permit.fail(error, outcome)`): replaces the default classification. */
  decided?: 'failure' | 'overload',
): CallOutcome {
  const classifier = config[option];
  if (classifier !== undefined) {
    const outcome = runClassifier(breaker.name, option, classifier, subject, breaker);
    if (outcome !== undefined) return outcome;
  }
  // With `overload: false`, an overload is a failure, as the default classification counts a 429.
  if (decided !== undefined)
    return decided === 'overload' && config.overloadK === 0 ? 'failure' : decided;
  return option === 'classify'
    ? defaultClassifyError(subject, config.overloadK !== 0)
    : defaultClassifyResult(subject, config.overloadK !== 0);
}
