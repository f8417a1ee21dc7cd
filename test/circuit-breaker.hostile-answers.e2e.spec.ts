import { Controller, Get, Logger, Param } from '@nestjs/common';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  CircuitBreakerModule,
  CircuitBreakerRegistry,
  CircuitOpenError,
  RequireCircuit,
  type CircuitBreakerHttpOptions,
} from '../lib/index.js';
import { HTTP_PLATFORMS, platformApps } from './helpers/http-platforms.js';
import { ManualClock } from './helpers/manual-clock.js';

/**
 * What an application's own code or a hostile upstream hands the HTTP layer:
 * a wait that is no number of seconds, an envelope that cannot be JSON.
 * Each must still be the breaker's 503, never a 500.
 */

const WAITS: Record<string, number> = {
  huge: 1e300,
  infinite: Number.POSITIVE_INFINITY,
  nan: Number.NaN,
  negative: -5,
};

@Controller()
class HostileController {
  @Get('thrown/:wait')
  thrown(@Param('wait') wait: string) {
    throw new CircuitOpenError('payments', 'open', 'open', WAITS[wait]);
  }

  @Get('guarded')
  @RequireCircuit('upstream')
  guarded() {
    return { ok: true };
  }
}

const BREAKERS = {
  // Someone raised the cap on what a dependency may ask for, and the dependency asked for too much.
  upstream: {
    consecutiveFailures: 1,
    timeoutMs: false as const,
    maxRetryAfterMs: Number.MAX_VALUE,
  },
};

const UNAVAILABLE = {
  statusCode: 503,
  error: 'Service Unavailable',
  message: 'A dependency is unavailable; retry later.',
};

describe.each(HTTP_PLATFORMS)('Hostile values at the HTTP edge on %s', (platform) => {
  const start = platformApps(platform);
  afterEach(() => {
    vi.restoreAllMocks();
  });

  async function started(httpFilter: boolean | CircuitBreakerHttpOptions = true) {
    const clock = new ManualClock();
    const errors = vi.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const { app, url } = await start(
      [CircuitBreakerModule.forRoot({ clock, breakers: BREAKERS, httpFilter })],
      { controllers: [HostileController] },
    );
    const registry = app.get(CircuitBreakerRegistry);
    const get = async (path: string, headers: Record<string, string> = {}) => {
      const response = await fetch(`${url}${path}`, { headers });
      return {
        status: response.status,
        retryAfter: response.headers.get('retry-after'),
        body: (await response.json()) as unknown,
      };
    };
    return { registry, get, errors, clock };
  }

  it('Retry-After is whole delta-seconds in [0, 86400] whatever the rejection says, or absent for NaN', async () => {
    const { get } = await started({ details: true });
    const answers = await Promise.all(Object.keys(WAITS).map((wait) => get(`/thrown/${wait}`)));
    expect(answers.map(({ status, retryAfter }) => [status, retryAfter])).toEqual([
      [503, '86400'],
      [503, '86400'],
      [503, null],
      [503, '0'],
    ]);
    // The detailed body announces the same wait, in milliseconds.
    expect(answers.map(({ body }) => (body as { retryAfterMs?: number }).retryAfterMs)).toEqual([
      86_400_000,
      86_400_000,
      undefined,
      0,
    ]);
  });

  it('an upstream hint of 10^300 seconds opens the breaker, and the guard still announces at most a day', async () => {
    const { registry, get } = await started();
    const hint = Object.assign(new Error('slow down'), {
      status: 503,
      headers: { 'retry-after': '9'.repeat(300) },
    });
    await registry
      .get('upstream')
      .execute(() => Promise.reject(hint))
      .catch(() => undefined);
    expect(await get('/guarded')).toEqual({ status: 503, retryAfter: '86400', body: UNAVAILABLE });
  });

  it('an upstream hint of Infinity ms is no hint: the open duration is announced', async () => {
    const { registry, get } = await started();
    const hint = Object.assign(new Error('down'), { status: 503, retryAfterMs: Infinity });
    await registry
      .get('upstream')
      .execute(() => Promise.reject(hint))
      .catch(() => undefined);
    // The default open duration, 30 s.
    expect(await get('/guarded')).toEqual({ status: 503, retryAfter: '30', body: UNAVAILABLE });
  });

  it('a body factory returning a circular object still answers 503 with the default body, through the filter and the guard, logged once', async () => {
    const circular: Record<string, unknown> = { success: false };
    circular.self = circular;
    const { registry, get, errors } = await started({ body: () => circular });
    expect(await get('/thrown/huge')).toEqual({
      status: 503,
      retryAfter: '86400',
      body: UNAVAILABLE,
    });
    await registry
      .get('upstream')
      .execute(() => Promise.reject(Object.assign(new Error('down'), { status: 500 })))
      .catch(() => undefined);
    expect(await get('/guarded')).toEqual({ status: 503, retryAfter: '30', body: UNAVAILABLE });
    const logged = errors.mock.calls.map(([message]) => String(message));
    expect(logged.filter((message) => message.includes('httpFilter.body'))).toEqual([
      expect.stringMatching(
        /^CircuitBreakerModule: option "httpFilter.body" returned a body that cannot be sent as JSON \(TypeError: Converting circular structure to JSON[^)]*\); the default body was sent instead\./,
      ),
    ]);
  });
});
