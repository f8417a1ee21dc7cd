import { Inject, Injectable, NotFoundException, type OnApplicationShutdown } from '@nestjs/common';
import { CallRejectedError, CallTimeoutError, ensureOk } from 'nestjs-circuit-breaker';
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

  /** Plain fetch: the dispatcher puts it through the warehouse's own breaker (warehouse.dispatcher.ts). */
  async stock(warehouse: string, sku: string): Promise<Stock> {
    const base = this.upstreams.warehouses[warehouse];
    if (base === undefined) throw new NotFoundException(`no warehouse "${warehouse}"`);
    const response = await fetch(`${base}/stock/${encodeURIComponent(sku)}`, {
      dispatcher: this.dispatcher,
    } as RequestInit).catch(breakerErrorOf);
    return (await ensureOk(response)).json() as Promise<Stock>;
  }

  /** After the HTTP server has closed: a call still hung on a warehouse is dropped, not waited for. */
  async onApplicationShutdown(): Promise<void> {
    await this.dispatcher.destroy();
  }
}

/**
 * fetch wraps every error in `TypeError: fetch failed`; the breaker's refusal
 * and its deadline are its `cause`. Rethrown as themselves, the module's HTTP
 * filter answers them: 503 with Retry-After, and 504.
 */
function breakerErrorOf(error: unknown): never {
  const cause = (error as { cause?: unknown }).cause;
  throw cause instanceof CallRejectedError || cause instanceof CallTimeoutError ? cause : error;
}
