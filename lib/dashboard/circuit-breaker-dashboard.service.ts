import {
  Inject,
  Injectable,
  Optional,
  type MessageEvent,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { Observable, Subject, interval, map, merge, share, takeUntil } from 'rxjs';
import { CircuitBreakerModuleMissingError } from '../circuit-breaker-module-missing.error.js';
import { timerDelay } from '../core/calls/timer-delay.js';
import { CircuitBreakerEvents } from '../circuit-breaker.events.js';
import { CircuitBreakerRegistry } from '../circuit-breaker.registry.js';
import type { CircuitBreakerEvent } from '../interfaces/circuit-breaker-event.interface.js';
import {
  CIRCUIT_BREAKER_DASHBOARD_OPTIONS,
  MAX_TRANSITIONS_PER_EVENT,
  RECONNECT_MS,
  SHUTDOWN_GRACE_MS,
} from './circuit-breaker-dashboard.constants.js';
import { circuitBreakerDashboardMessages as messages } from './circuit-breaker-dashboard.messages.js';
import type { ResolvedDashboardOptions } from './dashboard-options.js';
import type {
  DashboardState,
  DashboardTransition,
  DashboardTransitions,
} from './dashboard-view.interface.js';
import { breakerView, breakerViews, fleetView } from './dashboard-views.js';
import { DashboardFleetPoller, hasFleetView } from './dashboard-fleet.poller.js';
import {
  DashboardStreamConnections,
  type StreamConnection,
} from './dashboard-stream-connections.js';
import { DashboardTlsSessions } from './dashboard-tls-sessions.js';

/** Why a stream could not be opened: the controller answers it with the matching HTTP status. @internal */
export type StreamRefusal = 'too-many' | 'closing';

/**
 * What the dashboard shows and does: the state of every breaker, the stream
 * the page listens to, and the manual controls. Provided by
 * `CircuitBreakerDashboardModule`.
 *
 * One timer and one listener serve every open page: both start with the
 * first stream and stop with the last, and each snapshot is built and
 * serialised once, whatever the number of pages. Nothing runs while no page
 * is open.
 *
 * @publicApi
 */
@Injectable()
export class CircuitBreakerDashboardService implements OnModuleInit, OnModuleDestroy {
  private readonly registry: CircuitBreakerRegistry;
  private readonly events: CircuitBreakerEvents;
  private readonly now: () => number;
  private readonly closing = new Subject<void>();
  private readonly updates: Observable<MessageEvent>;
  /** With a store that lists the replicas: its reads, at most every few seconds. */
  private readonly fleetPoller: DashboardFleetPoller | undefined;
  /** Over HTTP/2 with TLS: each session's socket, from the HTTP server's events. */
  private readonly tlsSessions = new DashboardTlsSessions();
  private readonly connections = new DashboardStreamConnections((session) =>
    this.tlsSessions.socketOf(session),
  );
  private unwatchServer: () => void = () => undefined;
  private closed = false;
  private streams = 0;

  /** @internal Nest builds the service: its parameters are not public. */
  constructor(
    // Optional only to fail with a message naming the missing import, instead of Nest's "can't resolve dependencies".
    @Optional() @Inject(CircuitBreakerRegistry) registry: CircuitBreakerRegistry | undefined,
    @Inject(CIRCUIT_BREAKER_DASHBOARD_OPTIONS) private readonly options: ResolvedDashboardOptions,
    @Optional() @Inject(CircuitBreakerEvents) events?: CircuitBreakerEvents,
    @Optional() @Inject(HttpAdapterHost) private readonly adapterHost?: HttpAdapterHost,
  ) {
    if (registry === undefined)
      throw new CircuitBreakerModuleMissingError(messages.moduleMissing(), messages.module);
    this.registry = registry;
    this.events = events ?? registry.events;
    const clock = registry.orchestrator.clock;
    this.now = clock === undefined ? Date.now : () => clock.now();
    const store = registry.orchestrator.store;
    this.fleetPoller = hasFleetView(store) ? new DashboardFleetPoller(store, this.now) : undefined;
    const ticks = interval(timerDelay(options.intervalMs)).pipe(
      map((): MessageEvent => ({ type: 'snapshot', data: JSON.stringify(this.state()) })),
    );
    // share(): one timer, one listener and one serialisation for every page, torn down with the last one.
    this.updates = merge(ticks, this.transitions()).pipe(share());
  }

  /** Watches the HTTP server's connections (before it listens), to close a TLS page's on shutdown. */
  onModuleInit(): void {
    this.unwatchServer = this.tlsSessions.watch(this.adapterHost?.httpAdapter?.getHttpServer());
  }

  /** Every breaker now: what the stream pushes and `<path>/state` answers. */
  state(): DashboardState {
    const breakers = breakerViews(this.registry, this.options.topChildren);
    const fleet = fleetView(this.registry.orchestrator.store, breakers);
    if (fleet !== undefined && this.fleetPoller !== undefined)
      fleet.view = this.fleetPoller.current();
    const limiters = this.registry.limiterSnapshots();
    return {
      at: this.now(),
      breakers,
      ...(fleet === undefined ? {} : { fleet }),
      ...(limiters.length === 0 ? {} : { limiters }),
    };
  }

  /** Streams open now. */
  get openStreams(): number {
    return this.streams;
  }

  /**
   * @internal The events of one page: the state at once, then a snapshot
   * every `intervalMs` and transitions as they happen, until the page leaves
   * or the application closes. A refusal when it cannot be served.
   */
  stream(connection?: StreamConnection): Observable<MessageEvent> | StreamRefusal {
    if (this.closed) return 'closing';
    if (this.streams >= this.options.maxStreams) return 'too-many';
    return new Observable<MessageEvent>((subscriber) => {
      this.streams++;
      const forget = connection === undefined ? undefined : this.connections.add(connection);
      subscriber.next({
        type: 'snapshot',
        data: JSON.stringify(this.state()),
        retry: RECONNECT_MS,
      });
      const subscription = this.updates.pipe(takeUntil(this.closing)).subscribe(subscriber);
      return () => {
        this.streams--;
        forget?.();
        subscription.unsubscribe();
      };
    });
  }

  /** @internal Forces `name` open or closed, as the dashboard's buttons do. `false` when no breaker has that name. */
  force(name: string, state: 'open' | 'closed', reason: string): boolean {
    if (!this.registry.has(name)) return false;
    this.registry.get(name).force(state, { reason, by: messages.forcedBy });
    return true;
  }

  /** @internal Resets `name` (closed, empty window, no force). `false` when no breaker has that name. */
  reset(name: string): boolean {
    if (!this.registry.has(name)) return false;
    this.registry.get(name).reset();
    return true;
  }

  /**
   * Before the HTTP server closes: an open stream would otherwise hold
   * `app.close()` until its page leaves. Every stream ends, and its
   * connection is closed once the end is written, or at most
   * `SHUTDOWN_GRACE_MS` later for a page that does not read.
   */
  onModuleDestroy(): Promise<void> {
    this.closed = true;
    this.unwatchServer();
    // Taken before the streams end: ending one forgets its connection.
    const connectionsClosed = this.connections.close(SHUTDOWN_GRACE_MS);
    this.closing.next();
    this.closing.complete();
    return connectionsClosed;
  }

  /**
   * Transitions as they happen, gathered per microtask: a snapshot taken
   * inside a transition's listener would read the breaker mid-change (and
   * could make a due transition happen inside another), and a storm of
   * per-key children flipping at once becomes one event.
   */
  private transitions(): Observable<MessageEvent> {
    return new Observable<MessageEvent>((subscriber) => {
      let pending: DashboardTransition[] | undefined;
      let omitted = 0;
      const touched = new Set<string>();
      const flush = () => {
        const transitions = pending!;
        pending = undefined;
        const breakers = [...touched]
          .filter((name) => this.registry.has(name))
          .map((name) => breakerView(this.registry.get(name), this.options.topChildren));
        touched.clear();
        const event: DashboardTransitions = { at: this.now(), transitions, omitted, breakers };
        omitted = 0;
        subscriber.next({ type: 'transitions', data: JSON.stringify(event) });
      };
      const stop = this.events.observe(['stateChange'], (event: CircuitBreakerEvent) => {
        if (event.type !== 'stateChange') return;
        if (pending === undefined) {
          pending = [];
          queueMicrotask(flush);
        }
        touched.add(event.breaker);
        if (pending.length >= MAX_TRANSITIONS_PER_EVENT) {
          omitted++;
          return;
        }
        const { from, to, reason, at } = event.payload;
        pending.push({
          breaker: event.breaker,
          ...(event.key === undefined ? {} : { key: event.key }),
          from,
          to,
          reason,
          at,
        });
      });
      return stop;
    });
  }
}
