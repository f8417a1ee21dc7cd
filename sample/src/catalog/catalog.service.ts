import { Inject, Injectable } from '@nestjs/common';
import {
  type Breaker,
  CircuitBreaker,
  circuitBreaker,
  ensureOk,
  getCallSignal,
  InjectCircuitBreaker,
} from 'nestjs-circuit-breaker';
import { of, type Observable } from 'rxjs';
import { fromFetch } from 'rxjs/fetch';
import { UPSTREAMS, type Upstreams } from '../sample.config.js';

export interface Product {
  id: string;
  name: string;
  price: number;
}

@Injectable()
export class CatalogService {
  constructor(
    @Inject(UPSTREAMS) private readonly upstreams: Upstreams,
    @InjectCircuitBreaker('catalog.search') private readonly searchBreaker: Breaker,
  ) {}

  /**
   * The decorator: the method is the call. While the catalog is down (or its
   * breaker open), the last good answer for the same id is served for up to a
   * minute; past that, the error surfaces. A fallback is why this one keeps
   * the decorator: the client wirings (pricing, inventory) have none.
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

  /**
   * The same with RxJS: the `circuitBreaker()` operator. `fromFetch()` sends
   * its request when subscribed, which the breaker admits first, and aborts it
   * when the deadline unsubscribes it. Search degrades to no results rather
   * than an error page.
   */
  search(query: string): Observable<Product[]> {
    return fromFetch(`${this.upstreams.primary}/search?q=${encodeURIComponent(query)}`, {
      selector: async (response) => (await ensureOk(response)).json() as Promise<Product[]>,
    }).pipe(circuitBreaker(this.searchBreaker, { fallback: () => of([]) }));
  }
}
