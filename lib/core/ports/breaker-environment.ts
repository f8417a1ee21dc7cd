import type { BreakerChannel, BreakerChannels } from './breaker-channels.js';
import type { BreakerCoordinator } from './breaker-coordinator.interface.js';
import { breakerMessages } from '../errors/breaker.messages.js';
import { monotonicOf, systemClock, type Clock, type RandomSource } from './clock.js';
import { deadlines, deadlinesOf, type DeadlineScheduler } from '../calls/deadline-scheduler.js';
import { HealthCheckScheduler } from '../recovery/health-check-scheduler.js';

/** What a breaker may be given besides its options. @publicApi */
export interface BreakerDeps {
  /** Where time comes from (wall time and a monotonic reading, see `Clock`). Default: `Date.now` and `performance.now()`. */
  clock?: Clock;
  /**
   * Where jitter, load shedding and a retry's jitter draw from: numbers in
   * [0, 1). A draw that throws or falls outside counts as 0.5 and is reported
   * once (`reportError`). Default: `Math.random`.
   */
  random?: RandomSource;
  /** Shares transitions with other replicas (see `nestjs-circuit-breaker/redis`). Default: none, local state only. */
  coordinator?: BreakerCoordinator;
  /**
   * Told when the application's own code run by the breaker (a listener, a
   * classifier) throws or answers nonsense. The call is not affected, and each
   * source is reported once per breaker. Default: `console.error`.
   */
  reportError?: (error: Error) => void;
  /**
   * Allows `injectFault()` on these breakers (failures, latency and overload
   * made up by the breaker itself, for tests and game days). Default `false`:
   * `injectFault()` is refused, so production code cannot inject by mistake.
   */
  faultInjection?: boolean;
  /**
   * The one timer behind the active health checks (`healthCheck` option) of every
   * breaker given it; build it with the same clock. Default: one per `deps`
   * object (under Nest, one per registry).
   */
  healthCheckScheduler?: HealthCheckScheduler;
  /**
   * Where the breakers publish their refusals, transitions and calls for
   * tracers and APM agents: `breakerChannels()` of `nestjs-circuit-breaker/diagnostics`
   * gives Node's diagnostics channels (what a Nest module's breakers use).
   * With nobody subscribed, publishing costs one read of `hasSubscribers`
   * per channel. Default: none.
   */
  channels?: BreakerChannels;
}

/**
 * What a breaker is given besides its options, checked once and shared by
 * every breaker made from the same `deps` object (a family's children and a
 * registry's breakers included): a breaker per target holds one reference
 * instead of five.
 *
 * @internal
 */
export interface BreakerEnvironment {
  readonly clock: Clock;
  /** The reading every duration runs on (see `Clock`). */
  readonly monotonic: () => number;
  readonly random: RandomSource;
  readonly coordinator: BreakerCoordinator | undefined;
  readonly reportError: (error: Error) => void;
  /** Where the per-call deadlines of these breakers wait: the process's timers, or the clock's own. */
  readonly deadlines: DeadlineScheduler;
  readonly faultInjection: boolean;
  readonly healthCheckScheduler: HealthCheckScheduler | undefined;
  readonly channels: BreakerChannels | undefined;
  /** The call channels of `channels`, when it has any (the other one a silent channel): what `execute()` checks. */
  readonly calls: CallChannels | undefined;
}

/** A call's two channels. @internal */
export interface CallChannels {
  readonly start: BreakerChannel;
  readonly settle: BreakerChannel;
}

/** The channel of a pair that was not given: nobody ever listens. */
const SILENT: BreakerChannel = Object.freeze({ hasSubscribers: false, publish() {} });

function callChannelsOf(channels: BreakerChannels | undefined): CallChannels | undefined {
  if (channels === undefined) return undefined;
  const { callStart, callSettle } = channels;
  if (callStart === undefined && callSettle === undefined) return undefined;
  return Object.freeze({ start: callStart ?? SILENT, settle: callSettle ?? SILENT });
}

function defaultReportError(error: Error): void {
  console.error(error);
}

const DEFAULT_ENVIRONMENT: BreakerEnvironment = Object.freeze({
  clock: systemClock,
  monotonic: monotonicOf(systemClock),
  random: Math.random,
  coordinator: undefined,
  reportError: defaultReportError,
  deadlines,
  faultInjection: false,
  healthCheckScheduler: undefined,
  channels: undefined,
  calls: undefined,
});

const environments = new WeakMap<object, BreakerEnvironment>();

/** The environment of `deps`, checked the first time it is seen; `name` is for the messages. @internal */
export function environmentOf(name: string, deps: BreakerDeps | undefined): BreakerEnvironment {
  if (deps === undefined) return DEFAULT_ENVIRONMENT;
  if (typeof deps !== 'object' || deps === null)
    throw new TypeError(breakerMessages.invalidDep(name, 'deps', deps, 'an object'));
  let environment = environments.get(deps);
  if (environment !== undefined) return environment;
  checkDeps(name, deps);
  const {
    clock,
    random,
    coordinator,
    reportError,
    faultInjection,
    healthCheckScheduler,
    channels,
  } = deps;
  environment =
    clock === undefined &&
    random === undefined &&
    coordinator === undefined &&
    reportError === undefined &&
    faultInjection !== true &&
    healthCheckScheduler === undefined &&
    channels === undefined
      ? DEFAULT_ENVIRONMENT
      : Object.freeze({
          clock: clock ?? systemClock,
          monotonic: monotonicOf(clock ?? systemClock),
          random: random ?? Math.random,
          coordinator,
          reportError: reportError ?? defaultReportError,
          deadlines: clock === undefined ? deadlines : deadlinesOf(clock),
          faultInjection: faultInjection === true,
          healthCheckScheduler,
          channels,
          calls: callChannelsOf(channels),
        });
  environments.set(deps, environment);
  return environment;
}

/** Checks what a breaker is given besides its options, so that a wrong clock fails here and not on the first call. */
function checkDeps(name: string, deps: BreakerDeps): void {
  const { clock, random, reportError } = deps;
  if (clock !== undefined) {
    if (typeof clock !== 'object' || clock === null || typeof clock.now !== 'function') {
      throw new TypeError(
        breakerMessages.invalidDep(
          name,
          'clock',
          clock,
          'an object with a now() method returning milliseconds',
        ),
      );
    }
    if (clock.monotonic !== undefined && typeof clock.monotonic !== 'function') {
      throw new TypeError(
        breakerMessages.invalidDep(
          name,
          'clock.monotonic',
          clock.monotonic,
          'a method returning milliseconds, or left out',
        ),
      );
    }
    if (clock.setTimer !== undefined && typeof clock.setTimer !== 'function') {
      throw new TypeError(
        breakerMessages.invalidDep(
          name,
          'clock.setTimer',
          clock.setTimer,
          'a method (callback, delayMs) => cancel, or left out',
        ),
      );
    }
    // Reading a clock has no effect on it: a clock that answers nonsense fails here rather than on the first call.
    for (const reading of ['now', 'monotonic'] as const) {
      if (reading === 'monotonic' && clock.monotonic === undefined) continue;
      const value: unknown = clock[reading]!();
      if (typeof value !== 'number' || !Number.isFinite(value)) {
        throw new TypeError(
          breakerMessages.invalidDep(
            name,
            `clock.${reading}()`,
            value,
            'a finite number of milliseconds',
          ),
        );
      }
    }
  }
  // Not drawn from here: a test's sequence of numbers must not lose its first to a check.
  if (random !== undefined && typeof random !== 'function') {
    throw new TypeError(
      breakerMessages.invalidDep(name, 'random', random, 'a function returning a number in [0, 1)'),
    );
  }
  if (reportError !== undefined && typeof reportError !== 'function') {
    throw new TypeError(breakerMessages.invalidDep(name, 'reportError', reportError, 'a function'));
  }
  const { faultInjection } = deps;
  if (faultInjection !== undefined && typeof faultInjection !== 'boolean') {
    throw new TypeError(
      breakerMessages.invalidDep(name, 'faultInjection', faultInjection, 'true, false or left out'),
    );
  }
  checkChannels(name, deps.channels);
  if (
    deps.healthCheckScheduler !== undefined &&
    !(deps.healthCheckScheduler instanceof HealthCheckScheduler)
  ) {
    throw new TypeError(
      breakerMessages.invalidDep(
        name,
        'healthCheckScheduler',
        deps.healthCheckScheduler,
        'a HealthCheckScheduler (new HealthCheckScheduler({ clock }))',
      ),
    );
  }
}

/** `deps.channels`: each channel an object with `hasSubscribers` and `publish()`, as Node's diagnostics channels are. */
function checkChannels(name: string, channels: BreakerChannels | undefined): void {
  if (channels === undefined) return;
  for (const which of ['rejected', 'stateChange', 'callStart', 'callSettle'] as const) {
    const channel = (channels as Partial<BreakerChannels> | null)?.[which];
    if (channel === undefined && (which === 'callStart' || which === 'callSettle')) continue;
    if (typeof channel !== 'object' || channel === null || typeof channel.publish !== 'function')
      throw new TypeError(
        breakerMessages.invalidDep(
          name,
          `channels.${which}`,
          channel,
          'a channel with hasSubscribers and publish(), such as breakerChannels() of nestjs-circuit-breaker/diagnostics gives',
        ),
      );
  }
}

const schedulers = new WeakMap<BreakerEnvironment, HealthCheckScheduler>();

/** The scheduler of the health checks of every breaker of `env`, made on first use. @internal */
export function healthCheckSchedulerOf(env: BreakerEnvironment): HealthCheckScheduler {
  if (env.healthCheckScheduler !== undefined) return env.healthCheckScheduler;
  let scheduler = schedulers.get(env);
  if (scheduler === undefined)
    schedulers.set(env, (scheduler = new HealthCheckScheduler({ clock: env.clock })));
  return scheduler;
}
