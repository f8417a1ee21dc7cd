import { Inject, Injectable } from '@nestjs/common';
import { Agent, type Dispatcher } from 'undici';
import { describe, expect, it } from 'vitest';
import {
  CircuitBreakerModule,
  CircuitBreakerRegistry,
  CallRejectedError,
} from '../../lib/index.js';
import { withCircuitBreaker } from '../../lib/undici/index.js';
import { nestApps } from '../helpers/nest-app.js';
import { startCountingServer } from './counting-server.js';

const UPSTREAM_DISPATCHER = 'UPSTREAM_DISPATCHER';

/** What the docs show: one provider, a dispatcher whose every request goes through the "upstream" breaker. */
const upstreamDispatcher = {
  provide: UPSTREAM_DISPATCHER,
  useFactory: (registry: CircuitBreakerRegistry) =>
    new Agent().compose(withCircuitBreaker({ breaker: registry.get('upstream') })),
  inject: [CircuitBreakerRegistry],
};

@Injectable()
class QuotesClient {
  constructor(@Inject(UPSTREAM_DISPATCHER) private readonly dispatcher: Dispatcher) {}

  get(url: string): Promise<Response> {
    return fetch(url, { dispatcher: this.dispatcher } as RequestInit);
  }
}

describe('withCircuitBreaker() in a Nest application', () => {
  const start = nestApps();

  it('one provider puts every fetch of a service through a per-origin family', async () => {
    const a = await startCountingServer();
    const b = await startCountingServer();
    start.onCleanup(() => a.close());
    start.onCleanup(() => b.close());
    const app = await start(
      [
        CircuitBreakerModule.forRoot({
          breakers: {
            upstream: { perKey: { maxKeys: 10 }, consecutiveFailures: 1, timeoutMs: false },
          },
        }),
      ],
      { providers: [upstreamDispatcher, QuotesClient] },
    );
    start.onCleanup(() => app.get<Dispatcher>(UPSTREAM_DISPATCHER).close());
    const client = app.get(QuotesClient);
    const upstream = app.get(CircuitBreakerRegistry).get('upstream');

    expect((await client.get(`${a.origin}/fail`)).status).toBe(500);
    const refusal = await client.get(`${a.origin}/ok`).catch((e: unknown) => e);
    expect((refusal as TypeError).cause).toBeInstanceOf(CallRejectedError);
    expect(((refusal as TypeError).cause as CallRejectedError).breakerName).toBe(
      `upstream[${a.origin}]`,
    );
    expect(await (await client.get(`${b.origin}/ok`)).text()).toBe('ok');

    expect(a.total()).toBe(1);
    expect(b.total()).toBe(1);
    expect(upstream.forKey(a.origin).state).toBe('open');
    expect(upstream.forKey(b.origin).state).toBe('closed');
    expect(upstream.forKey(a.origin).snapshot().totals.rejected.total).toBe(1);
  });
});
