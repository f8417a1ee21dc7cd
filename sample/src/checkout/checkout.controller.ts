import { Controller, Get, Param } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { RequireCircuitBreaker } from 'nestjs-circuit-breaker';
import { firstValueFrom } from 'rxjs';
import { CatalogService, type Product } from '../catalog/catalog.service.js';
import { PricingService, type Price } from '../pricing/pricing.service.js';

export interface Quote {
  product: Product;
  price: Price;
}

/**
 * A fan-out: a quote needs both the catalog and pricing. While either breaker
 * would reject, `@RequireCircuitBreaker()` answers before any work starts (and
 * before the catalog's stale-answer fallback could hide the outage from a
 * checkout): 503 + Retry-After over HTTP, the CIRCUIT_OPEN payload over the
 * TCP microservice transport. It counts nothing as a call.
 */
@Controller('checkout')
@RequireCircuitBreaker('catalog', 'pricing')
export class CheckoutController {
  constructor(
    private readonly catalog: CatalogService,
    private readonly pricing: PricingService,
  ) {}

  @Get(':id')
  quote(@Param('id') id: string): Promise<Quote> {
    return this.quoteOf(id);
  }

  /** The same quote for other services, over TCP: `client.send('checkout.quote', id)`. */
  @MessagePattern('checkout.quote')
  rpcQuote(@Payload() id: string): Promise<Quote> {
    return this.quoteOf(id);
  }

  private async quoteOf(id: string): Promise<Quote> {
    const [product, price] = await Promise.all([
      this.catalog.product(id),
      firstValueFrom(this.pricing.price(id)),
    ]);
    return { product, price };
  }
}
