import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CircuitBreakerModule, CircuitBreakerRegistry } from '../../lib/index.js';
import { CircuitBreakerDashboardModule } from '../../lib/dashboard/index.js';
import { HTTP_PLATFORMS, platformApps } from '../helpers/http-platforms.js';
import { ManualClock } from '../helpers/manual-clock.js';

/** Names a path segment cannot carry: dot segments (also percent-encoded), separators, a router's length bound. */
const AWKWARD = [
  '.',
  '..',
  '%2e',
  '.%2E',
  'a/b',
  '../payments',
  '?x#y',
  'a b',
  '%',
  'force',
  'ünïcödé ✓ 🚦',
  '\ud800 lone surrogate',
  'x'.repeat(500),
];
const SEED = 2_025;
/** Any non-empty string is a valid breaker name: a sample of them, drawn with a fixed seed. */
const DRAWN = fc.sample(fc.string({ minLength: 1, maxLength: 40, unit: 'binary' }), {
  seed: SEED,
  numRuns: 40,
});
const NAMES = [...new Set([...AWKWARD, ...DRAWN])];

describe.each(HTTP_PLATFORMS)('the dashboard on %s controls breakers of any name', (platform) => {
  const start = platformApps(platform);

  it(`forces and resets ${AWKWARD.length} awkward names and ${DRAWN.length} drawn ones (seed ${SEED})`, async () => {
    const { app, url } = await start([
      CircuitBreakerModule.forRoot({
        clock: new ManualClock(),
        breakers: Object.fromEntries(NAMES.map((name) => [name, {}])),
      }),
      CircuitBreakerDashboardModule.forRoot({ control: true, guard: () => true }),
    ]);
    const registry = app.get(CircuitBreakerRegistry);
    const html = await (await fetch(`${url}/circuit-breakers`)).text();
    const { token } = JSON.parse(/id="cb-config">(.*?)<\/script>/.exec(html)![1]!) as {
      token: string;
    };
    // As the page sends them: the name in the JSON body.
    const post = (action: string, body: object) =>
      fetch(`${url}/circuit-breakers/${action}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-circuit-breaker-dashboard': token },
        body: JSON.stringify(body),
      });
    const seen: [string, number, string | undefined][] = [];
    for (const name of NAMES) {
      const forced = await post('force', { breaker: name, state: 'open', reason: 'names' });
      const state = registry.get(name).snapshot().state;
      const reset = await post('reset', { breaker: name });
      seen.push([name, forced.status * 1_000 + reset.status, state]);
      expect(registry.get(name).snapshot().forced).toBeUndefined();
    }
    expect(seen).toEqual(NAMES.map((name) => [name, 204_204, 'isolated']));
  });

  it('refuses a control request that names no breaker, and names the unknown one exactly', async () => {
    const { app, url } = await start([
      CircuitBreakerModule.forRoot({ clock: new ManualClock(), breakers: { '.': {} } }),
      CircuitBreakerDashboardModule.forRoot({ control: true, guard: () => true }),
    ]);
    const html = await (await fetch(`${url}/circuit-breakers`)).text();
    const { token } = JSON.parse(/id="cb-config">(.*?)<\/script>/.exec(html)![1]!) as {
      token: string;
    };
    const post = async (action: string, body: unknown) => {
      const response = await fetch(`${url}/circuit-breakers/${action}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-circuit-breaker-dashboard': token },
        body: JSON.stringify(body),
      });
      return [response.status, ((await response.json()) as { message: string }).message];
    };
    expect(await post('reset', {})).toEqual([
      400,
      '"breaker" must be the name of a breaker (a non-empty string), got undefined.',
    ]);
    expect(await post('force', { breaker: '', state: 'open' })).toEqual([
      400,
      '"breaker" must be the name of a breaker (a non-empty string), got "".',
    ]);
    expect(await post('reset', ['.'])).toEqual([
      400,
      '"breaker" must be the name of a breaker (a non-empty string), got undefined.',
    ]);
    expect(await post('reset', { breaker: '..' })).toEqual([
      404,
      'No circuit breaker is named "..".',
    ]);
    expect(app.get(CircuitBreakerRegistry).get('.').snapshot().forced).toBeUndefined();
  });
});
