import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { closestName } from '../../lib/core/options/closest-name.js';
import { circuitBreakerOptionsFromEnv } from '../../lib/config/circuit-breaker-env.js';
import {
  BreakerConfigError,
  CircuitBreakerModule,
  CircuitBreakerRegistry,
} from '../../lib/index.js';
import { nestApps } from '../helpers/nest-app.js';

const start = nestApps();

function fromEnv(env: Record<string, string>, breakers: string[] = ['payments', 'catalog.search']) {
  return circuitBreakerOptionsFromEnv({ breakers, env });
}

function errorOf(run: () => unknown): BreakerConfigError {
  try {
    run();
  } catch (error) {
    if (error instanceof BreakerConfigError) return error;
    throw error;
  }
  throw new Error('expected a BreakerConfigError');
}

describe('circuitBreakerOptionsFromEnv()', () => {
  it('reads each breaker’s options and the defaults from CB_<BREAKER>_<OPTION> variables, typed', () => {
    expect(
      fromEnv({
        CB_PAYMENTS_TIMEOUT_MS: '2000',
        CB_PAYMENTS_HALF_OPEN_MAX_PROBES: '3',
        CB_CATALOG_SEARCH_FAILURE_RATE_THRESHOLD: '0.25',
        CB_CATALOG_SEARCH_WINDOW_SIZE: ' 50 ',
        CB_DEFAULTS_OPEN_DURATION_MS: '30000',
        CB_DEFAULTS_SHARE: 'false',
        OTHER_VARIABLE: 'ignored',
      }),
    ).toEqual({
      defaults: { openDurationMs: 30_000, share: false },
      breakers: {
        payments: { timeoutMs: 2_000, halfOpen: { maxProbes: 3 } },
        'catalog.search': { failureRateThreshold: 0.25, window: { type: 'count', size: 50 } },
      },
    });
  });

  it('reads the bulkhead and the slow start of a breaker, checked as start-up checks them', () => {
    expect(
      fromEnv({
        CB_PAYMENTS_BULKHEAD_MAX_CONCURRENT: '20',
        CB_PAYMENTS_BULKHEAD_MAX_QUEUE: '50',
        CB_PAYMENTS_BULKHEAD_QUEUE_TIMEOUT_MS: '500',
        CB_PAYMENTS_RAMP_UP_DURATION_MS: '30000',
        CB_PAYMENTS_RAMP_UP_INITIAL_RATIO: '0.2',
      }),
    ).toEqual({
      breakers: {
        payments: {
          bulkhead: { maxConcurrent: 20, maxQueue: 50, queueTimeoutMs: 500 },
          rampUp: { durationMs: 30_000, initialRatio: 0.2 },
        },
      },
    });
    // No variable set the cap a queue needs: the message names the option, which no variable gave.
    expect(errorOf(() => fromEnv({ CB_PAYMENTS_BULKHEAD_MAX_QUEUE: '5' })).message).toBe(
      'Circuit breaker "payments" (from the environment): option "bulkhead.maxConcurrent" must be an integer >= 1, got undefined.',
    );
  });

  it('reads an adaptive bulkhead, and names the variable of an algorithm it does not know', () => {
    expect(
      fromEnv({
        CB_PAYMENTS_BULKHEAD_ALGORITHM: 'gradient',
        CB_PAYMENTS_BULKHEAD_MIN_LIMIT: '2',
        CB_PAYMENTS_BULKHEAD_MAX_LIMIT: '200',
        CB_PAYMENTS_BULKHEAD_INITIAL_LIMIT: '10',
      }),
    ).toEqual({
      breakers: {
        payments: {
          bulkhead: { algorithm: 'gradient', minLimit: 2, maxLimit: 200, initialLimit: 10 },
        },
      },
    });
    expect(errorOf(() => fromEnv({ CB_PAYMENTS_BULKHEAD_ALGORITHM: 'vegas' })).message).toBe(
      `Circuit breaker "payments" (from the environment): option "CB_PAYMENTS_BULKHEAD_ALGORITHM" must be 'gradient' or 'aimd', got "vegas".`,
    );
  });

  it('gives nothing when no variable is set, so spreading it into forRoot() changes nothing', () => {
    expect(fromEnv({})).toEqual({});
  });

  it('takes timeoutMs=false, a time window by its duration, and a quorum that implies sharing', () => {
    expect(
      fromEnv({
        CB_PAYMENTS_TIMEOUT_MS: 'false',
        CB_PAYMENTS_WINDOW_DURATION_MS: '60000',
        CB_PAYMENTS_SHARE: 'true',
        CB_PAYMENTS_SHARE_QUORUM: '3',
      }),
    ).toEqual({
      breakers: {
        payments: {
          timeoutMs: false,
          window: { type: 'time', durationMs: 60_000 },
          share: { quorum: 3 },
        },
      },
    });
  });

  it('takes CONSECUTIVE_FAILURES=false, which turns the default streak rule off', () => {
    expect(fromEnv({ CB_DEFAULTS_CONSECUTIVE_FAILURES: 'false' })).toEqual({
      defaults: { consecutiveFailures: false },
    });
  });

  it("takes SHARE_QUORUM=auto (the quorum's default), and names the variable for anything else", () => {
    expect(fromEnv({ CB_PAYMENTS_SHARE_QUORUM: 'auto' })).toEqual({
      breakers: { payments: { share: { quorum: 'auto' } } },
    });
    expect(fromEnv({ CB_PAYMENTS_SHARE_QUORUM: 'AUTO' })).toEqual({
      breakers: { payments: { share: { quorum: 'auto' } } },
    });
    const error = errorOf(() => fromEnv({ CB_PAYMENTS_SHARE_QUORUM: 'most' }));
    expect(error.message).toBe(
      'Environment variable CB_PAYMENTS_SHARE_QUORUM="most" is not a number or auto. Write digits, e.g. CB_PAYMENTS_SHARE_QUORUM=2, or CB_PAYMENTS_SHARE_QUORUM=auto.',
    );
    expect(error.option).toBe('CB_PAYMENTS_SHARE_QUORUM');
  });

  it('names the variable when a value is not a number', () => {
    const error = errorOf(() => fromEnv({ CB_PAYMENTS_TIMEOUT_MS: '2s' }));
    expect(error.message).toBe(
      'Environment variable CB_PAYMENTS_TIMEOUT_MS="2s" is not a number or false. Write a number of milliseconds, or CB_PAYMENTS_TIMEOUT_MS=false.',
    );
    expect(error.option).toBe('CB_PAYMENTS_TIMEOUT_MS');
    expect(errorOf(() => fromEnv({ CB_PAYMENTS_JITTER: '0x10' })).message).toBe(
      'Environment variable CB_PAYMENTS_JITTER="0x10" is not a number. Write digits, e.g. CB_PAYMENTS_JITTER=2000.',
    );
  });

  it('checks each value as start-up does, naming the variable instead of the option path', () => {
    expect(errorOf(() => fromEnv({ CB_PAYMENTS_FAILURE_RATE_THRESHOLD: '1.5' })).message).toBe(
      'Circuit breaker "payments" (from the environment): option "CB_PAYMENTS_FAILURE_RATE_THRESHOLD" must be a number in (0, 1], got 1.5.',
    );
  });

  it('checks a breaker over the defaults the variables give, naming the variables of both', () => {
    expect(
      errorOf(() =>
        fromEnv({
          CB_DEFAULTS_HALF_OPEN_MAX_PROBES: '2',
          CB_PAYMENTS_HALF_OPEN_SUCCESSES_TO_CLOSE: '3',
        }),
      ).message,
    ).toBe(
      'Circuit breaker "payments" (from the environment): option "CB_PAYMENTS_HALF_OPEN_SUCCESSES_TO_CLOSE" (3) cannot exceed "CB_DEFAULTS_HALF_OPEN_MAX_PROBES" (2): the breaker could never close. Lower "CB_PAYMENTS_HALF_OPEN_SUCCESSES_TO_CLOSE" or raise "CB_DEFAULTS_HALF_OPEN_MAX_PROBES".',
    );
  });

  it('completes a breaker’s window from the defaults’ window of the same kind, one variable per setting', () => {
    expect(
      fromEnv({
        CB_DEFAULTS_WINDOW_DURATION_MS: '30000',
        CB_PAYMENTS_WINDOW_BUCKETS: '6',
        CB_CATALOG_SEARCH_WINDOW_SIZE: '40',
      }),
    ).toEqual({
      defaults: { window: { type: 'time', durationMs: 30_000 } },
      breakers: {
        payments: { window: { type: 'time', durationMs: 30_000, buckets: 6 } },
        // A window of the other kind replaces the defaults' whole: sizes and durations do not mix.
        'catalog.search': { window: { type: 'count', size: 40 } },
      },
    });
  });

  it('refuses a variable that names no breaker or no option, suggesting the closest one', () => {
    expect(errorOf(() => fromEnv({ CB_PAYMENT_TIMEOUT_MS: '2000' })).message).toBe(
      'Environment variable CB_PAYMENT_TIMEOUT_MS starts with CB_ but names no breaker option this application reads. Did you mean CB_PAYMENTS_TIMEOUT_MS? Name a breaker given in "breakers" (or DEFAULTS) and an option, e.g. CB_PAYMENTS_TIMEOUT_MS.',
    );
    expect(errorOf(() => fromEnv({ CB_PAYMENTS_TIMEOUT: '2000' })).message).toContain(
      'Did you mean CB_PAYMENTS_TIMEOUT_MS?',
    );
  });

  it('ignores a CB_ variable that looks like no option of this package (another program’s)', () => {
    const unrelated = {
      CB_API_KEY: 'secret',
      CB_URL: 'http://cb.example',
      CB_DATABASE_URL: 'postgres://db',
      CB_LOG_LEVEL: 'debug',
      CB_APP_STATE: 'ready',
      CB_CACHE_TTL_MS: '5000',
      CB_TIMEOUT: '30',
      // A breaker given, then a word that is no option: the application's own URL, not a typo of SHARE.
      CB_PAYMENTS_URL: 'https://pay.example',
      CB_PAYMENTS_BASE_ADDRESS: 'https://pay.example',
      // An option's name after a segment that is no breaker of this application: another client's deadline.
      CB_HTTP_TIMEOUT_MS: '5000',
      CB_SHIPPING_OPEN_DURATION_MS: '1000',
      CB_SHIPPING_OPEN_DURATON_MS: '1000',
    };
    expect(fromEnv({ ...unrelated, CB_PAYMENTS_TIMEOUT_MS: '2000' })).toEqual({
      breakers: { payments: { timeoutMs: 2000 } },
    });
  });

  it('refuses an unknown CB_ variable that clearly targets a breaker: a breaker given then a typo of an option, or a typo of a breaker then an option', () => {
    const messageOf = (variable: string) =>
      errorOf(() => fromEnv({ [variable]: '1000' })).message.split(' Name a breaker')[0];
    // A typo of a breaker given, then an option's exact name.
    expect(messageOf('CB_PAYMENT_JITTER')).toBe(
      'Environment variable CB_PAYMENT_JITTER starts with CB_ but names no breaker option this application reads. Did you mean CB_PAYMENTS_JITTER?',
    );
    // A breaker given (or DEFAULTS), then a typo of an option: of several words, or one edit of a one-word option.
    expect(messageOf('CB_CATALOG_SEARCH_HALF_OPEN_MAX_PROBS')).toBe(
      'Environment variable CB_CATALOG_SEARCH_HALF_OPEN_MAX_PROBS starts with CB_ but names no breaker option this application reads. Did you mean CB_CATALOG_SEARCH_HALF_OPEN_MAX_PROBES?',
    );
    expect(messageOf('CB_DEFAULTS_JITTR')).toBe(
      'Environment variable CB_DEFAULTS_JITTR starts with CB_ but names no breaker option this application reads. Did you mean CB_DEFAULTS_JITTER?',
    );
    expect(messageOf('CB_PAYMENTS_OPEN_DURATON_MS')).toBe(
      'Environment variable CB_PAYMENTS_OPEN_DURATON_MS starts with CB_ but names no breaker option this application reads. Did you mean CB_PAYMENTS_OPEN_DURATION_MS?',
    );
  });

  it('ignores what does not clearly target a breaker, and never suggests across a whole word', () => {
    const env = {
      // Two edits from SHARE (a one-word option), one word: not a typo of it.
      CB_PAYMENTS_STATE: 'ready',
      CB_PAYMENTS_URL: 'https://pay.example',
      // A generic suffix after a segment that is no breaker, nor a typo of one.
      CB_HTTP_TIMEOUT_MS: '5000',
      CB_REDIS_WINDOW_SIZE: '10',
    };
    expect(fromEnv(env)).toEqual({});
  });

  it('ignores any option name after a segment that is neither a breaker given nor a typo of one (fast-check, fixed seed)', () => {
    const options = [
      'TIMEOUT_MS',
      'WINDOW_SIZE',
      'JITTER',
      'SHARE',
      'OPEN_DURATION_MS',
      'HALF_OPEN_MAX_PROBES',
    ];
    const known = ['PAYMENTS', 'CATALOG_SEARCH', 'DEFAULTS'];
    fc.assert(
      fc.property(
        fc.stringMatching(/^[A-Z]{2,10}$/),
        fc.constantFrom(...options),
        (segment, option) => {
          fc.pre(!known.includes(segment) && closestName(segment, known) === undefined);
          expect(fromEnv({ [`CB_${segment}_${option}`]: '1000' })).toEqual({});
        },
      ),
      { seed: 25_08, numRuns: 300 },
    );
  });

  it('refuses OVERLOAD=false with OVERLOAD_K, whichever comes first', () => {
    const message =
      'Environment variables CB_PAYMENTS_OVERLOAD=false and CB_PAYMENTS_OVERLOAD_K contradict each other: one turns the option off, the other configures it. Remove one of them.';
    expect(
      errorOf(() => fromEnv({ CB_PAYMENTS_OVERLOAD: 'false', CB_PAYMENTS_OVERLOAD_K: '2' }))
        .message,
    ).toBe(message);
    expect(
      errorOf(() => fromEnv({ CB_PAYMENTS_OVERLOAD_K: '2', CB_PAYMENTS_OVERLOAD: 'false' }))
        .message,
    ).toBe(message);
  });

  it('gives each variable to the breaker whose name matches longest (a and a.b)', () => {
    expect(fromEnv({ CB_A_B_TIMEOUT_MS: '5', CB_A_TIMEOUT_MS: '7' }, ['a', 'a.b'])).toEqual({
      breakers: { 'a.b': { timeoutMs: 5 }, a: { timeoutMs: 7 } },
    });
  });

  it('refuses names that would read the same variables, and a breaker named like the defaults', () => {
    expect(errorOf(() => fromEnv({}, ['catalog.search', 'catalog-search'])).message).toBe(
      'Circuit breakers "catalog.search" and "catalog-search" would both read variables named CATALOG_SEARCH_*. Rename one of them, or read one of them some other way.',
    );
    expect(errorOf(() => fromEnv({}, ['defaults'])).message).toBe(
      'Circuit breaker "defaults" would read the variables of the defaults (DEFAULTS_*). Rename the breaker.',
    );
  });

  it('takes another prefix, and refuses one that cannot start a variable name', () => {
    expect(
      circuitBreakerOptionsFromEnv({
        breakers: ['payments'],
        prefix: 'APP_CB_',
        env: { APP_CB_PAYMENTS_JITTER: '0.1' },
      }),
    ).toEqual({
      breakers: { payments: { jitter: 0.1 } },
    });
    // A prefix is a whole word: `CB` reads CB_PAYMENTS_* and leaves CBX_* alone.
    expect(
      circuitBreakerOptionsFromEnv({
        breakers: ['payments'],
        prefix: 'CB',
        env: { CB_PAYMENTS_JITTER: '0.2', CBX_PAYMENTS_JITTER: 'not ours' },
      }),
    ).toEqual({ breakers: { payments: { jitter: 0.2 } } });
    expect(() => circuitBreakerOptionsFromEnv({ breakers: ['payments'], prefix: 'CB-' })).toThrow(
      new TypeError(
        `circuitBreakerOptionsFromEnv(): "prefix" must be a non-empty string of letters, digits and underscores, got "CB-". Pass e.g. { prefix: 'CB_' }.`,
      ),
    );
  });

  it('feeds forRoot(): the breakers are built with the options the variables gave', async () => {
    const fromVariables = fromEnv({
      CB_PAYMENTS_TIMEOUT_MS: '2000',
      CB_DEFAULTS_OPEN_DURATION_MS: '45000',
    });
    const app = await start([
      CircuitBreakerModule.forRoot({
        logging: false,
        ...fromVariables,
        breakers: { ...fromVariables.breakers, catalog: {} },
      }),
    ]);
    const registry = app.get(CircuitBreakerRegistry);
    expect([
      registry.get('payments').config.timeoutMs,
      registry.get('payments').config.openDurationMs,
      registry.get('catalog').config.openDurationMs,
    ]).toEqual([2_000, 45_000, 45_000]);
  });
});
