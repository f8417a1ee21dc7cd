import { Injectable, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import fc from 'fast-check';
import { firstValueFrom, Observable } from 'rxjs';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  CallTimeoutError,
  CircuitBreaker,
  CircuitBreakerModule,
  CircuitBreakerRegistry,
  circuitBreaker,
  isCallRejected,
} from '../../lib/index.js';
import {
  behaviour,
  hostileResolved,
  hostileThrown,
  ownOutcome,
  perform,
  type Behaviour,
  type Performed,
} from '../helpers/hostile-values.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { collectUnhandled } from '../helpers/unhandled.js';

/**
 * Hostile calls through the Nest layer: decorated Promise, Observable and
 * synchronous methods, with and without a fallback and a key, and the
 * circuitBreaker() operator. Same invariants as the engine's suite: each caller
 * settles once with its own outcome, a breaker error or its fallback's; nothing
 * is unhandled; no probe stays in flight; the counters add up.
 */
const SEED = 20261202;
const RUNS = 600;

const FALLBACK_VALUE = Object.freeze({ served: 'by the fallback' });
const FALLBACK_ERROR = new Error('the fallback failed too');

type FallbackMode = 'value' | 'throws';

/** An Observable that performs the behaviour when subscribed, and emits its settlement. */
function observe(b: Behaviour, performed: Performed): Observable<unknown> {
  return new Observable((subscriber) => {
    const result = perform(b, performed);
    Promise.resolve()
      .then(() => result)
      .then(
        (value) => {
          subscriber.next(value);
          subscriber.complete();
        },
        (error: unknown) => subscriber.error(error),
      );
  });
}

@Injectable()
class HostileService {
  fallbackMode: FallbackMode = 'value';

  @CircuitBreaker('promise')
  async promise(_key: string, b: Behaviour, performed: Performed): Promise<unknown> {
    return perform(b, performed);
  }

  @CircuitBreaker({ name: 'promise-fallback', fallback: 'fallback' })
  async promiseWithFallback(_key: string, b: Behaviour, performed: Performed): Promise<unknown> {
    return perform(b, performed);
  }

  @CircuitBreaker({ name: 'promise-keyed', key: (key: string) => key, fallback: 'fallback' })
  async promiseKeyed(_key: string, b: Behaviour, performed: Performed): Promise<unknown> {
    return perform(b, performed);
  }

  @CircuitBreaker('observable')
  observable(_key: string, b: Behaviour, performed: Performed): Observable<unknown> {
    return observe(b, performed);
  }

  @CircuitBreaker({ name: 'observable-fallback', fallback: 'fallback' })
  observableWithFallback(_key: string, b: Behaviour, performed: Performed): Observable<unknown> {
    return observe(b, performed);
  }

  @CircuitBreaker('sync')
  sync(_key: string, b: Behaviour, performed: Performed): unknown {
    return perform(b, performed);
  }

  @CircuitBreaker({ name: 'sync-fallback', fallback: 'fallback' })
  syncWithFallback(_key: string, b: Behaviour, performed: Performed): unknown {
    return perform(b, performed);
  }

  fallback(): unknown {
    if (this.fallbackMode === 'throws') throw FALLBACK_ERROR;
    return FALLBACK_VALUE;
  }
}

type Path =
  | 'promise'
  | 'promise-fallback'
  | 'promise-keyed'
  | 'observable'
  | 'observable-fallback'
  | 'sync'
  | 'sync-fallback'
  | 'operator'
  | 'operator-fallback';
const PATHS: Path[] = [
  'promise',
  'promise-fallback',
  'promise-keyed',
  'observable',
  'observable-fallback',
  'sync',
  'sync-fallback',
  'operator',
  'operator-fallback',
];
const BREAKERS = [
  'promise',
  'promise-fallback',
  'promise-keyed',
  'observable',
  'observable-fallback',
  'sync',
  'sync-fallback',
  'operator',
];

/** A synchronous method returns or throws: a thenable would turn it into a Promise method. */
const syncBehaviour: fc.Arbitrary<Behaviour> = fc.oneof(
  hostileResolved.map((value): Behaviour => ({ kind: 'return', value })),
  hostileThrown.map((error): Behaviour => ({ kind: 'throw', error })),
);

interface Step {
  path: Path;
  behaviour: Behaviour;
  key: 'a' | 'b';
  advanceMs: number;
}

const step: fc.Arbitrary<Step> = fc.constantFrom(...PATHS).chain((path) =>
  fc.record({
    path: fc.constant(path),
    behaviour: path === 'sync' || path === 'sync-fallback' ? syncBehaviour : behaviour,
    key: fc.constantFrom('a' as const, 'b' as const),
    advanceMs: fc.constantFrom(0, 0, 60, 120),
  }),
);

interface Call {
  step: Step;
  performed: Performed;
  settled: number;
  result: { value: unknown } | { error: unknown } | undefined;
}

describe('hostile calls through the Nest layer (property)', () => {
  const clock = new ManualClock();
  let app: INestApplication;
  let service: HostileService;
  let registry: CircuitBreakerRegistry;
  const unhandled = collectUnhandled();

  beforeAll(async () => {
    const common = {
      timeoutMs: 50,
      consecutiveFailures: 2,
      openDurationMs: 100,
      halfOpen: { maxProbes: 2, maxConcurrent: 1, maxWaitMs: 1_000 },
    };
    const moduleRef = await Test.createTestingModule({
      imports: [
        CircuitBreakerModule.forRoot({
          clock,
          logging: false,
          defaults: common,
          breakers: Object.fromEntries(
            BREAKERS.map((name) => [
              name,
              name === 'promise-keyed' ? { perKey: { maxKeys: 10 } } : {},
            ]),
          ),
        }),
      ],
      providers: [HostileService],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    service = app.get(HostileService);
    registry = app.get(CircuitBreakerRegistry);
  });
  afterAll(async () => {
    await app.close();
  });
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("every caller settles once with its own outcome, a breaker error or its fallback's; no probe is lost; counters add up", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<FallbackMode>('value', 'throws'),
        fc.array(step, { minLength: 1, maxLength: 10 }),
        async (fallbackMode, steps) => {
          unhandled.length = 0;
          service.fallbackMode = fallbackMode;
          for (const name of BREAKERS) registry.get(name).reset();
          const calls: Call[] = [];
          for (const st of steps) {
            const call: Call = { step: st, performed: {}, settled: 0, result: undefined };
            calls.push(call);
            const settle = (result: Call['result']) => {
              call.settled++;
              call.result = result;
            };
            invoke(service, registry, st, call.performed, fallbackMode).then(
              (value) => settle({ value }),
              (error: unknown) => settle({ error }),
            );
            clock.advance(st.advanceMs);
            await vi.advanceTimersByTimeAsync(st.advanceMs);
          }
          clock.advance(1_000);
          await vi.advanceTimersByTimeAsync(1_000);
          for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));

          expect(unhandled).toEqual([]);
          for (const call of calls) {
            expect(call.settled, `${call.step.path} ${call.step.behaviour.kind}`).toBe(1);
            checkOutcome(call, fallbackMode);
          }
          for (const name of BREAKERS) {
            const breaker = registry.get(name);
            for (const b of name === 'promise-keyed' ? [...breaker.children()] : [breaker]) {
              const snapshot = b.snapshot();
              expect(snapshot.halfOpen?.probesInFlight ?? 0, b.name).toBe(0);
              const t = snapshot.totals;
              expect(t.admitted, b.name).toBe(
                t.successes + t.failures.total + t.overloads + t.ignored,
              );
            }
          }
        },
      ),
      { seed: SEED, numRuns: RUNS },
    );
  });
});

/** Starts one call; the caller's view of it as a promise (a synchronous method's result is captured as it is). */
function invoke(
  service: HostileService,
  registry: CircuitBreakerRegistry,
  st: Step,
  performed: Performed,
  fallbackMode: FallbackMode,
): Promise<unknown> {
  const args = [st.key, st.behaviour, performed] as const;
  const captured = (run: () => unknown): Promise<{ sync: unknown }> => {
    try {
      return Promise.resolve({ sync: run() });
    } catch (error) {
      return Promise.reject(error);
    }
  };
  switch (st.path) {
    case 'promise':
      return service.promise(...args);
    case 'promise-fallback':
      return service.promiseWithFallback(...args);
    case 'promise-keyed':
      return service.promiseKeyed(...args);
    case 'observable':
      return firstValueFrom(service.observable(...args));
    case 'observable-fallback':
      return firstValueFrom(service.observableWithFallback(...args));
    case 'sync':
      return captured(() => service.sync(...args)).then(({ sync }) => unwrapSync(sync));
    case 'sync-fallback':
      return captured(() => service.syncWithFallback(...args)).then(({ sync }) => unwrapSync(sync));
    case 'operator':
      return firstValueFrom(
        observe(st.behaviour, performed).pipe(circuitBreaker(registry.get('operator'))),
      );
    case 'operator-fallback':
      return firstValueFrom(
        observe(st.behaviour, performed).pipe(
          circuitBreaker(registry.get('operator'), {
            fallback: () => {
              if (fallbackMode === 'throws') throw FALLBACK_ERROR;
              return [FALLBACK_VALUE];
            },
          }),
        ),
      );
  }
}

/** Keeps a synchronous result out of promise resolution, which would read its `then`. */
const SYNC = Symbol('sync result');
function unwrapSync(value: unknown): unknown {
  return { [SYNC]: value };
}

function checkOutcome(call: Call, fallbackMode: FallbackMode): void {
  const { step: st } = call;
  const label = `${st.path} ${st.behaviour.kind}`;
  let result = call.result!;
  if (
    'value' in result &&
    typeof result.value === 'object' &&
    result.value !== null &&
    SYNC in result.value
  ) {
    result = { value: (result.value as Record<symbol, unknown>)[SYNC] };
  }
  const hasFallback = st.path.endsWith('fallback') || st.path === 'promise-keyed';
  const fallbackServes = fallbackMode === 'value';
  if (hasFallback) {
    if ('value' in result && result.value === FALLBACK_VALUE) return;
    if ('error' in result && result.error === FALLBACK_ERROR && !fallbackServes) return;
  }
  if ('error' in result && isCallRejected(result.error)) {
    expect(call.performed, `${label}: a rejected call must not run`).toEqual({});
    return;
  }
  if ('error' in result && isTimeout(result.error)) return;
  const own = ownOutcome(st.behaviour, call.performed);
  if (own === undefined) return;
  // A synchronous method returns its value as it is: nothing reads its `then`.
  const expected =
    st.path.startsWith('sync') && st.behaviour.kind === 'return'
      ? { resolves: call.performed.value }
      : own;
  if ('resolves' in expected)
    expect('value' in result && Object.is(result.value, expected.resolves), label).toBe(true);
  else expect('error' in result && expected.rejects(result.error), label).toBe(true);
}

function isTimeout(value: unknown): boolean {
  try {
    return value instanceof CallTimeoutError;
  } catch {
    return false;
  }
}
