import {
  Inject,
  Injectable,
  Logger,
  type LogLevel,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import type { StateChangeEvent } from './core/index.js';
import { timerDelay } from './core/calls/timer-delay.js';
import { CIRCUIT_BREAKER_MODULE_OPTIONS } from './circuit-breaker.module-definition.js';
import { CircuitBreakerEvents } from './circuit-breaker.events.js';
import { circuitBreakerMessages as messages } from './circuit-breaker.messages.js';
import type { CircuitBreakerEvent } from './interfaces/circuit-breaker-event.interface.js';
import type { CircuitBreakerModuleOptions } from './interfaces/circuit-breaker-module-options.interface.js';

const SEVERITY: Record<string, number> = { verbose: 0, debug: 1, log: 2, warn: 3 };
const WINDOW_MS = 1_000;

/**
 * Logs every state transition: an open breaker is an incident signal, not a
 * silent optimisation. Opening and isolation at `warn` with the reason and the
 * evidence, closing at `log`. Rate-controlled: when many breakers (or per-key
 * children) change state together, at most `maxPerSecond` lines are written and
 * one summary line counts the rest.
 *
 * @internal
 */
@Injectable()
export class CircuitBreakerTransitionLogger implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('CircuitBreaker');
  private stop: (() => void) | undefined;
  private windowStart = -Infinity;
  private written = 0;
  private suppressed = 0;
  /** Cancels the timer that writes the summary of held-back lines, while one is armed. */
  private cancelSummary: (() => void) | undefined;

  constructor(
    private readonly events: CircuitBreakerEvents,
    @Inject(CIRCUIT_BREAKER_MODULE_OPTIONS) private readonly options: CircuitBreakerModuleOptions,
  ) {}

  onModuleInit(): void {
    if (this.options.logging === false) return;
    this.stop = this.events.observe(['stateChange', 'reconfigured'], (event) =>
      event.type === 'reconfigured' ? this.onReconfigured(event) : this.onTransition(event),
    );
  }

  onApplicationShutdown(): void {
    this.stop?.();
    this.cancelSummary?.();
    this.flushSummary();
  }

  /** Rare and asked for by a person: each one is logged, at `log`, with what changed. */
  private onReconfigured(event: Extract<CircuitBreakerEvent, { type: 'reconfigured' }>): void {
    const minimum = (this.options.logging || undefined)?.level ?? 'log';
    if (SEVERITY.log! < SEVERITY[minimum]!) return;
    const { previous, current, reset } = event.payload;
    this.logger.log(
      messages.reconfigured(
        messages.transitionSubject(event.breaker, event.key),
        changesOf(previous, current),
        reset,
      ),
    );
  }

  private onTransition(event: CircuitBreakerEvent): void {
    if (event.type !== 'stateChange') return;
    const level = levelOf(event.payload);
    const minimum = (this.options.logging || undefined)?.level ?? 'log';
    if (SEVERITY[level]! < SEVERITY[minimum]!) return;
    // The breakers' clock, so that tests that move it move this window too.
    const now = (this.options.clock ?? Date).now();
    if (now - this.windowStart >= WINDOW_MS) {
      this.flushSummary();
      this.windowStart = now;
      this.written = 0;
    }
    const limit = (this.options.logging || undefined)?.maxPerSecond ?? 10;
    if (this.written >= limit) {
      this.suppressed++;
      // One timer per application, only while lines are being held back; on the breakers' clock when it has timers.
      this.cancelSummary ??= this.summaryAfter(WINDOW_MS - (now - this.windowStart));
      return;
    }
    this.written++;
    this.write(level, describe(event));
  }

  private summaryAfter(delayMs: number): () => void {
    const flush = (): void => {
      this.cancelSummary = undefined;
      this.flushSummary();
    };
    const clock = this.options.clock;
    const delay = timerDelay(delayMs);
    if (typeof clock?.setTimer === 'function') return clock.setTimer(flush, delay);
    const timer = setTimeout(flush, delay);
    timer.unref?.();
    return () => clearTimeout(timer);
  }

  private flushSummary(): void {
    if (this.suppressed === 0) return;
    const limit = (this.options.logging || undefined)?.maxPerSecond ?? 10;
    this.logger.warn(messages.transitionsNotLogged(this.suppressed, limit));
    this.suppressed = 0;
  }

  private write(level: LogLevel, message: string): void {
    if (level === 'warn') this.logger.warn(message);
    else if (level === 'log') this.logger.log(message);
    else if (level === 'debug') this.logger.debug(message);
    else this.logger.verbose(message);
  }
}

function levelOf(change: StateChangeEvent): 'warn' | 'log' | 'debug' {
  if (
    change.to === 'open' ||
    change.to === 'isolated' ||
    change.to === 'disabled' ||
    change.to === 'metrics-only'
  )
    return 'warn';
  if (change.to === 'half-open') return 'debug';
  return 'log';
}

function describe(event: Extract<CircuitBreakerEvent, { type: 'stateChange' }>): string {
  const change = event.payload;
  const who = messages.transitionSubject(event.breaker, event.key);
  if (change.forced !== undefined)
    return messages.forced(who, change.forced.state, change.forced.reason, change.forced.by);
  if (change.reason === 'released') return messages.released(who);
  switch (change.to) {
    case 'open':
      return messages.opened(who, messages.openingEvidence(change), change.openUntil! - change.at);
    case 'half-open':
      return messages.halfOpened(who);
    default:
      // Closed; the states held by hand always come with their force, logged above.
      return messages.closed(who, change.reason);
  }
}

/** `timeoutMs 10000 → 2000`, one per option whose effective value changed; a classifier shows as `(function)`. */
function changesOf(previous: object, current: object): string[] {
  const shown = (value: unknown) =>
    typeof value === 'function'
      ? '(function)'
      : value === undefined
        ? 'unset'
        : JSON.stringify(value);
  const changes: string[] = [];
  for (const [option, value] of Object.entries(current)) {
    const before: unknown = (previous as Record<string, unknown>)[option];
    if (shown(before) !== shown(value) || (typeof value === 'function' && before !== value))
      changes.push(`${option} ${shown(before)} → ${shown(value)}`);
  }
  return changes;
}
