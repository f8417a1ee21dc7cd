import { describe, expect, it } from 'vitest';
import { validateModuleOptions } from '../lib/circuit-breaker.options.js';
import {
  Breaker,
  BreakerConfigError,
  CircuitBreakerModule,
  CircuitBreakerRegistry,
  type BreakerOptions,
} from '../lib/index.js';
import { nestApps } from './helpers/nest-app.js';

const start = nestApps();

async function registryOf(imports: unknown[]): Promise<CircuitBreakerRegistry> {
  return (await start(imports)).get(CircuitBreakerRegistry);
}

function errorOf(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected an error');
}

const revoked = Proxy.revocable({}, {});
revoked.revoke();
const LEAVE_IT_OUT = ' Leave the option out (or undefined) to use its default.';
const PLAIN_DATA =
  ' Pass plain data: an object literal whose properties are values, not throwing getters or Proxy traps.';

describe('hostile breaker options', () => {
  it.each<[string, unknown, string, string]>([
    [
      'halfOpen: null',
      { halfOpen: null },
      'halfOpen',
      `option "halfOpen" must be an object, got null.${LEAVE_IT_OUT}`,
    ],
    [
      'overload: null',
      { overload: null },
      'overload',
      `option "overload" must be an object { k? } or false, got null.${LEAVE_IT_OUT}`,
    ],
    [
      'backoff: a Date',
      { backoff: new Date(0) },
      'backoff',
      'option "backoff" must be an object, got a Date.',
    ],
    [
      'window: a Map',
      { window: new Map() },
      'window',
      `option "window" must be { type: 'count', size } or { type: 'time', durationMs, buckets? }, got a Map.`,
    ],
    [
      'halfOpen: an array',
      { halfOpen: [2] },
      'halfOpen',
      'option "halfOpen" must be an object, got an array.',
    ],
    [
      'halfOpen: a class instance',
      {
        halfOpen: new (class Probes {
          maxProbes = 2;
        })(),
      },
      'halfOpen',
      'option "halfOpen" must be an object, got an instance of Probes.',
    ],
    [
      'a null leaf',
      { halfOpen: { maxProbes: null } },
      'halfOpen.maxProbes',
      `option "halfOpen.maxProbes" must be an integer >= 1, got null.${LEAVE_IT_OUT}`,
    ],
    [
      'a bigint',
      { timeoutMs: 5n },
      'timeoutMs',
      'option "timeoutMs" must be a positive number of milliseconds up to 2147483647, or false for no deadline, got a bigint 5n.',
    ],
    [
      'a symbol',
      { jitter: Symbol('j') },
      'jitter',
      'option "jitter" must be a number in [0, 1], got a symbol Symbol(j).',
    ],
    [
      'a throwing toString',
      {
        timeoutMs: {
          toString: () => {
            throw new Error('no');
          },
        },
      },
      'timeoutMs',
      'option "timeoutMs" must be a positive number of milliseconds up to 2147483647, or false for no deadline, got an object.',
    ],
    [
      'a throwing getter',
      {
        get timeoutMs() {
          throw new Error('boom');
        },
      },
      'timeoutMs',
      `option "timeoutMs" could not be read (Error: boom).${PLAIN_DATA}`,
    ],
    [
      'a Proxy whose ownKeys throws',
      new Proxy(
        {},
        {
          ownKeys: () => {
            throw new Error('trap');
          },
        },
      ),
      'options',
      `option "options" could not be read (Error: trap).${PLAIN_DATA}`,
    ],
    [
      'a revoked Proxy',
      { halfOpen: revoked.proxy },
      'halfOpen',
      `option "halfOpen" could not be read (TypeError: Cannot perform 'IsArray' on a proxy that has been revoked).${PLAIN_DATA}`,
    ],
    [
      'a symbol key',
      { [Symbol('k')]: 1 },
      '[Symbol(k)]',
      expect.stringContaining('unknown option "[Symbol(k)]". Known options: window, '),
    ],
  ])(
    '%s is a BreakerConfigError naming the breaker and the option',
    (_, options, option, message) => {
      const error = errorOf(() => new Breaker('payments', options as BreakerOptions));
      expect(error).toBeInstanceOf(BreakerConfigError);
      expect(error).toMatchObject({ breakerName: 'payments', option });
      expect(error.message).toEqual(
        typeof message === 'string' ? `Circuit breaker "payments": ${message}` : message,
      );
    },
  );

  it('a name whose toString throws is described, not converted', () => {
    expect(
      () =>
        new Breaker({
          toString: () => {
            throw new Error('no');
          },
        } as never),
    ).toThrow(
      new TypeError(
        'A circuit breaker needs a non-empty string name, got an object. Name it after the dependency and operation it protects, e.g. "payments.charge".',
      ),
    );
  });
});

// Found by the option fuzzing suite: the probe wait defaulted to a sub-millisecond deadline and was refused, naming an option nobody set.
it('a sub-millisecond timeoutMs builds, its derived probe wait kept at 1 ms', () => {
  expect(new Breaker('fast', { timeoutMs: 0.5 }).config).toMatchObject({
    timeoutMs: 0.5,
    probeTimeoutMs: 0.5,
    probeMaxWaitMs: 1,
  });
});

describe('breaker.on() with an unknown event', () => {
  const events =
    'stateChange, success, failure, ignored, rejected, timeout, slowCall, probe, fallback, reconfigured, retry, healthCheck';

  it.each<[unknown, string]>([
    ['opne', '"opne"'],
    ['StateChange', '"StateChange"'],
    [Symbol('open'), 'a symbol Symbol(open)'],
    [5n, 'a bigint 5n'],
  ])('%s throws a TypeError naming the breaker, the event and the valid events', (event, shown) => {
    expect(() => new Breaker('payments').on(event as never, () => undefined)).toThrow(
      new TypeError(
        `Circuit breaker "payments": on() got ${shown}, which is not an event of a breaker. Listen to one of: ${events}.`,
      ),
    );
  });

  it('a known event without a listener function names the listener', () => {
    expect(() => new Breaker('payments').on('stateChange', 5n as never)).toThrow(
      new TypeError(
        'Circuit breaker "payments": on("stateChange") takes a listener function, got a bigint 5n. Pass (event) => { ... }.',
      ),
    );
  });
});

describe('module options: undefined means "not given", null is an error', () => {
  it('an explicit undefined keeps the module default, nested ones too', async () => {
    const registry = await registryOf([
      CircuitBreakerModule.forRoot({
        defaults: { timeoutMs: 2_000, halfOpen: { maxProbes: 3 } },
        breakers: {
          payments: {
            timeoutMs: undefined,
            halfOpen: { maxProbes: undefined, successesToClose: 2 },
          },
        },
      }),
    ]);
    expect(registry.get('payments').config).toMatchObject({
      timeoutMs: 2_000,
      maxProbes: 3,
      successesToClose: 2,
    });
  });

  it('forFeature({ name: undefined }) only names the breaker', () => {
    const definition = CircuitBreakerModule.forFeature({ payments: undefined } as never);
    expect(definition.providers).toHaveLength(1);
  });

  it.each<[string, unknown, string]>([
    [
      'a null breaker option',
      { breakers: { payments: { halfOpen: { maxProbes: null } } } },
      `Circuit breaker "payments" in CircuitBreakerModule: option "breakers.payments.halfOpen.maxProbes" must be an integer >= 1, got null.${LEAVE_IT_OUT}`,
    ],
    [
      'a null default',
      { defaults: { overload: null } },
      `CircuitBreakerModule: option "defaults.overload" must be an object { k? } or false, got null.${LEAVE_IT_OUT}`,
    ],
    [
      'logging as an array',
      { logging: [] },
      'CircuitBreakerModule: option "logging" must be false or { level?, maxPerSecond? }, got an array.',
    ],
    [
      'an unknown logging key',
      { logging: { lvl: 'warn' } },
      'CircuitBreakerModule: unknown option "logging.lvl". Known options: logging.level, logging.maxPerSecond.',
    ],
    [
      'a bigint maxPerSecond',
      { logging: { maxPerSecond: 5n } },
      'CircuitBreakerModule: option "logging.maxPerSecond" must be an integer >= 1, got a bigint 5n.',
    ],
    [
      'a conflict with a default',
      {
        defaults: { halfOpen: { maxProbes: 2 } },
        breakers: { 'a.b': { halfOpen: { maxConcurrent: 3 } } },
      },
      'Circuit breaker "a.b" in CircuitBreakerModule: option "breakers["a.b"].halfOpen.maxConcurrent" (3) cannot exceed "defaults.halfOpen.maxProbes" (2).',
    ],
  ])('%s', (_, options, message) => {
    expect(() => validateModuleOptions(options)).toThrow(message);
  });

  // Found by the option fuzzing suite: an own `aggregate` replaces the default one whole, so the error is the breaker's.
  it('blames the breaker, not the defaults, for a key its own object left out', () => {
    expect(() =>
      validateModuleOptions({
        defaults: { perKey: {}, aggregate: { openWhenOpenRatio: 0.5 } },
        breakers: { hosts: { aggregate: { minKeys: 3 } } },
      }),
    ).toThrow(
      'Circuit breaker "hosts" in CircuitBreakerModule: option "breakers.hosts.aggregate.openWhenOpenRatio" must be a number in (0, 1], got undefined.',
    );
  });

  it('fails start-up of a real module with the same message', async () => {
    await expect(
      registryOf([
        CircuitBreakerModule.forRoot({ breakers: { payments: { halfOpen: null as never } } }),
      ]),
    ).rejects.toThrow(
      `Circuit breaker "payments" in CircuitBreakerModule: option "breakers.payments.halfOpen" must be an object, got null.${LEAVE_IT_OUT}`,
    );
  });

  it('getOrCreate() with a name that is no string says so, and its options are checked like any others', async () => {
    const registry = await registryOf([
      CircuitBreakerModule.forRoot({ defaults: { timeoutMs: 1_000 } }),
    ]);
    expect(() => registry.getOrCreate(Symbol('payments') as never)).toThrow(
      new TypeError(
        'CircuitBreakerRegistry.getOrCreate(): A circuit breaker needs a non-empty string name, got a symbol Symbol(payments). Name it after the dependency and operation it protects, e.g. "payments.charge".',
      ),
    );
    expect(() =>
      registry.getOrCreate('search', { timeoutMs: undefined, halfOpen: new Map() as never }),
    ).toThrow(
      'Circuit breaker "search" in CircuitBreakerRegistry.getOrCreate(): option "halfOpen" must be an object, got a Map.',
    );
    expect(registry.getOrCreate('search', { timeoutMs: undefined }).config.timeoutMs).toBe(1_000);
  });

  it('forRoot() refuses an httpFilter that is neither a boolean nor an options object where it is called', () => {
    expect(() => CircuitBreakerModule.forRoot({ httpFilter: 'yes' as never })).toThrow(
      new TypeError(
        'CircuitBreakerModule: option "httpFilter" got "yes". Pass true, false, or { details?: boolean, body?: (error, status) => body }.',
      ),
    );
  });
});
