/**
 * Options of one breaker that are each valid but cannot go together: every
 * message names both options as the user wrote them, says why, and ends with
 * what to change. (Single invalid values are `optionMessages.invalid`.)
 *
 * @internal
 */
export const breakerOptionMessages = {
  throughputOverWindow: (option: string, value: number, sizeOption: string, size: number) =>
    `option "${option}" (${value}) cannot exceed ${sizeOption} (${size}): the window could never hold enough calls to judge a rate. Lower "${option}" or enlarge the window.`,
  slowRateWithoutDuration: (option: string, durationOption: string) =>
    `option "${option}" needs "${durationOption}": without it no call is ever slow. Set "${durationOption}" too, or remove "${option}".`,
  backoffCapBelowOpen: (option: string, value: number, openOption: string, open: number) =>
    `option "${option}" (${value}) is below "${openOption}" (${open}): the cap would shorten the first open period. Raise "${option}" to at least ${open}.`,
  concurrentOverProbes: (option: string, value: number, probesOption: string, probes: number) =>
    `option "${option}" (${value}) cannot exceed "${probesOption}" (${probes}). Lower "${option}" or raise "${probesOption}".`,
  successesOverProbes: (option: string, value: number, probesOption: string, probes: number) =>
    `option "${option}" (${value}) cannot exceed "${probesOption}" (${probes}): the breaker could never close. Lower "${option}" or raise "${probesOption}".`,
  healthCheckTimeoutOverInterval: (
    option: string,
    value: number,
    intervalOption: string,
    interval: number,
  ) =>
    `option "${option}" (${value}) cannot exceed "${intervalOption}" (${interval}): a check would still be pending when the next is due. Lower "${option}" or raise "${intervalOption}".`,
  queueOverDeadline: (option: string, value: number, timeoutOption: string, timeout: number) =>
    `option "${option}" (${value}) cannot exceed "${timeoutOption}" (${timeout}): a call would wait in the queue past its own deadline. Lower "${option}" or raise "${timeoutOption}".`,
  retryCapBelowFirst: (option: string, value: number, firstOption: string, first: number) =>
    `option "${option}" (${value}) is below "${firstOption}" (${first}): the first wait would already be past the cap. Raise "${option}" to at least ${first}, or lower "${firstOption}".`,
  fixedAndAdaptiveCap: (option: string, algorithmOption: string, initialOption: string) =>
    `option "${option}" is a fixed cap and "${algorithmOption}" an adaptive one: a bulkhead has one cap. Remove "${option}", or "${algorithmOption}" (an adaptive cap starts at "${initialOption}").`,
  limitWithoutAlgorithm: (option: string, algorithmOption: string, fixedOption: string) =>
    `option "${option}" belongs to an adaptive cap and needs "${algorithmOption}" ('gradient' or 'aimd'). Add "${algorithmOption}", or remove "${option}" for a fixed cap ("${fixedOption}").`,
  maxLimitBelowMin: (option: string, value: number, minOption: string, min: number) =>
    `option "${option}" (${value}) is below "${minOption}" (${min}): no limit fits between them. Raise "${option}" or lower "${minOption}".`,
  initialLimitOutside: (
    option: string,
    value: number,
    minOption: string,
    min: number,
    maxOption: string,
    max: number,
  ) =>
    `option "${option}" (${value}) must be within "${minOption}" (${min}) and "${maxOption}" (${max}). Move it into that range, or widen the range.`,
  aggregateWithoutPerKey: (option: string) =>
    `option "${option}" needs "perKey": only a per-key family has targets to aggregate. Add perKey: { maxKeys }, or remove "${option}".`,
};
