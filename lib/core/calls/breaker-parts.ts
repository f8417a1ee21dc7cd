import type { BreakerSnapshot } from '../snapshot/breaker-snapshot.js';
import {
  CLOSED,
  HALF_OPEN,
  ISOLATED,
  OPEN,
  type BreakerState,
  type StateCode,
  type TransitionReason,
} from '../state/breaker-state.js';
import type { DeadlineScheduler } from './deadline-scheduler.js';
import type { HealthCheckScheduler } from '../recovery/health-check-scheduler.js';
import { HealthCheck, type HealthCheckHost } from '../recovery/health-check.js';
import { Bulkhead, type BulkheadLimits } from '../overload/bulkhead.js';
import { RampUp } from '../overload/ramp-up.js';
import type { ResolvedBreakerOptions } from '../options/resolve-options.js';
import type { OutcomeWindow } from '../window/outcome-window.interface.js';

/** Closings that end a recovery, which a slow start follows; a reset or a release by hand asks for full traffic. */
const RECOVERED: readonly TransitionReason[] = ['probes-succeeded', 'shared-close', 'health-check'];

/** What the parts (their health check) see of their breaker. @internal */
export interface PartsHost extends HealthCheckHost {
  readonly lastDecidedState: BreakerState;
  /** Where its per-call deadlines wait (the clock's timers when it has them): its queue timeouts wait there too. */
  readonly deadlines: DeadlineScheduler;
  healthCheckScheduler(): HealthCheckScheduler;
  /** A family's child: one of its bulkheads holds and awaits no call any more. */
  bulkheadIdle(): void;
}

/**
 * The parts `config` asks for: `current` kept (with the new options) or new
 * ones, or `undefined` when no option asks for any. @internal
 */
export function partsFor(
  config: ResolvedBreakerOptions,
  current: BreakerParts | undefined,
  host: PartsHost,
): BreakerParts | undefined {
  if (current !== undefined) {
    current.reconfigure(config);
    return current.idle ? undefined : current;
  }
  return config.bulkhead === undefined &&
    config.rampUp === undefined &&
    config.healthCheck === undefined
    ? undefined
    : new BreakerParts(config, host);
}

/**
 * The parts a breaker's options add: the concurrency cap and its queue
 * (`bulkhead`, read by the bulkhead stage), the ramp after closing (`rampUp`,
 * read by the slow-start stage), and the active health check while open
 * (`healthCheck`); each follows the breaker's transitions. Kept in the
 * breaker's rare state (`rare.parts`): a breaker without these options holds
 * nothing for them.
 *
 * @internal
 */
export class BreakerParts {
  bulkhead: Bulkhead | undefined;
  /** Only while ramping up after a recovery. */
  ramp: RampUp | undefined = undefined;
  private rampOptions: ResolvedBreakerOptions['rampUp'];
  /** Made the first time the breaker opens with a `healthCheck`. */
  private healthCheck: HealthCheck | undefined = undefined;
  private healthCheckOptions: ResolvedBreakerOptions['healthCheck'];

  constructor(
    config: ResolvedBreakerOptions,
    private readonly host: PartsHost,
  ) {
    this.rampOptions = config.rampUp;
    this.healthCheckOptions = config.healthCheck;
    // Given to an open breaker by reconfigure(): the first health check is one interval from now.
    if (config.healthCheck !== undefined && host.lastDecidedState === 'open')
      this.startHealthCheck(host.monotonic());
    this.bulkhead = config.bulkhead === undefined ? undefined : this.newBulkhead(config.bulkhead);
  }

  private newBulkhead(limits: BulkheadLimits): Bulkhead {
    const idle = this.host.parent === undefined ? undefined : this.bulkheadIdle;
    return new Bulkhead(limits, this.host.deadlines, this.host, idle);
  }

  private readonly bulkheadIdle = (): void => this.host.bulkheadIdle();

  /** New options: the bulkhead keeps its calls and takes the new limits; dropped, it lets its waiters in. */
  reconfigure(config: ResolvedBreakerOptions): void {
    // A ramp under way keeps the options it started with; without rampUp it ends now.
    this.rampOptions = config.rampUp;
    if (config.rampUp === undefined) this.ramp = undefined;
    const hadHealthCheck = this.healthCheckOptions !== undefined;
    this.healthCheckOptions = config.healthCheck;
    if (config.healthCheck === undefined) {
      this.healthCheck?.stop();
      this.healthCheck = undefined;
    } else if (!hadHealthCheck && this.host.lastDecidedState === 'open') {
      // Given to an open breaker: the first health check is one interval from now.
      this.startHealthCheck(this.host.monotonic());
    }
    const limits = config.bulkhead;
    if (limits === undefined) {
      this.bulkhead?.setLimits({ maxConcurrent: Infinity, maxQueue: 0, queueTimeoutMs: 1 });
      this.bulkhead = undefined;
    } else if (this.bulkhead === undefined) this.bulkhead = this.newBulkhead(limits);
    else this.bulkhead.setLimits(limits);
  }

  /** After every transition of the breaker: a recovery that closes it starts the ramp; anything else ends it. */
  transitioned(to: StateCode, reason: TransitionReason, now: number, reopens: number): void {
    // Opened or forced open: the calls waiting for a slot would be refused at their turn, so they are refused now.
    if ((to === OPEN || to === ISOLATED) && this.bulkhead !== undefined && this.bulkhead.queued > 0)
      this.bulkhead.dismissAll();
    this.ramp =
      to === CLOSED && this.rampOptions !== undefined && RECOVERED.includes(reason)
        ? new RampUp(this.rampOptions, now, reopens)
        : undefined;
    const healthCheck = this.healthCheckOptions;
    if (healthCheck === undefined) return;
    if (to === OPEN) this.startHealthCheck(now);
    // Half-open, a health check may still close the breaker if asked to; in any other state it has nothing to do.
    else if (!(to === HALF_OPEN && healthCheck.onSuccess === 'closed')) this.healthCheck?.stop();
  }

  /** The breaker is gone for good (`dispose()`): its health check must not keep it alive. */
  dispose(): void {
    this.healthCheck?.stop();
  }

  private startHealthCheck(now: number): void {
    (this.healthCheck ??= new HealthCheck(this.host, this.host.healthCheckScheduler())).start(now);
  }

  /** While ramping, a failure rate at the threshold reopens at once, whatever the population. */
  rampTrip(
    config: ResolvedBreakerOptions,
    window: OutcomeWindow,
    now: number,
  ): TransitionReason | undefined {
    const ramp = this.ramp;
    if (ramp === undefined || ramp.ended(now) || !config.rateRule || window.calls === 0)
      return undefined;
    return window.failures / window.calls >= config.failureRateThreshold
      ? 'failure-rate'
      : undefined;
  }

  /** Whether the parts have nothing left to do (their options were reconfigured away). */
  get idle(): boolean {
    return (
      this.bulkhead === undefined &&
      this.rampOptions === undefined &&
      this.healthCheckOptions === undefined
    );
  }

  snapshot(now: number, toWall: number): Partial<BreakerSnapshot> {
    const ramp = this.ramp !== undefined && !this.ramp.ended(now) ? this.ramp : undefined;
    const healthCheck = this.healthCheck?.snapshot(toWall);
    return {
      ...(this.bulkhead === undefined ? {} : { bulkhead: this.bulkhead.snapshot() }),
      ...(ramp === undefined ? {} : { rampUp: ramp.snapshot(now, toWall) }),
      ...(healthCheck === undefined ? {} : { healthCheck }),
    };
  }
}
