import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import type { BreakerState, RejectionReason, TransitionReason } from './core/index.js';
import { CIRCUIT_BREAKER_MODULE_OPTIONS } from './circuit-breaker.module-definition.js';
import { CircuitBreakerEvents } from './circuit-breaker.events.js';
import { circuitBreakerMessages } from './circuit-breaker.messages.js';
import type { CircuitBreakerEventSink } from './interfaces/circuit-breaker-logging-options.interface.js';
import type { CircuitBreakerModuleOptions } from './interfaces/circuit-breaker-module-options.interface.js';

/** Payload of `circuit-breaker.opened`, `.half-opened`, `.closed` and `.isolated`. @publicApi */
export interface CircuitBreakerTransitionPayload {
  breaker: string;
  /** For a child of a per-key family. */
  key?: string;
  from: BreakerState;
  to: BreakerState;
  reason: TransitionReason;
  at: number;
  openUntil?: number;
}

/** Payload of `circuit-breaker.rejected`. @publicApi */
export interface CircuitBreakerRejectedPayload {
  breaker: string;
  key?: string;
  reason: RejectionReason;
  retryAfterMs?: number;
}

/** The names published to `forRoot({ eventEmitter })`. @publicApi */
export const CIRCUIT_BREAKER_EVENTS = {
  opened: 'circuit-breaker.opened',
  halfOpened: 'circuit-breaker.half-opened',
  closed: 'circuit-breaker.closed',
  isolated: 'circuit-breaker.isolated',
  rejected: 'circuit-breaker.rejected',
} as const;

const BY_STATE: Partial<Record<BreakerState, string>> = {
  open: CIRCUIT_BREAKER_EVENTS.opened,
  'half-open': CIRCUIT_BREAKER_EVENTS.halfOpened,
  closed: CIRCUIT_BREAKER_EVENTS.closed,
  isolated: CIRCUIT_BREAKER_EVENTS.isolated,
};

/**
 * Publishes transitions and rejections to the application's event emitter, so
 * that the rest of the application can react (`@OnEvent('circuit-breaker.opened')`).
 *
 * @internal
 */
@Injectable()
export class CircuitBreakerEventPublisher implements OnModuleInit, OnApplicationShutdown {
  private stop: (() => void) | undefined;
  private readonly logger = new Logger('CircuitBreaker');

  constructor(
    private readonly events: CircuitBreakerEvents,
    @Inject(CIRCUIT_BREAKER_MODULE_OPTIONS) private readonly options: CircuitBreakerModuleOptions,
  ) {}

  onModuleInit(): void {
    const sink = this.options.eventEmitter;
    if (sink === undefined) return;
    this.stop = this.events.observe(['stateChange', 'rejected'], (event) => {
      const key = event.key === undefined ? {} : { key: event.key };
      if (event.type === 'rejected') {
        const { reason, error } = event.payload;
        const payload: CircuitBreakerRejectedPayload = {
          breaker: event.breaker,
          ...key,
          reason,
          ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
        };
        this.publish(sink, CIRCUIT_BREAKER_EVENTS.rejected, payload);
        return;
      }
      if (event.type !== 'stateChange') return;
      const name = BY_STATE[event.payload.to];
      if (name === undefined) return;
      const { from, to, reason, at, openUntil } = event.payload;
      const payload: CircuitBreakerTransitionPayload = {
        breaker: event.breaker,
        ...key,
        from,
        to,
        reason,
        at,
        ...(openUntil === undefined ? {} : { openUntil }),
      };
      this.publish(sink, name, payload);
    });
  }

  /**
   * A listener of the application that throws must not crash the process (the
   * breaker re-throws listener errors as uncaught exceptions), least of all
   * when a breaker opens, in the middle of an incident: it is logged instead.
   */
  private publish(sink: CircuitBreakerEventSink, event: string, payload: unknown): void {
    try {
      sink.emit(event, payload);
    } catch (error) {
      this.logger.error(
        circuitBreakerMessages.listenerThrew(event, error),
        error instanceof Error ? error.stack : undefined,
      );
    }
  }

  onApplicationShutdown(): void {
    this.stop?.();
  }
}
