import { createRequire } from 'node:module';
import {
  Inject,
  Injectable,
  Optional,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import { CircuitBreakerModuleMissingError } from '../circuit-breaker-module-missing.error.js';
import {
  metrics,
  type Attributes,
  type BatchObservableResult,
  type Counter,
  type Histogram,
  type Meter,
  type Observable,
  type ObservableCounter,
  type ObservableGauge,
  type ObservableUpDownCounter,
} from '@opentelemetry/api';
import { CircuitBreakerEvents } from '../circuit-breaker.events.js';
import { CircuitBreakerRegistry } from '../circuit-breaker.registry.js';
import type { BreakerSnapshot } from '../core/index.js';
import type { CircuitBreakerEvent } from '../interfaces/circuit-breaker-event.interface.js';
import { configsOf } from '../metrics/breaker-config-info.js';
import {
  MEASURED_EVENTS,
  MEASURED_STATES,
  familyStatesOf,
  measure,
  snapshotsOf,
} from '../metrics/breaker-measurements.js';
import { recordOnActiveSpan } from './breaker-span-events.js';
import type { CircuitBreakerTelemetryOptions } from './circuit-breaker-telemetry-options.interface.js';
import { circuitBreakerTelemetryMessages } from './circuit-breaker-telemetry.messages.js';
import {
  CALL_DURATION_BOUNDARIES,
  CIRCUIT_BREAKER_ATTRIBUTES as ATTR,
  CIRCUIT_BREAKER_INSTRUMENTS as NAMES,
  CIRCUIT_BREAKER_METER_NAME,
  CIRCUIT_BREAKER_TELEMETRY_OPTIONS,
} from './circuit-breaker-telemetry.constants.js';

// Every state, so that each breaker reports a 1 for its state and a 0 for the others.
const PACKAGE_VERSION = packageVersion();
const MODULE = circuitBreakerTelemetryMessages.module;
const DESCRIPTIONS = circuitBreakerTelemetryMessages.descriptions;

/**
 * Records circuit breaker metrics through the OpenTelemetry metrics API:
 * counters and the duration histogram from `CircuitBreakerEvents`,
 * the state and window instruments from breaker snapshots taken on each
 * collection. Provided by `CircuitBreakerTelemetryModule`.
 *
 * @publicApi
 */
@Injectable()
export class CircuitBreakerTelemetryService implements OnModuleInit, OnModuleDestroy {
  private readonly meter: Meter;
  private readonly keyAttribute: boolean;
  private readonly traces: boolean;
  private readonly calls: Counter;
  private readonly fallbacks: Counter;
  private readonly transitions: Counter;
  private readonly probes: Counter;
  private readonly retries: Counter;
  private readonly healthChecks: Counter;
  private readonly callDuration: Histogram;
  private readonly state: ObservableUpDownCounter;
  private readonly forced: ObservableGauge;
  private readonly windowFailureRate: ObservableGauge;
  private readonly windowCalls: ObservableGauge;
  private readonly bulkheadCalls: ObservableGauge;
  private readonly keys: ObservableUpDownCounter;
  private readonly configGeneration: ObservableGauge;
  private readonly configInfo: ObservableGauge;
  private readonly limits: LimiterInstruments;
  private stop: (() => void) | undefined = undefined;

  private readonly breakers: CircuitBreakerRegistry;
  private readonly events: CircuitBreakerEvents;

  constructor(
    // Optional only to fail with a message naming the missing import, instead of Nest's "can't resolve dependencies".
    @Optional() @Inject(CircuitBreakerRegistry) breakers: CircuitBreakerRegistry | undefined,
    @Inject(CIRCUIT_BREAKER_TELEMETRY_OPTIONS) options: CircuitBreakerTelemetryOptions,
    @Optional() @Inject(CircuitBreakerEvents) events?: CircuitBreakerEvents,
  ) {
    if (breakers === undefined)
      throw new CircuitBreakerModuleMissingError(
        circuitBreakerTelemetryMessages.moduleMissing(),
        MODULE,
      );
    this.breakers = breakers;
    // Built by hand with only a registry (tests, scripts): the registry's own events.
    this.events = events ?? breakers.events;
    this.keyAttribute = options.keyAttribute === true;
    this.traces = options.traces !== false;
    const provider = options.meterProvider ?? metrics.getMeterProvider();
    const meter = (this.meter = provider.getMeter(CIRCUIT_BREAKER_METER_NAME, PACKAGE_VERSION));
    this.calls = meter.createCounter(NAMES.calls, {
      description: DESCRIPTIONS.calls,
      unit: '{call}',
    });
    this.fallbacks = meter.createCounter(NAMES.fallbacks, {
      description: DESCRIPTIONS.fallbacks,
      unit: '{call}',
    });
    this.transitions = meter.createCounter(NAMES.transitions, {
      description: DESCRIPTIONS.transitions,
      unit: '{transition}',
    });
    this.probes = meter.createCounter(NAMES.probes, {
      description: DESCRIPTIONS.probes,
      unit: '{probe}',
    });
    this.retries = meter.createCounter(NAMES.retries, {
      description: DESCRIPTIONS.retries,
      unit: '{retry}',
    });
    this.healthChecks = meter.createCounter(NAMES.healthChecks, {
      description: DESCRIPTIONS.healthChecks,
      unit: '{check}',
    });
    this.callDuration = meter.createHistogram(NAMES.callDuration, {
      description: DESCRIPTIONS.callDuration,
      unit: 's',
      advice: { explicitBucketBoundaries: [...CALL_DURATION_BOUNDARIES] },
    });
    // A state is modelled as the semantic conventions model statuses (hw.status): an up-down counter, 1 for the current state, 0 for the others.
    this.state = meter.createObservableUpDownCounter(NAMES.state, {
      description: DESCRIPTIONS.state,
      unit: '1',
    });
    this.forced = meter.createObservableGauge(NAMES.forced, {
      description: DESCRIPTIONS.forced,
      unit: '1',
    });
    this.windowFailureRate = meter.createObservableGauge(NAMES.windowFailureRate, {
      description: DESCRIPTIONS.windowFailureRate,
      unit: '1',
    });
    this.windowCalls = meter.createObservableGauge(NAMES.windowCalls, {
      description: DESCRIPTIONS.windowCalls,
      unit: '{call}',
    });
    this.bulkheadCalls = meter.createObservableGauge(NAMES.bulkheadCalls, {
      description: DESCRIPTIONS.bulkheadCalls,
      unit: '{call}',
    });
    this.keys = meter.createObservableUpDownCounter(NAMES.keys, {
      description: DESCRIPTIONS.keys,
      unit: '{key}',
    });
    this.configGeneration = meter.createObservableGauge(NAMES.configGeneration, {
      description: DESCRIPTIONS.configGeneration,
      unit: '1',
    });
    this.configInfo = meter.createObservableGauge(NAMES.configInfo, {
      description: DESCRIPTIONS.configInfo,
      unit: '1',
    });
    this.limits = limiterInstruments(meter);
  }

  /** The instruments the batch callback observes. */
  private get observed(): Observable[] {
    return [
      this.state,
      this.forced,
      this.windowFailureRate,
      this.windowCalls,
      this.bulkheadCalls,
      this.keys,
      this.configGeneration,
      this.configInfo,
      this.limits.limit,
      this.limits.requests,
      this.limits.shed,
    ];
  }

  onModuleInit(): void {
    // One callback per application: every application sharing a provider reports its own breakers, and only while it runs.
    this.meter.addBatchObservableCallback(this.observe, this.observed);
    this.stop = this.events.observe(MEASURED_EVENTS, (event) => this.record(event));
  }

  // Before the registry's own shutdown, which disposes the breakers: a collection in between must not report them.
  onModuleDestroy(): void {
    this.stop?.();
    this.stop = undefined;
    this.meter.removeBatchObservableCallback(this.observe, this.observed);
  }

  private readonly observe = (result: BatchObservableResult): void => {
    for (const [attributes, snapshot] of this.snapshots()) {
      for (const state of MEASURED_STATES)
        result.observe(this.state, snapshot.state === state ? 1 : 0, {
          ...attributes,
          [ATTR.state]: state,
        });
      // Only while forced: most breakers never are.
      if (snapshot.forced !== undefined)
        result.observe(this.forced, 1, {
          ...attributes,
          [ATTR.forcedState]: snapshot.forced.state,
        });
      result.observe(this.windowFailureRate, snapshot.window.failureRate, attributes);
      result.observe(this.windowCalls, snapshot.window.calls, attributes);
      const bulkhead = snapshot.bulkhead;
      if (bulkhead !== undefined) {
        result.observe(this.bulkheadCalls, bulkhead.active, {
          ...attributes,
          [ATTR.bulkheadState]: 'active',
        });
        result.observe(this.bulkheadCalls, bulkhead.queued, {
          ...attributes,
          [ATTR.bulkheadState]: 'queued',
        });
      }
    }
    this.observeFamiliesAndOptions(result);
    this.observeLimiters(result);
  };

  /** Per concurrency limiter: its limit, its requests, and what it shed by criticality. */
  private observeLimiters(result: BatchObservableResult): void {
    for (const { name, limit, inFlight, queued, shedBy } of this.breakers.limiterSnapshots()) {
      const id = { [ATTR.name]: name };
      const { limits } = this;
      result.observe(limits.limit, limit, id);
      result.observe(limits.requests, inFlight, { ...id, [ATTR.limitState]: 'in_flight' });
      result.observe(limits.requests, queued, { ...id, [ATTR.limitState]: 'queued' });
      for (const [criticality, shed] of Object.entries(shedBy))
        result.observe(limits.shed, shed, { ...id, [ATTR.criticality]: criticality });
    }
  }

  /** Per family and per breaker, never per key: bounded by the number of breakers, whatever keyAttribute says. */
  private observeFamiliesAndOptions(result: BatchObservableResult): void {
    for (const { name, states } of familyStatesOf(this.breakers))
      for (const state of MEASURED_STATES)
        result.observe(this.keys, states[state], { [ATTR.name]: name, [ATTR.state]: state });
    for (const { name, config } of configsOf(this.breakers)) {
      result.observe(this.configGeneration, config.generation, { [ATTR.name]: name });
      const info: Attributes = { [ATTR.name]: name };
      for (const [label, value] of Object.entries(config.labels))
        if (value !== '') info[ATTR.configPrefix + label] = value;
      result.observe(this.configInfo, 1, info);
    }
  }

  /** Every breaker, children of per-key families too when they carry their key. */
  private *snapshots(): Generator<[Attributes, BreakerSnapshot]> {
    for (const { name, key, snapshot } of snapshotsOf(this.breakers, this.keyAttribute)) {
      yield [
        key === undefined ? { [ATTR.name]: name } : { [ATTR.name]: name, [ATTR.key]: key },
        snapshot,
      ];
    }
  }

  private record(event: CircuitBreakerEvent): void {
    if (this.traces) recordOnActiveSpan(event, this.keyAttribute);
    const measurement = measure(event);
    if (measurement === undefined) return;
    const id: Attributes =
      this.keyAttribute && event.key !== undefined
        ? { [ATTR.name]: event.breaker, [ATTR.key]: event.key }
        : { [ATTR.name]: event.breaker };
    if (measurement.kind === 'call') {
      this.calls.add(1, {
        ...id,
        [ATTR.outcome]: measurement.outcome,
        ...(measurement.reason === undefined ? {} : { [ATTR.rejectionReason]: measurement.reason }),
      });
      if (measurement.durationMs !== undefined)
        this.callDuration.record(measurement.durationMs / 1000, id);
    } else if (measurement.kind === 'fallback') {
      this.fallbacks.add(1, { ...id, [ATTR.fallbackSource]: measurement.source });
    } else if (measurement.kind === 'transition') {
      this.transitions.add(1, {
        ...id,
        [ATTR.transitionFrom]: measurement.from,
        [ATTR.transitionTo]: measurement.to,
      });
    } else if (measurement.kind === 'retry') {
      this.retries.add(1, { ...id, [ATTR.retryResult]: measurement.result });
    } else if (measurement.kind === 'healthCheck') {
      this.healthChecks.add(1, { ...id, [ATTR.healthCheckResult]: measurement.result });
    } else {
      this.probes.add(1, { ...id, [ATTR.probeResult]: measurement.result });
    }
  }
}

/** The version of the instrumentation scope; a bundle that drops package.json gets a scope without one rather than a crash. */
function packageVersion(): string | undefined {
  try {
    return (createRequire(import.meta.url)('../../package.json') as { version?: string }).version;
  } catch {
    return undefined;
  }
}

/** The instruments of the concurrency limiters. */
interface LimiterInstruments {
  readonly limit: ObservableGauge;
  readonly requests: ObservableGauge;
  readonly shed: ObservableCounter;
}

function limiterInstruments(meter: Meter): LimiterInstruments {
  const unit = '{request}';
  return {
    limit: meter.createObservableGauge(NAMES.limit, { description: DESCRIPTIONS.limit, unit }),
    requests: meter.createObservableGauge(NAMES.limitRequests, {
      description: DESCRIPTIONS.limitRequests,
      unit,
    }),
    shed: meter.createObservableCounter(NAMES.limitShed, {
      description: DESCRIPTIONS.limitShed,
      unit,
    }),
  };
}
