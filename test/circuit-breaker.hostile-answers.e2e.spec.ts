import {
  Controller,
  Get,
  Logger,
  Param,
  ServiceUnavailableException,
  type ExecutionContext,
} from '@nestjs/common';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  CircuitBreakerModule,
  CircuitBreakerRegistry,
  CallRejectedError,
  FAMILY_DEFAULT_KEY,
  RequireCircuitBreaker,
  UseCircuitBreaker,
  type CircuitBreakerHttpOptions,
} from '../lib/index.js';
import { HTTP_PLATFORMS, platformApps } from './helpers/http-platforms.js';
import { ManualClock } from './helpers/manual-clock.js';

/**
 * What an application's own code or a hostile upstream hands the HTTP layer:
 * a wait that is no number of seconds, an envelope that cannot be JSON, a
 * request without the header its key is read from. Each must still be the
 * breaker's 503, or the handler's answer, never a 500.
 */

const WAITS: Record<string, number> = {
  huge: 1e300,
  infinite: Number.POSITIVE_INFINITY,
  nan: Number.NaN,
  negative: -5,
};

type Request = { headers: Record<string, string | undefined> };
const tenantOf = (context: ExecutionContext) =>
  context.switchToHttp().getRequest<Request>().headers['x-tenant'];
const throwingKey = (): string => {
  throw new TypeError('no tenant resolver');
};

/** How often the handlers ran, and whether the per-tenant upstream fails. */
const upstream = { calls: 0, down: false };

@Controller()
class HostileController {
  @Get('thrown/:wait')
  thrown(@Param('wait') wait: string) {
    throw new CallRejectedError('payments', 'open', 'open', WAITS[wait]);
  }

  @Get('guarded')
  @RequireCircuitBreaker('upstream')
  guarded() {
    return { ok: true };
  }

  @Get('tenant')
  @UseCircuitBreaker('tenants', { key: tenantOf, fallback: () => ({ fallback: true }) })
  tenant() {
    upstream.calls++;
    if (upstream.down) throw new ServiceUnavailableException('tenant store down');
    return { served: true };
  }

  @Get('tenant-throwing-key')
  @UseCircuitBreaker('tenants', { key: throwingKey })
  tenantThrowingKey() {
    upstream.calls++;
    return { served: true };
  }

  @Get('tenant-guarded')
  @RequireCircuitBreaker({ name: 'tenants', key: tenantOf })
  tenantGuarded() {
    return { ok: true };
  }

  @Get('tenant-guarded-throwing-key')
  @RequireCircuitBreaker({ name: 'tenants', key: throwingKey })
  tenantGuardedThrowingKey() {
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
  tenants: {
    consecutiveFailures: 1,
    openDurationMs: 4_000,
    timeoutMs: false as const,
    perKey: { maxKeys: 10 },
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
    upstream.calls = 0;
    upstream.down = false;
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
    // The default open duration, 10 s.
    expect(await get('/guarded')).toEqual({ status: 503, retryAfter: '10', body: UNAVAILABLE });
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
    expect(await get('/guarded')).toEqual({ status: 503, retryAfter: '10', body: UNAVAILABLE });
    const logged = errors.mock.calls.map(([message]) => String(message));
    expect(logged.filter((message) => message.includes('httpFilter.body'))).toEqual([
      expect.stringMatching(
        /^CircuitBreakerModule: option "httpFilter.body" returned a body that cannot be sent as JSON \(TypeError: Converting circular structure to JSON[^)]*\); the default body was sent instead\./,
      ),
    ]);
  });

  it('a request without the key header goes to the default key, through @UseCircuitBreaker() and @RequireCircuitBreaker() alike', async () => {
    const { registry, get } = await started();
    expect(await get('/tenant')).toEqual({ status: 200, retryAfter: null, body: { served: true } });
    expect(await get('/tenant-guarded')).toEqual({
      status: 200,
      retryAfter: null,
      body: { ok: true },
    });
    const tenants = registry.get('tenants');
    expect(tenants.forKey(FAMILY_DEFAULT_KEY).snapshot().totals.admitted).toBe(1);

    // The default key's child is a breaker as any other: it opens, the fallback answers, the guard refuses.
    upstream.down = true;
    expect(await get('/tenant')).toEqual({
      status: 200,
      retryAfter: null,
      body: { fallback: true },
    });
    expect(tenants.forKey(FAMILY_DEFAULT_KEY).state).toBe('open');
    expect(await get('/tenant')).toEqual({
      status: 200,
      retryAfter: null,
      body: { fallback: true },
    });
    expect(upstream.calls).toBe(2);
    expect(await get('/tenant-guarded')).toEqual({
      status: 503,
      retryAfter: '4',
      body: UNAVAILABLE,
    });
    // Another tenant is not affected.
    upstream.down = false;
    expect(await get('/tenant', { 'x-tenant': 'acme' })).toEqual({
      status: 200,
      retryAfter: null,
      body: { served: true },
    });
  });

  it('a key function that throws is reported once per site, and its requests are served under the default key', async () => {
    const { registry, get, errors } = await started();
    for (let i = 0; i < 3; i++) {
      expect(await get('/tenant-throwing-key')).toEqual({
        status: 200,
        retryAfter: null,
        body: { served: true },
      });
      expect((await get('/tenant-guarded-throwing-key')).status).toBe(200);
    }
    expect(registry.get('tenants').forKey(FAMILY_DEFAULT_KEY).snapshot().totals.admitted).toBe(3);
    expect(errors.mock.calls.map(([message]) => message)).toEqual([
      `Circuit breaker "tenants" in @UseCircuitBreaker() on HostileController.tenantThrowingKey: option "key" threw TypeError: no tenant resolver; the call went on under the default key "${FAMILY_DEFAULT_KEY}". Make the key function return the target's key, or undefined when there is none. Later errors of this site's key function are not reported again.`,
      `Circuit breaker "tenants" in @RequireCircuitBreaker() on HostileController.tenantGuardedThrowingKey: option "key" threw TypeError: no tenant resolver; the call went on under the default key "${FAMILY_DEFAULT_KEY}". Make the key function return the target's key, or undefined when there is none. Later errors of this site's key function are not reported again.`,
    ]);
  });
});
