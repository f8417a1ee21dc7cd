import { Controller, Get, Injectable, Module, Param, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CircuitBreaker, CircuitBreakerModule, ensureOk, getCallSignal } from '../lib/index.js';

/**
 * The README's "Usage in three steps", as written there, against a catalog
 * that fails: the exchange the README shows must be the one users get. The
 * first test checks that this file holds the README's blocks as written.
 */
let CATALOG_URL = '';
let catalogCalls = 0;

interface Product {
  id: string;
}

// ---- README: "Usage in three steps", step 2 ----
@Injectable()
export class CatalogClient {
  @CircuitBreaker('catalog')
  async product(id: string): Promise<Product> {
    const response = await fetch(`${CATALOG_URL}/products/${id}`, { signal: getCallSignal() });
    return (await ensureOk(response)).json();
  }
}
// ---- end of step 2 ----

@Controller()
class ProductsController {
  constructor(private readonly catalog: CatalogClient) {}

  @Get('products/:id')
  product(@Param('id') id: string): Promise<Product> {
    return this.catalog.product(id);
  }
}

// ---- README: "Usage in three steps", step 1 ----
@Module({
  imports: [
    CircuitBreakerModule.forRoot({
      breakers: { catalog: { timeoutMs: 2_000, openDurationMs: 30_000 } },
      httpFilter: true, // an open circuit answers 503 + Retry-After, a deadline 504
    }),
  ],
  controllers: [ProductsController],
  providers: [CatalogClient],
})
export class AppModule {}
// ---- end of step 1 ----

const readme = readFileSync(fileURLToPath(new URL('../README.md', import.meta.url)), 'utf8');
const usage = readme.slice(
  readme.indexOf('\n## Usage in three steps\n'),
  readme.indexOf('\n## ', readme.indexOf('\n## Usage in three steps\n') + 1),
);
/** Whitespace and trailing commas apart (Prettier wraps this file at its own width), the text of `code`. */
const normalized = (code: string) => code.replace(/\s+/g, '').replace(/,([)\]}])/g, '$1');

describe('the README usage', () => {
  let catalog: Server;
  let app: INestApplication;
  let url: string;

  beforeAll(async () => {
    catalog = createServer((_request, response) => {
      catalogCalls++;
      response.writeHead(500, { 'content-type': 'text/plain' }).end('catalog is down');
    });
    await new Promise<void>((resolve) => catalog.listen(0, '127.0.0.1', resolve));
    CATALOG_URL = `http://127.0.0.1:${(catalog.address() as AddressInfo).port}`;
    app = await NestFactory.create(AppModule, { logger: false });
    await app.listen(0, '127.0.0.1');
    url = await app.getUrl();
  });
  afterAll(async () => {
    await app?.close();
    await new Promise((resolve) => catalog?.close(resolve));
  });

  it("holds the README's two blocks as written, and the README states what the next test measures", () => {
    const blocks = [...usage.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!);
    expect(blocks).toHaveLength(2);
    const source = normalized(readFileSync(fileURLToPath(import.meta.url), 'utf8'));
    for (const block of blocks) {
      const code = block
        .split('\n')
        .filter((line) => !line.startsWith('import '))
        .join('\n');
      expect(source).toContain(normalized(code));
    }
    expect(usage).toContain('the breaker opens after 10 failures in a row');
    expect(usage).toContain('the first 10 requests answer 500 and the 11th answers 503');
    expect(usage).toContain('Retry-After: 30\n');
    expect(usage).toContain(
      '{"statusCode":503,"error":"Service Unavailable","message":"A dependency is unavailable; retry later."}',
    );
  });

  it('answers 503 with Retry-After: 30 and a body that names nothing internal once the catalog has failed enough', async () => {
    const statuses: number[] = [];
    let response: Response | undefined;
    for (let i = 0; i < 25; i++) {
      response = await fetch(`${url}/products/1`);
      statuses.push(response.status);
      if (response.status === 503) break;
      await response.text();
    }
    // By default, 10 failures in a row open the breaker (before the rate rule has its 20 calls).
    expect(statuses).toEqual([...Array.from({ length: 10 }, () => 500), 503]);
    expect(catalogCalls).toBe(10);
    expect(response!.headers.get('retry-after')).toBe('30');
    expect(response!.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await response!.json()).toEqual({
      statusCode: 503,
      error: 'Service Unavailable',
      message: 'A dependency is unavailable; retry later.',
    });
  });
});
