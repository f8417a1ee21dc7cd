import { beforeEach, describe, expect, it, vi } from 'vitest';
import { CircuitBreakerModule, CircuitBreakerRegistry } from '../lib/index.js';
import { nestApps } from './helpers/nest-app.js';

// Every resolution of a breaker's options (defaults applied, every option checked) that another module asks of the
// engine, by the breaker it is for: what start-up costs per breaker. The engine's own calls inside resolve-options
// do not pass through the mock, and are not counted: a resolution is one call either way.
const resolutions = vi.hoisted(() => [] as string[]);
vi.mock('../lib/core/options/resolve-options.js', async (importOriginal) => {
  const engine = await importOriginal<typeof import('../lib/core/options/resolve-options.js')>();
  return {
    ...engine,
    resolveBreakerOptions: (...args: Parameters<typeof engine.resolveBreakerOptions>) => {
      resolutions.push(args[0]);
      return engine.resolveBreakerOptions(...args);
    },
    resolveCopied: (...args: Parameters<typeof engine.resolveCopied>) => {
      // The checker names the breaker in its subject: `Circuit breaker "payments" in ...`.
      resolutions.push(/"(.*?)"/.exec(args[0].subject)?.[1] ?? args[0].subject);
      return engine.resolveCopied(...args);
    },
  };
});

const start = nestApps();

describe("start-up resolves each breaker's options once", () => {
  beforeEach(() => {
    resolutions.length = 0;
  });

  it('for forRoot({ breakers }) and forFeature() definitions, with the module defaults', async () => {
    const app = await start([
      CircuitBreakerModule.forRoot({
        defaults: { openDurationMs: 5_000 },
        breakers: {
          payments: { timeoutMs: 1_000 },
          search: { timeoutMs: 2_000, halfOpen: { maxProbes: 2 } },
        },
      }),
      CircuitBreakerModule.forFeature({ shipping: { consecutiveFailures: 3 } }),
    ]);
    expect(resolutions).toEqual(['(defaults)', 'payments', 'search', 'shipping']);
    // What was resolved is what the breakers run with.
    const registry = app.get(CircuitBreakerRegistry);
    expect(
      ['payments', 'search', 'shipping'].map((name) => {
        const { timeoutMs, openDurationMs, consecutiveFailures } = registry.get(name).config;
        return { name, timeoutMs, openDurationMs, consecutiveFailures };
      }),
    ).toEqual([
      { name: 'payments', timeoutMs: 1_000, openDurationMs: 5_000, consecutiveFailures: 10 },
      { name: 'search', timeoutMs: 2_000, openDurationMs: 5_000, consecutiveFailures: 10 },
      { name: 'shipping', timeoutMs: 2_000, openDurationMs: 5_000, consecutiveFailures: 3 },
    ]);
  });

  it('for a breaker created at run time by getOrCreate()', async () => {
    const app = await start([CircuitBreakerModule.forRoot({})]);
    resolutions.length = 0;
    app.get(CircuitBreakerRegistry).getOrCreate('ad-hoc', { timeoutMs: 3_000 });
    expect(resolutions).toEqual(['ad-hoc']);
  });
});
