import type { OptionChecker } from './option-checker.js';
import { breakerOptionMessages } from './breaker-options.messages.js';
import { integer, MAX_TIMER_MS, optionalDuration, or } from './option-values.js';
import type {
  RecoveryProbeOptions,
  ResolvedRecoveryOptions,
} from './recovery-options.interface.js';

export type * from './recovery-options.interface.js';

/** @internal */
export const RECOVERY_KEYS = ['bulkhead', 'rampUp', 'probe'] as const;
const OBJECTS = {
  bulkhead: [
    ['maxConcurrent', 'maxQueue', 'queueTimeoutMs'],
    '{ maxConcurrent, maxQueue?, queueTimeoutMs? }',
  ],
  rampUp: [['durationMs', 'initialRatio'], '{ durationMs, initialRatio? }'],
  probe: [
    ['fn', 'intervalMs', 'timeoutMs', 'onSuccess'],
    '{ fn, intervalMs, timeoutMs?, onSuccess? }',
  ],
} as const;
const DEFAULT_QUEUE_TIMEOUT_MS = 10_000;
const DEFAULT_INITIAL_RATIO = 0.1;

/** @internal The shape checks of `copyBreakerOptions()` for the recovery options: plain objects of known keys, copied. */
export function copyRecoveryOptions(check: OptionChecker, copy: Record<string, unknown>): void {
  for (const key of RECOVERY_KEYS) {
    if (copy[key] === undefined) continue;
    const [known, expected] = OBJECTS[key];
    copy[key] = check.record(key, copy[key], known, `an object ${expected}`);
  }
}

/** @internal Checks the recovery options; `timeoutMs` is the breaker's deadline (`undefined` when off). */
export function resolveRecoveryOptions(
  check: OptionChecker,
  options: { bulkhead?: unknown; rampUp?: unknown; probe?: unknown },
  timeoutMs: number | undefined,
): ResolvedRecoveryOptions {
  const bulkhead = resolveBulkhead(
    check,
    options.bulkhead as Record<string, unknown> | undefined,
    timeoutMs,
  );
  const rampUp = resolveRampUp(check, options.rampUp as Record<string, unknown> | undefined);
  const probe = resolveProbe(check, options.probe as Record<string, unknown> | undefined);
  const guarded = bulkhead !== undefined || rampUp !== undefined || probe !== undefined;
  return { guarded, bulkhead, rampUp, probe };
}

function resolveBulkhead(
  check: OptionChecker,
  given: Record<string, unknown> | undefined,
  timeoutMs: number | undefined,
): ResolvedRecoveryOptions['bulkhead'] {
  if (given === undefined) return undefined;
  const maxConcurrent = check.number(
    'bulkhead.maxConcurrent',
    given.maxConcurrent,
    { min: 1, integer: true },
    'an integer >= 1',
    false,
  );
  const maxQueue = integer(check, 'bulkhead.maxQueue', or(given.maxQueue, 0), 0);
  const queueTimeoutMs =
    optionalDuration(check, 'bulkhead.queueTimeoutMs', given.queueTimeoutMs, MAX_TIMER_MS) ??
    timeoutMs ??
    DEFAULT_QUEUE_TIMEOUT_MS;
  if (timeoutMs !== undefined && queueTimeoutMs > timeoutMs)
    check.fail(
      'bulkhead.queueTimeoutMs',
      breakerOptionMessages.queueOverDeadline(
        check.pathOf('bulkhead.queueTimeoutMs'),
        queueTimeoutMs,
        check.pathOf('timeoutMs'),
        timeoutMs,
      ),
    );
  return Object.freeze({ maxConcurrent, maxQueue, queueTimeoutMs });
}

function resolveRampUp(
  check: OptionChecker,
  given: Record<string, unknown> | undefined,
): ResolvedRecoveryOptions['rampUp'] {
  if (given === undefined) return undefined;
  const durationMs = check.number(
    'rampUp.durationMs',
    given.durationMs,
    { min: 0, minExclusive: true },
    'a positive, finite number of milliseconds',
    false,
  );
  const initialRatio = check.number(
    'rampUp.initialRatio',
    or(given.initialRatio, DEFAULT_INITIAL_RATIO),
    { min: 0, minExclusive: true, max: 1 },
    'a number in (0, 1]',
  );
  return Object.freeze({ durationMs, initialRatio });
}

function resolveProbe(
  check: OptionChecker,
  given: Record<string, unknown> | undefined,
): ResolvedRecoveryOptions['probe'] {
  if (given === undefined) return undefined;
  const fn = check.func<RecoveryProbeOptions['fn']>(
    'probe.fn',
    given.fn,
    'a function returning the health check (a Promise)',
    false,
  );
  // A timer cannot wait longer; and at least a millisecond, or one probe would follow another without end.
  const intervalMs = check.number(
    'probe.intervalMs',
    given.intervalMs,
    { min: 1, max: MAX_TIMER_MS },
    `a number of milliseconds in [1, ${MAX_TIMER_MS}]`,
    false,
  );
  const timeoutMs =
    optionalDuration(check, 'probe.timeoutMs', given.timeoutMs, MAX_TIMER_MS) ?? intervalMs;
  if (timeoutMs > intervalMs)
    check.fail(
      'probe.timeoutMs',
      breakerOptionMessages.probeTimeoutOverInterval(
        check.pathOf('probe.timeoutMs'),
        timeoutMs,
        check.pathOf('probe.intervalMs'),
        intervalMs,
      ),
    );
  const onSuccess = check.oneOf('probe.onSuccess', or(given.onSuccess, 'half-open'), [
    'half-open',
    'closed',
  ] as const);
  return Object.freeze({ fn, intervalMs, timeoutMs, onSuccess });
}
