import { Inject, Injectable, Optional } from '@nestjs/common';
import { CircuitBreakerModuleMissingError } from '../circuit-breaker-module-missing.error.js';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { CircuitBreakerRegistry } from '../circuit-breaker.registry.js';
import { OptionChecker } from '../core/options/option-checker.js';
import type {
  BreakerSnapshot,
  FailureSummary,
  ForcedStateSnapshot,
  TransitionEvidence,
} from '../core/index.js';
import type {
  CircuitBreakerHealthStatus,
  CircuitBreakerHealthOptions,
} from './circuit-breaker-health-options.interface.js';
import { circuitBreakerHealthMessages as messages } from './circuit-breaker-health.messages.js';

/** What the check reports per breaker when details are shown. @publicApi */
export interface CircuitBreakerHealthDetails {
  state: BreakerSnapshot['state'];
  since: number;
  retryAfterMs?: number;
  failureRate: number;
  callsInWindow: number;
  /** Why it is in its state: the last transition (dated when it was due) and, for an opening, the window it opened on. */
  lastTransition?: TransitionEvidence;
  /** The last failure it counted: category, error class, HTTP status, message (at most 200 characters). */
  lastFailure?: FailureSummary;
  /** While `force()` holds the breaker: what, why, by whom and until when. */
  forced?: ForcedStateSnapshot;
  /** For a per-key family: how many of its targets are open or half-open. */
  unhealthyKeys?: number;
  /** For a breaker that shares its state (a module `store`): whether it reaches the other replicas now. */
  shared?: boolean;
  /** For a breaker that shares its state: the store's failed or timed-out operations since start. */
  storeErrors?: number;
}

/** What the check reports per concurrency limiter when details are shown. @publicApi */
export interface CircuitBreakerLimiterHealthDetails {
  limit: number;
  inFlight: number;
  queued: number;
  /** Requests shed since start. */
  shed: number;
  /** Whether it shed a request in the last 10 s. */
  shedding: boolean;
}

const RANK: Record<CircuitBreakerHealthStatus, number> = { up: 0, degraded: 1, down: 2 };

/**
 * A @nestjs/terminus indicator that reports open breakers, for **readiness**
 * checks (`/health/ready`). Never use it for liveness: restarting a replica
 * does not repair a dependency.
 *
 * It never throws (in terminus 12 a throwing indicator is an HTTP 500): an
 * unknown name or an internal error is reported as `down` with a message.
 *
 * @publicApi
 */
@Injectable()
export class CircuitBreakerHealthIndicator {
  private readonly registry: CircuitBreakerRegistry;

  constructor(
    // Optional only to fail with a message naming the missing import, instead of Nest's "can't resolve dependencies".
    @Optional() @Inject(CircuitBreakerRegistry) registry: CircuitBreakerRegistry | undefined,
    private readonly health: HealthIndicatorService,
  ) {
    if (registry === undefined)
      throw new CircuitBreakerModuleMissingError(messages.moduleMissing(), messages.module);
    this.registry = registry;
  }

  isHealthy<const Key extends string = 'circuit_breakers'>(
    key: Key = 'circuit_breakers' as Key,
    options: CircuitBreakerHealthOptions = {},
  ): HealthIndicatorResult<Key> {
    // A bad key or option is reported like any other problem: down, with the message.
    const indicator = this.health.check(
      typeof key === 'string' && key !== '' ? key : ('circuit_breakers' as Key),
    );
    try {
      const {
        openStatus = 'down',
        forcedOpenStatus = 'up',
        halfOpenStatus = 'degraded',
        sheddingStatus = 'degraded',
        details = true,
        breakers: only,
        limiters: onlyLimiters,
      } = checkOptions(key, options);
      const names = only ?? this.registry.list();
      const unknown = names.filter((name) => !this.registry.has(name));
      if (unknown.length > 0) {
        return indicator.down({ message: messages.unknownBreakers(unknown) });
      }
      const known = this.registry.limiterNames();
      const limiterNames = onlyLimiters ?? known;
      const unknownLimiters = limiterNames.filter((name) => !known.includes(name));
      if (unknownLimiters.length > 0) {
        return indicator.down({ message: messages.unknownLimiters(unknownLimiters) });
      }
      let status: CircuitBreakerHealthStatus = 'up';
      // `forced` appears only when a breaker is forced: bodies stay as they were for everyone else.
      const counts: { total: number; open: number; halfOpen: number; forced?: number } = {
        total: 0,
        open: 0,
        halfOpen: 0,
      };
      const breakers: Record<string, CircuitBreakerHealthDetails> = {};
      for (const name of names) {
        const snapshot = this.registry.get(name).snapshot();
        counts.total++;
        let own: CircuitBreakerHealthStatus = 'up';
        if (snapshot.forced !== undefined) {
          counts.forced = (counts.forced ?? 0) + 1;
          if (snapshot.forced.state === 'open') own = forcedOpenStatus;
        } else if (snapshot.state === 'open' || snapshot.state === 'isolated') {
          counts.open++;
          own = openStatus;
        } else if (snapshot.state === 'half-open') {
          counts.halfOpen++;
          own = halfOpenStatus;
        }
        if (RANK[own] > RANK[status]) status = own;
        if (details) breakers[name] = detailsOf(snapshot);
      }
      const limits = limiterStates(this.registry, limiterNames, details);
      if (limits.shedding > 0 && RANK[sheddingStatus] > RANK[status]) status = sheddingStatus;
      // Limiters appear only in an application that has some: bodies stay as they were for everyone else.
      const limiterData: Record<string, unknown> =
        limiterNames.length === 0
          ? {}
          : details
            ? { shedding: limits.shedding, limiters: limits.details }
            : { shedding: limits.shedding };
      const data: Record<string, unknown> = details
        ? { ...counts, breakers, ...limiterData }
        : { ...counts, ...limiterData };
      return status === 'up'
        ? indicator.up(data)
        : status === 'degraded'
          ? indicator.degraded(data)
          : indicator.down(data);
    } catch (error) {
      return indicator.down({ message: error instanceof Error ? error.message : String(error) });
    }
  }
}

const STATUSES = ['up', 'degraded', 'down'] as const;

/** How many of `names` are shedding, and each one's details. */
function limiterStates(
  registry: CircuitBreakerRegistry,
  names: readonly string[],
  details: boolean,
): { shedding: number; details: Record<string, CircuitBreakerLimiterHealthDetails> } {
  let shedding = 0;
  const all: Record<string, CircuitBreakerLimiterHealthDetails> = {};
  for (const name of names) {
    const { limit, inFlight, queued, shed, shedding: now } = registry.limiter(name).snapshot();
    if (now) shedding++;
    if (details) all[name] = { limit, inFlight, queued, shed, shedding: now };
  }
  return { shedding, details: all };
}

/** The options, read once and checked; an error names the option, for the `down` message. */
function checkOptions(key: unknown, given: unknown): CircuitBreakerHealthOptions {
  const check = new OptionChecker(messages.subject(key));
  check.string('key', key, messages.expectedKey, (value) => value !== '');
  const options = check.record(
    '',
    given,
    [
      'breakers',
      'limiters',
      'openStatus',
      'forcedOpenStatus',
      'halfOpenStatus',
      'sheddingStatus',
      'details',
    ],
    messages.expectedOptions,
  );
  if (options.openStatus !== undefined) check.oneOf('openStatus', options.openStatus, STATUSES);
  if (options.forcedOpenStatus !== undefined)
    check.oneOf('forcedOpenStatus', options.forcedOpenStatus, STATUSES);
  if (options.halfOpenStatus !== undefined)
    check.oneOf('halfOpenStatus', options.halfOpenStatus, STATUSES);
  if (options.sheddingStatus !== undefined)
    check.oneOf('sheddingStatus', options.sheddingStatus, STATUSES);
  if (options.details !== undefined) check.boolean('details', options.details);
  if (options.breakers !== undefined)
    options.breakers = namesOf(check, 'breakers', options.breakers, messages.expectedBreakers);
  if (options.limiters !== undefined)
    options.limiters = namesOf(check, 'limiters', options.limiters, messages.expectedLimiters);
  return options as CircuitBreakerHealthOptions;
}

function namesOf(check: OptionChecker, option: string, value: unknown, expected: string): string[] {
  let array = false;
  try {
    array = Array.isArray(value);
  } catch {
    // A revoked Proxy: reported below as not an array.
  }
  if (!array) check.invalid(option, value, expected);
  const length = check.read(value as object, 'length', option) as number;
  const names: string[] = [];
  for (let i = 0; i < length; i++)
    names.push(
      check.string(
        `${option}[${i}]`,
        check.read(value as object, String(i), `${option}[${i}]`),
        messages.expectedBreakerName,
        (name) => name !== '',
        false,
      ),
    );
  return names;
}

function detailsOf(snapshot: BreakerSnapshot): CircuitBreakerHealthDetails {
  return {
    state: snapshot.state,
    since: snapshot.since,
    ...(snapshot.retryAfterMs === undefined ? {} : { retryAfterMs: snapshot.retryAfterMs }),
    failureRate: snapshot.window.failureRate,
    callsInWindow: snapshot.window.calls,
    ...(snapshot.lastTransition === undefined ? {} : { lastTransition: snapshot.lastTransition }),
    ...(snapshot.lastFailure === undefined ? {} : { lastFailure: snapshot.lastFailure }),
    ...(snapshot.forced === undefined ? {} : { forced: snapshot.forced }),
    ...(snapshot.family === undefined ? {} : { unhealthyKeys: snapshot.family.unhealthyKeys }),
    ...(snapshot.coordination === undefined
      ? {}
      : { shared: snapshot.coordination.shared, storeErrors: snapshot.coordination.storeErrors }),
  };
}
