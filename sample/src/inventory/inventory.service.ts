import { Inject, Injectable, NotFoundException } from '@nestjs/common';
import { CircuitBreaker, ensureOk, getCallSignal } from 'nestjs-circuit-breaker';
import { UPSTREAMS, type Upstreams } from '../sample.config.js';

export interface Stock {
  sku: string;
  available: number;
  warehouse: string;
}

@Injectable()
export class InventoryService {
  constructor(@Inject(UPSTREAMS) private readonly upstreams: Upstreams) {}

  /** One breaker per warehouse (the `inventory` family, keyed by the first argument). */
  @CircuitBreaker({ name: 'inventory', key: (warehouse: string) => warehouse })
  async stock(warehouse: string, sku: string): Promise<Stock> {
    const base = this.upstreams.warehouses[warehouse];
    if (base === undefined) throw new NotFoundException(`no warehouse "${warehouse}"`);
    const response = await fetch(`${base}/stock/${encodeURIComponent(sku)}`, {
      signal: getCallSignal(),
    });
    return (await ensureOk(response)).json() as Promise<Stock>;
  }
}
