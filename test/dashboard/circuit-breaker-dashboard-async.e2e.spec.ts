import {
  Inject,
  Injectable,
  Module,
  type CanActivate,
  type ExecutionContext,
  type INestApplication,
} from '@nestjs/common';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { CircuitBreakerModule, CircuitBreakerRegistry } from '../../lib/index.js';
import {
  CircuitBreakerDashboardModule,
  type CircuitBreakerDashboardAsyncOptions,
  type DashboardState,
} from '../../lib/dashboard/index.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { openStream, type SseClient } from './sse-client.js';

/** What a configuration module would give: whether the dashboard is on, and the operators' header value. */
const SETTINGS = 'SETTINGS';
interface Settings {
  dashboard: 'on' | 'off';
  operatorKey: string;
}

/** A guard with a dependency of its own, which the dashboard module reaches through `imports`. */
@Injectable()
class OperatorGuard implements CanActivate {
  constructor(@Inject(SETTINGS) private readonly settings: Settings) {}
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<{ headers: Record<string, string> }>();
    return request.headers['x-operator'] === this.settings.operatorKey;
  }
}

const apps: INestApplication[] = [];
const clients: SseClient[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  for (const app of apps.splice(0)) await app.close();
});

function settingsModule(settings: Settings) {
  @Module({ providers: [{ provide: SETTINGS, useValue: settings }], exports: [SETTINGS] })
  class SettingsModule {}
  return SettingsModule;
}

async function start(
  platform: 'express' | 'fastify',
  settings: Settings,
  dashboard: Omit<CircuitBreakerDashboardAsyncOptions, 'useFactory' | 'imports' | 'inject'> = {},
) {
  const moduleRef = await Test.createTestingModule({
    imports: [
      CircuitBreakerModule.forRoot({ clock: new ManualClock(), breakers: { payments: {} } }),
      CircuitBreakerDashboardModule.forRootAsync({
        ...dashboard,
        imports: [settingsModule(settings)],
        inject: [SETTINGS],
        useFactory: async (given: Settings) => ({
          enabled: given.dashboard === 'on',
          guard: OperatorGuard,
          intervalMs: 250,
        }),
      }),
    ],
  }).compile();
  const app =
    platform === 'fastify'
      ? moduleRef.createNestApplication(new FastifyAdapter(), { logger: false })
      : moduleRef.createNestApplication({ logger: false });
  apps.push(app);
  await app.listen(0, '127.0.0.1');
  return { app, url: (await app.getUrl()).replace('[::1]', '127.0.0.1') };
}

describe.each(['express', 'fastify'] as const)('forRootAsync() on %s', (platform) => {
  it('takes its options from a factory: the guard (a class with dependencies), the interval, and control', async () => {
    const { app, url } = await start(
      platform,
      { dashboard: 'on', operatorKey: 'k-42' },
      { path: 'ops', control: true },
    );
    const operator = { 'x-operator': 'k-42' };
    expect((await fetch(`${url}/ops`)).status).toBe(403);
    const page = await fetch(`${url}/ops`, { headers: operator });
    expect(page.status).toBe(200);
    const html = await page.text();
    const config = JSON.parse(/id="cb-config">(.*?)<\/script>/.exec(html)![1]!) as {
      control: boolean;
      token: string;
      intervalMs: number;
    };
    expect([config.control, config.intervalMs]).toEqual([true, 250]);
    expect(config.token).toMatch(/^[A-Za-z0-9_-]{32}$/);

    const client = await openStream(`${url}/ops/stream`, operator);
    clients.push(client);
    const first = JSON.parse(
      (await client.next((e) => e.type === 'snapshot')).data,
    ) as DashboardState;
    expect(first.breakers.map((view) => view.snapshot.name)).toEqual(['payments']);

    const forced = await fetch(`${url}/ops/force`, {
      method: 'POST',
      headers: {
        ...operator,
        'content-type': 'application/json',
        'x-circuit-breaker-dashboard': config.token,
      },
      body: JSON.stringify({ breaker: 'payments', state: 'open', reason: 'maintenance' }),
    });
    expect(forced.status).toBe(204);
    expect(app.get(CircuitBreakerRegistry).get('payments').snapshot().forced?.reason).toBe(
      'maintenance',
    );
  });

  it('answers 404 on every route when the factory says enabled: false', async () => {
    const { url } = await start(
      platform,
      { dashboard: 'off', operatorKey: 'k-42' },
      { control: true },
    );
    const operator = { 'x-operator': 'k-42' };
    for (const path of ['', '/state', '/stream'])
      expect((await fetch(`${url}/circuit-breakers${path}`, { headers: operator })).status).toBe(
        404,
      );
    const control = await fetch(`${url}/circuit-breakers/reset`, {
      method: 'POST',
      headers: operator,
    });
    expect(control.status).toBe(404);
  });
});

describe('forRootAsync() refuses', () => {
  const compile = (async: CircuitBreakerDashboardAsyncOptions) =>
    Test.createTestingModule({
      imports: [CircuitBreakerModule.forRoot(), CircuitBreakerDashboardModule.forRootAsync(async)],
    }).compile();

  it('control when the factory gives no guard, at start-up', async () => {
    await expect(compile({ control: true, useFactory: () => ({}) })).rejects.toThrow(
      'CircuitBreakerDashboardModule: option "control" lets whoever opens the page force breakers open, and no "guard" says who may.',
    );
  });

  it('a route option from the factory, naming where it belongs', async () => {
    await expect(compile({ useFactory: () => ({ path: 'ops' }) as never })).rejects.toThrow(
      new TypeError(
        'CircuitBreakerDashboardModule.forRootAsync(): option "path" shapes the routes, which exist before useFactory runs. ' +
          'Give it to forRootAsync() itself, beside useFactory: forRootAsync({ path, useFactory }).',
      ),
    );
  });

  it('a missing factory and bad route options, when called', () => {
    expect(() => CircuitBreakerDashboardModule.forRootAsync({} as never)).toThrow(
      /^CircuitBreakerDashboardModule\.forRootAsync\(\): option "useFactory" must be a function returning the options/,
    );
    expect(() =>
      CircuitBreakerDashboardModule.forRootAsync({ path: 'a b', useFactory: () => ({}) }),
    ).toThrow(/option "path" must be a route path/);
    expect(() =>
      CircuitBreakerDashboardModule.forRootAsync({
        control: 'yes' as never,
        useFactory: () => ({}),
      }),
    ).toThrow(/option "control" must be a boolean/);
  });
});
