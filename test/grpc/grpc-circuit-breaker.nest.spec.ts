import { Inject, Injectable, type INestApplication } from '@nestjs/common';
import { ClientsModule, Transport, type ClientGrpc } from '@nestjs/microservices';
import { Test } from '@nestjs/testing';
import { status } from '@grpc/grpc-js';
import { firstValueFrom, type Observable } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CircuitBreakerModule, CircuitBreakerRegistry } from '../../lib/index.js';
import { withCircuitBreaker } from '../../lib/grpc/index.js';
import { catalogService, CatalogUpstream } from './grpc-upstream.js';

interface Catalog {
  lookup(request: object): Observable<unknown>;
}

@Injectable()
class CatalogReader {
  private readonly catalog: Catalog;
  constructor(@Inject('CATALOG') client: ClientGrpc) {
    this.catalog = client.getService<Catalog>('Catalog');
  }
  lookup(): Promise<unknown> {
    return firstValueFrom(this.catalog.lookup({ sku: 'a-1' }));
  }
}

describe('withCircuitBreaker() in a Nest gRPC client (ClientsModule, channelOptions.interceptors)', () => {
  let upstream: CatalogUpstream;
  let app: INestApplication;

  beforeEach(async () => {
    upstream = await new CatalogUpstream().start();
    const moduleRef = await Test.createTestingModule({
      imports: [
        CircuitBreakerModule.forRoot({
          breakers: {
            catalog: { consecutiveFailures: 1, openDurationMs: 30_000, perKey: { maxKeys: 50 } },
          },
        }),
        ClientsModule.registerAsync([
          {
            name: 'CATALOG',
            inject: [CircuitBreakerRegistry],
            useFactory: (registry: CircuitBreakerRegistry) => ({
              transport: Transport.GRPC,
              options: {
                url: `127.0.0.1:${upstream.port}`,
                package: 'shop',
                packageDefinition: { 'shop.Catalog': catalogService },
                // The one line: every call of this client goes through the breaker, one child per method.
                channelOptions: {
                  interceptors: [withCircuitBreaker({ breaker: registry.get('catalog') })],
                },
              },
            }),
          },
        ]),
      ],
      providers: [CatalogReader],
    }).compile();
    app = moduleRef.createNestApplication();
    await app.init();
  });

  afterEach(async () => {
    await app.close();
    await upstream.stop();
  });

  it('counts a failed call and refuses the next one without reaching the server', async () => {
    const reader = app.get(CatalogReader);
    expect(await reader.lookup()).toEqual({ ok: true });
    upstream.answer = { code: status.INTERNAL, details: 'boom' };
    await expect(reader.lookup()).rejects.toMatchObject({ code: status.INTERNAL, details: 'boom' });
    await expect(reader.lookup()).rejects.toMatchObject({
      code: status.UNAVAILABLE,
      details:
        'Circuit breaker "catalog[/shop.Catalog/Lookup]" rejected the call: the circuit is open.',
    });
    expect(upstream.received).toEqual(['/shop.Catalog/Lookup', '/shop.Catalog/Lookup']);
    const family = app.get(CircuitBreakerRegistry).get('catalog');
    expect(family.forKey('/shop.Catalog/Lookup').state).toBe('open');
  });
});
