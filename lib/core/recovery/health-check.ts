import type { HealthCheckSnapshot } from '../snapshot/breaker-snapshot.js';
import type { CallOutcome } from '../state/breaker-state.js';
import { BreakerHookError, CallTimeoutError } from '../errors/breaker.errors.js';
import { breakerMessages } from '../errors/breaker.messages.js';
import type { HealthCheckScheduler, ScheduledTask } from './health-check-scheduler.js';
import {
  mayProbeForFleet,
  needsHealthCheck,
  recordHealthCheck,
  recoveredByHealthCheck,
  type RecoveryTarget,
} from './recovery-host.js';
import type { ResolvedBreakerOptions } from '../options/resolved-breaker-options.interface.js';

/** What a health check needs of its breaker (every `Breaker` is one). @internal */
export interface HealthCheckHost extends RecoveryTarget {
  readonly key: string | undefined;
  monotonic(): number;
  classifyError(error: unknown): CallOutcome;
  classifyResult(value: unknown): CallOutcome;
  /** Reports the first fault of each source (`reportError`); the later ones would only repeat it. */
  reportHookError(source: string, error: Error): void;
}

/** How soon a replica that asked for the fleet's probe permit looks at the answer. */
const FLEET_RETRY_MS = 100;

/** The health check in flight. */
interface InFlight {
  readonly startedAt: number;
  readonly deadlineAt: number;
  readonly controller: AbortController;
}

/**
 * The active health check of one open breaker, as its registry's scheduler
 * keeps it: due at the next health check, or at the deadline of the one in
 * flight. The deadline is the check's own (`healthCheck.timeoutMs`, at most the
 * interval), so a hung health check is failed and aborted before the next
 * is due, and never delays it.
 *
 * @internal
 */
export class HealthCheck implements ScheduledTask {
  at = 0;
  index = -1;
  private nextAt = 0;
  private inFlight: InFlight | undefined = undefined;
  /** Between `start()` and `stop()`: while the breaker is one to check for. */
  private active = false;

  constructor(
    private readonly host: HealthCheckHost,
    private readonly scheduler: HealthCheckScheduler,
  ) {}

  /** The breaker opened at `now`: the first health check is one interval later. */
  start(now: number): void {
    const options = this.host.config.healthCheck;
    if (options === undefined) return;
    this.active = true;
    this.nextAt = now + options.intervalMs;
    this.reschedule();
  }

  /** The breaker left the states a health check is for: nothing more is due, and a check in flight is let go. */
  stop(): void {
    this.active = false;
    this.scheduler.cancel(this);
    const flight = this.inFlight;
    this.inFlight = undefined;
    flight?.controller.abort(new Error(breakerMessages.healthCheckStopped(this.host.name)));
  }

  run(now: number): void {
    const flight = this.inFlight;
    if (flight !== undefined && now >= flight.deadlineAt) this.expire(flight);
    if (this.inFlight === undefined && now >= this.nextAt) {
      const options = this.host.config.healthCheck;
      if (options === undefined || !needsHealthCheck(this.host, now)) {
        this.stop();
        return;
      }
      // The breaker may have moved while it was refreshed, and stopped this health check.
      if (!this.active) return;
      // Shared through a store: one replica checks for the fleet. The permit is asked for now and answered
      // later, so the next try comes soon; a replica that lost it keeps answering no from what it knows.
      if (mayProbeForFleet(this.host)) {
        this.nextAt = now + options.intervalMs;
        this.launch(options, now);
      } else this.nextAt = now + Math.min(options.intervalMs, FLEET_RETRY_MS);
    }
    this.reschedule();
  }

  /** `run()` threw (it should not): reported once, and the health check stays scheduled, so its checks go on. */
  failed(error: unknown, now: number): void {
    this.host.reportHookError(
      'healthCheck',
      new BreakerHookError(breakerMessages.healthCheckFaulted(this.host.name, error), error),
    );
    if (!this.active) return;
    const flight = this.inFlight;
    if (flight !== undefined && now >= flight.deadlineAt) this.inFlight = undefined;
    if (this.nextAt <= now)
      this.nextAt = now + (this.host.config.healthCheck?.intervalMs ?? FLEET_RETRY_MS);
    this.reschedule();
  }

  private launch(options: NonNullable<ResolvedBreakerOptions['healthCheck']>, now: number): void {
    const flight: InFlight = {
      startedAt: now,
      deadlineAt: now + options.timeoutMs,
      controller: new AbortController(),
    };
    this.inFlight = flight;
    let result: unknown;
    try {
      result = options.fn({ signal: flight.controller.signal, key: this.host.key });
    } catch (error) {
      this.settle(flight, false, error, now);
      return;
    }
    // Not `Promise.resolve(result)`: it reads a native promise's `constructor` synchronously, and a getter
    // that throws there would escape into the scheduler. Resolving reads `then` inside the promise machinery,
    // so whatever `fn` returned (a hostile getter, a Proxy, a thenable calling back twice) becomes one outcome.
    new Promise<unknown>((resolve) => resolve(result)).then(
      (value) => {
        if (this.inFlight === flight)
          this.settle(flight, this.host.classifyResult(value) === 'success', value, undefined);
      },
      (error: unknown) => {
        if (this.inFlight === flight) this.settle(flight, false, error, undefined);
      },
    );
  }

  private settle(
    flight: InFlight,
    succeeded: boolean,
    outcome: unknown,
    at: number | undefined,
  ): void {
    this.inFlight = undefined;
    const now = at ?? Math.max(flight.startedAt, this.host.monotonic());
    const durationMs = Math.max(0, now - flight.startedAt);
    if (succeeded) {
      recordHealthCheck(this.host, { result: 'succeeded', durationMs, error: undefined });
      const options = this.host.config.healthCheck;
      recoveredByHealthCheck(this.host, options?.onSuccess ?? 'half-open', now);
    } else {
      recordHealthCheck(this.host, { result: 'failed', durationMs, error: outcome });
    }
    this.reschedule();
  }

  private expire(flight: InFlight): void {
    const timeoutMs = flight.deadlineAt - flight.startedAt;
    const error = new CallTimeoutError(
      this.host.name,
      timeoutMs,
      breakerMessages.healthCheckTimedOut(this.host.name, timeoutMs),
    );
    this.inFlight = undefined;
    flight.controller.abort(error);
    recordHealthCheck(this.host, { result: 'failed', durationMs: timeoutMs, error });
  }

  /** While it runs: when the next health check is due (wall time), and whether one is in flight. */
  snapshot(toWall: number): HealthCheckSnapshot | undefined {
    if (!this.active) return undefined;
    return { nextAt: this.nextAt + toWall, inFlight: this.inFlight !== undefined };
  }

  private reschedule(): void {
    // Stopped: the breaker closed, or the health check succeeded and moved it on.
    if (!this.active) return;
    const flight = this.inFlight;
    const at = flight === undefined ? this.nextAt : Math.min(flight.deadlineAt, this.nextAt);
    this.scheduler.schedule(this, at);
  }
}
