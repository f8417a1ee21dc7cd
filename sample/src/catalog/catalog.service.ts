import { Inject, Injectable } from '@nestjs/common';
import { CircuitBreaker, ensureOk, getCallSignal } from 'nestjs-circuit-breaker';
import { UPSTREAMS, type Upstreams } from '../sample.config.js';

export interface Product {
  id: string;
  name: string;
  price: number;
}

@Injectable()
export class CatalogService {
  constructor(@Inject(UPSTREAMS) private readonly upstreams: Upstreams) {}

  /**
   * While the catalog is down (or its breaker open), the last good answer for
   * the same id is served for up to a minute; past that, the error surfaces.
   */
  @CircuitBreaker({
    name: 'catalog',
    fallback: { lastGood: { maxAgeMs: 60_000, maxEntries: 1_000 } },
  })
  async product(id: string): Promise<Product> {
    // The call's signal aborts the request when the breaker's deadline passes. ensureOk() throws an
    // UpstreamHttpError that keeps the status and Retry-After: a 429 pauses the breaker instead of opening it.
    const response = await fetch(`${this.upstreams.primary}/products/${encodeURIComponent(id)}`, {
      signal: getCallSignal(),
    });
    return (await ensureOk(response)).json() as Promise<Product>;
  }

  /** Search degrades to no results rather than an error page. */
  @CircuitBreaker({ name: 'catalog.search', fallback: 'noResults' })
  async search(query: string): Promise<Product[]> {
    const response = await fetch(
      `${this.upstreams.primary}/search?q=${encodeURIComponent(query)}`,
      { signal: getCallSignal() },
    );
    return (await ensureOk(response)).json() as Promise<Product[]>;
  }

  noResults(): Product[] {
    return [];
  }
}
