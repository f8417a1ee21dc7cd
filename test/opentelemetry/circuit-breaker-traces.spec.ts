import {
  context,
  trace,
  ROOT_CONTEXT,
  type Attributes,
  type Context,
  type ContextManager,
  type Span,
} from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CircuitBreakerModule, CircuitBreakerRegistry } from '../../lib/index.js';
import {
  CIRCUIT_BREAKER_SPAN_EVENTS,
  CircuitBreakerTelemetryModule,
} from '../../lib/opentelemetry/index.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { nestApps } from '../helpers/nest-app.js';

/** The smallest context manager: the context of the innermost `with()`, synchronously. */
class StackContextManager implements ContextManager {
  private current: Context = ROOT_CONTEXT;
  active(): Context {
    return this.current;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    const previous = this.current;
    this.current = ctx;
    try {
      return fn.call(thisArg, ...args);
    } finally {
      this.current = previous;
    }
  }
  bind<T>(_ctx: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.current = ROOT_CONTEXT;
    return this;
  }
}

/** A recording span that keeps what it was given. */
function recordingSpan(recording = true) {
  const events: { name: string; attributes: Attributes | undefined }[] = [];
  const attributes: Attributes = {};
  const span = {
    isRecording: () => recording,
    addEvent(name: string, attrs?: Attributes) {
      events.push({ name, attributes: attrs });
      return span;
    },
    setAttributes(attrs: Attributes) {
      Object.assign(attributes, attrs);
      return span;
    },
    setAttribute(key: string, value: Attributes[string]) {
      attributes[key] = value;
      return span;
    },
    spanContext: () => ({ traceId: '1'.repeat(32), spanId: '2'.repeat(16), traceFlags: 1 }),
  } as unknown as Span;
  return { span, events, attributes };
}

const startApp = nestApps();

async function payments(traces?: boolean) {
  const app = await startApp([
    CircuitBreakerModule.forRoot({
      clock: new ManualClock(9_000),
      breakers: { payments: { consecutiveFailures: 1, timeoutMs: false, openDurationMs: 4_000 } },
    }),
    CircuitBreakerTelemetryModule.forRoot(traces === undefined ? {} : { traces }),
  ]);
  return app.get(CircuitBreakerRegistry).get('payments');
}

describe('CircuitBreakerTelemetryModule: traces', () => {
  beforeAll(() => {
    context.setGlobalContextManager(new StackContextManager());
  });
  afterAll(() => {
    context.disable();
  });

  it("records a refusal on the caller's span, and marks the span with the breaker's decision", async () => {
    const breaker = await payments();
    await expect(breaker.execute(() => Promise.reject(new Error('down')))).rejects.toThrow('down');
    const { span, events, attributes } = recordingSpan();
    const refused = context.with(trace.setSpan(context.active(), span), () =>
      breaker.execute(async () => 1),
    );
    await expect(refused).rejects.toMatchObject({ reason: 'open' });
    const expected = {
      'circuit_breaker.name': 'payments',
      'circuit_breaker.rejection.reason': 'open',
      'circuit_breaker.retry_after_ms': 4_000,
    };
    expect(events).toEqual([{ name: CIRCUIT_BREAKER_SPAN_EVENTS.rejected, attributes: expected }]);
    expect(attributes).toEqual({ ...expected, 'circuit_breaker.decision': 'rejected' });
  });

  it('records a transition made while a span is active', async () => {
    const breaker = await payments();
    const { span, events } = recordingSpan();
    context.with(trace.setSpan(context.active(), span), () =>
      breaker.force('open', { reason: 'maintenance' }),
    );
    expect(events).toEqual([
      {
        name: CIRCUIT_BREAKER_SPAN_EVENTS.stateChange,
        attributes: {
          'circuit_breaker.name': 'payments',
          'circuit_breaker.transition.from': 'closed',
          'circuit_breaker.transition.to': 'isolated',
          'circuit_breaker.transition.reason': 'forced',
        },
      },
    ]);
  });

  it('records nothing on a span that does not record, or with traces: false', async () => {
    const quiet = recordingSpan(false);
    const breaker = await payments();
    breaker.force('open', { reason: 'maintenance' });
    await expect(
      context.with(trace.setSpan(context.active(), quiet.span), () =>
        breaker.execute(async () => 1),
      ),
    ).rejects.toMatchObject({ reason: 'isolated' });
    expect(quiet.events).toEqual([]);

    const off = await payments(false);
    const recorded = recordingSpan();
    off.force('open', { reason: 'maintenance' });
    await expect(
      context.with(trace.setSpan(context.active(), recorded.span), () =>
        off.execute(async () => 1),
      ),
    ).rejects.toMatchObject({ reason: 'isolated' });
    expect(recorded.events).toEqual([]);
    expect(recorded.attributes).toEqual({});
  });
});
