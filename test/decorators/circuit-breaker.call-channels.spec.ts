import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { BREAKER_CHANNEL_NAMES } from '../../lib/diagnostics/index.js';
import { CallRejectedError, CircuitBreaker, CircuitBreakerModule } from '../../lib/index.js';
import { nestApps } from '../helpers/nest-app.js';

// A decorated method's calls go on the call channels as execute()'s and acquire()'s do. Before, only the breaker's
// own entries published: a decorated method, the most common way in, was invisible to a tracer.

const startApp = nestApps();
const down = new Error('down');
const NOW = { attempts: 2, backoff: { initialMs: 0, jitter: 0 }, budget: false as const };

@Injectable()
class Catalog {
  @CircuitBreaker({ name: 'direct', timeoutMs: false, consecutiveFailures: 2 })
  async lookup(fail: boolean): Promise<string> {
    if (fail) throw down;
    return 'found';
  }

  @CircuitBreaker({ name: 'with-fallback', fallback: 'stale' })
  async price(fail: boolean): Promise<number> {
    if (fail) throw down;
    return 7;
  }

  @CircuitBreaker({ name: 'retried', timeoutMs: false, retry: NOW })
  async stock(): Promise<number> {
    throw down;
  }

  @CircuitBreaker({ name: 'retried-fallback', retry: NOW, fallback: 'stale' })
  async level(): Promise<number> {
    throw down;
  }

  stale(): number {
    return 0;
  }
}

/** Subscribes to the call channels by name, as an APM agent would: each message as published, and the object. */
function listen() {
  const seen: [string, Record<string, unknown>, unknown][] = [];
  const onStart = (m: unknown) => seen.push(['start', { ...(m as object) }, m]);
  const onSettle = (m: unknown) => seen.push(['settle', { ...(m as object) }, m]);
  subscribe(BREAKER_CHANNEL_NAMES.callStart, onStart);
  subscribe(BREAKER_CHANNEL_NAMES.callSettle, onSettle);
  startApp.onCleanup(() => {
    unsubscribe(BREAKER_CHANNEL_NAMES.callStart, onStart);
    unsubscribe(BREAKER_CHANNEL_NAMES.callSettle, onSettle);
  });
  return seen;
}

describe('@CircuitBreaker() methods on the call channels', () => {
  it('publish each call of a Promise method: its start, then its value, error or refusal', async () => {
    const seen = listen();
    const app = await startApp([CircuitBreakerModule.forRoot()], { providers: [Catalog] });
    const catalog = app.get(Catalog);

    expect(await catalog.lookup(false)).toBe('found');
    await expect(catalog.lookup(true)).rejects.toBe(down);
    await expect(catalog.lookup(true)).rejects.toBe(down);
    const refused = await catalog.lookup(false).catch((e: unknown) => e);

    expect(refused).toBeInstanceOf(CallRejectedError);
    expect(seen.map(([phase, copy]) => [phase, copy])).toEqual([
      ['start', { breaker: 'direct' }],
      ['settle', { breaker: 'direct', result: 'found' }],
      ['start', { breaker: 'direct' }],
      ['settle', { breaker: 'direct', error: down }],
      ['start', { breaker: 'direct' }],
      ['settle', { breaker: 'direct', error: down }],
      ['start', { breaker: 'direct' }],
      ['settle', { breaker: 'direct', error: refused }],
    ]);
    // One object for a call's start and its settlement: a subscriber keeps its span on it.
    expect(seen[1]![2]).toBe(seen[0]![2]);
    expect(seen[2]![2]).not.toBe(seen[0]![2]);
  });

  it('publish the calls of a method with a fallback as the breaker counted them', async () => {
    const seen = listen();
    const app = await startApp([CircuitBreakerModule.forRoot()], { providers: [Catalog] });
    const catalog = app.get(Catalog);

    expect([await catalog.price(false), await catalog.price(true)]).toEqual([7, 0]);

    expect(seen.map(([phase, copy]) => [phase, copy])).toEqual([
      ['start', { breaker: 'with-fallback' }],
      ['settle', { breaker: 'with-fallback', result: 7 }],
      ['start', { breaker: 'with-fallback' }],
      ['settle', { breaker: 'with-fallback', error: down }],
    ]);
    expect(seen[3]![2]).toBe(seen[2]![2]);
  });

  it('publish each attempt of a retried method, with a fallback or without', async () => {
    const seen = listen();
    const app = await startApp([CircuitBreakerModule.forRoot()], { providers: [Catalog] });
    const catalog = app.get(Catalog);

    await expect(catalog.stock()).rejects.toBe(down);
    expect(await catalog.level()).toBe(0);

    expect(seen.map(([phase, copy]) => [phase, copy])).toEqual([
      ['start', { breaker: 'retried' }],
      ['settle', { breaker: 'retried', error: down }],
      ['start', { breaker: 'retried' }],
      ['settle', { breaker: 'retried', error: down }],
      ['start', { breaker: 'retried-fallback' }],
      ['settle', { breaker: 'retried-fallback', error: down }],
      ['start', { breaker: 'retried-fallback' }],
      ['settle', { breaker: 'retried-fallback', error: down }],
    ]);
  });
});
