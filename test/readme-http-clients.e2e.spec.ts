import { HttpModule, HttpService } from '@nestjs/axios';
import {
  Controller,
  Get,
  Inject,
  Injectable,
  Module,
  Param,
  type INestApplication,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import {
  CallRejectedError,
  CircuitBreakerModule,
  CircuitBreakerRegistry,
} from 'nestjs-circuit-breaker';
import { provideAxiosCircuitBreaker } from 'nestjs-circuit-breaker/axios';
import { withCircuitBreaker } from 'nestjs-circuit-breaker/undici';
import { map, type Observable } from 'rxjs';
import { Agent, type Dispatcher } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * The README's "Protect an HTTP client": both of its code blocks are in this
 * file as written there (the first test checks it, so the README cannot drift
 * from what is typechecked and run here), against real servers on loopback.
 */

/** A server on loopback that answers every request with `status`, and counts them. */
async function upstream(
  status: number,
): Promise<{ url: string; calls: () => number; server: Server }> {
  let calls = 0;
  const server = createServer((_request, response) => {
    calls++;
    response.writeHead(status, { 'content-type': 'application/json' }).end('{"price":12}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, calls: () => calls, server };
}

const close = (server: Server) => new Promise((resolve) => server.close(resolve));

// The names the README's blocks take as given.
const PARTNERS = 'PARTNERS';
const pricingUpstream = await upstream(500);
const PRICING_URL = pricingUpstream.url;

@Injectable()
class PricingClient {
  constructor(private readonly http: HttpService) {}

  price(id: string): Observable<unknown> {
    return this.http.get(`/prices/${id}`).pipe(map((response) => response.data));
  }
}

// ---- README: "Protect an HTTP client", the fetch block ----
export const partnersDispatcher = {
  provide: PARTNERS,
  inject: [CircuitBreakerRegistry],
  useFactory: (registry: CircuitBreakerRegistry) =>
    withCircuitBreaker(new Agent(), { breaker: registry.get('partners') }),
};

// ---- README: "Protect an HTTP client", the HttpService block ----
@Module({
  imports: [HttpModule.register({ baseURL: PRICING_URL })],
  providers: [provideAxiosCircuitBreaker(HttpService, 'pricing'), PricingClient],
  exports: [PricingClient],
})
export class PricingModule {}

// ---- end of the README's blocks ----

@Injectable()
class PartnersClient {
  constructor(@Inject(PARTNERS) private readonly dispatcher: Dispatcher) {}

  stock(partner: string): Promise<Response> {
    return fetch(`${partner}/stock/42`, { dispatcher: this.dispatcher } as RequestInit);
  }
}

@Controller()
class PricesController {
  constructor(private readonly pricing: PricingClient) {}

  @Get('prices/:id')
  price(@Param('id') id: string): Observable<unknown> {
    return this.pricing.price(id);
  }
}

/** Whitespace and trailing commas apart (Prettier wraps this file at its own width), the text of `code`. */
const normalized = (code: string) => code.replace(/\s+/g, '').replace(/,([)\]}])/g, '$1');

function readmeBlocks(): string[] {
  const readme = readFileSync(fileURLToPath(new URL('../README.md', import.meta.url)), 'utf8');
  const start = readme.indexOf('\n## Protect an HTTP client\n');
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
  return [...section.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!);
}

afterAll(() => close(pricingUpstream.server));

describe('the README\'s "Protect an HTTP client"', () => {
  it('has two blocks, and this file holds each as written: its imports, and its code', () => {
    const blocks = readmeBlocks();
    expect(blocks).toHaveLength(2);
    const source = readFileSync(fileURLToPath(import.meta.url), 'utf8');
    const imported = new Map<string, Set<string>>();
    for (const [, names, from] of source.matchAll(/^import \{([^}]*)\} from '([^']+)';/gm)) {
      const set = imported.get(from!) ?? new Set<string>();
      for (const name of names!.split(',')) set.add(name.replace(/^\s*type\s+/, '').trim());
      imported.set(from!, set);
    }
    for (const block of blocks) {
      const lines = block.split('\n');
      const imports = lines.filter((line) => line.startsWith('import '));
      expect(imports.length).toBeGreaterThan(0);
      for (const line of imports) {
        const [, names, from] = /^import \{([^}]*)\} from '([^']+)';$/.exec(line)!;
        for (const name of names!.split(','))
          expect(imported.get(from!), `${name.trim()} from ${from}`).toContain(name.trim());
      }
      const code = lines.filter((line) => !line.startsWith('import ')).join('\n');
      expect(normalized(source)).toContain(normalized(code));
    }
  });

  it('fetch: the dispatcher refuses a failing partner without sending, keeps the other partner going', async () => {
    const failing = await upstream(500);
    const healthy = await upstream(200);
    @Module({
      imports: [
        CircuitBreakerModule.forRoot({
          breakers: { partners: { perKey: { maxKeys: 10 }, consecutiveFailures: 2 } },
        }),
      ],
      providers: [partnersDispatcher, PartnersClient],
    })
    class PartnersApp {}
    const app = await NestFactory.createApplicationContext(PartnersApp, { logger: false });
    try {
      const client = app.get(PartnersClient);
      expect((await client.stock(failing.url)).status).toBe(500);
      expect((await client.stock(failing.url)).status).toBe(500);
      const refused = await client.stock(failing.url).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(TypeError);
      expect((refused as TypeError).cause).toBeInstanceOf(CallRejectedError);
      expect(((refused as TypeError).cause as CallRejectedError).breakerName).toBe(
        `partners[${failing.url}]`,
      );
      expect(failing.calls()).toBe(2);
      expect((await client.stock(healthy.url)).status).toBe(200);
      expect(healthy.calls()).toBe(1);
    } finally {
      await app.get<Dispatcher>(PARTNERS).destroy();
      await app.close();
      await Promise.all([close(failing.server), close(healthy.server)]);
    }
  });

  it('HttpService: once "pricing" opens, the route answers 503 with Retry-After and nothing is sent', async () => {
    @Module({
      imports: [
        CircuitBreakerModule.forRoot({
          breakers: { pricing: { consecutiveFailures: 2, openDurationMs: 30_000 } },
          httpFilter: true,
        }),
        PricingModule,
      ],
      controllers: [PricesController],
    })
    class PricingApp {}
    const app: INestApplication = await NestFactory.create(PricingApp, { logger: false });
    await app.listen(0, '127.0.0.1');
    try {
      const url = await app.getUrl();
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) {
        const response = await fetch(`${url}/prices/1`);
        statuses.push(response.status);
        if (response.status === 503) {
          expect(response.headers.get('retry-after')).toBe('30');
          expect(await response.json()).toEqual({
            statusCode: 503,
            error: 'Service Unavailable',
            message: 'A dependency is unavailable; retry later.',
          });
        } else await response.arrayBuffer();
      }
      // The upstream's 500 reaches Nest's default handler as the axios error it is; then the breaker answers.
      expect(statuses).toEqual([500, 500, 503]);
      expect(pricingUpstream.calls()).toBe(2);
    } finally {
      await app.close();
    }
  });
});
