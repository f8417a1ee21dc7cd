import { Inject, Injectable, NotFoundException, type OnApplicationShutdown } from '@nestjs/common';
import { ensureOk } from 'nestjs-circuit-breaker';
import type { Dispatcher } from 'undici';
import { UPSTREAMS, type Upstreams } from '../sample.config.js';
import { WAREHOUSE_DISPATCHER } from './warehouse.dispatcher.js';

export interface Stock {
  sku: string;
  available: number;
  warehouse: string;
}

@Injectable()
export class InventoryService implements OnApplicationShutdown {
  constructor(
    @Inject(UPSTREAMS) private readonly upstreams: Upstreams,
    @Inject(WAREHOUSE_DISPATCHER) private readonly dispatcher: Dispatcher,
  ) {}

  /**
   * Plain fetch: the dispatcher puts it through the warehouse's own breaker
   * (warehouse.dispatcher.ts). A refusal or a timeout rejects as fetch's
   * `TypeError`, its cause the breaker's error: the module's HTTP filter
   * answers it (503 with Retry-After, or 504).
   */
  async stock(warehouse: string, sku: string): Promise<Stock> {
    const base = this.upstreams.warehouses[warehouse];
    if (base === undefined) throw new NotFoundException(`no warehouse "${warehouse}"`);
    const response = await fetch(`${base}/stock/${encodeURIComponent(sku)}`, {
      dispatcher: this.dispatcher,
    } as RequestInit);
    return (await ensureOk(response)).json() as Promise<Stock>;
  }

  /** After the HTTP server has closed: a call still hung on a warehouse is dropped, not waited for. */
  async onApplicationShutdown(): Promise<void> {
    await this.dispatcher.destroy();
  }
}
