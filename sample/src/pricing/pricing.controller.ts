import { Controller, Get, Param } from '@nestjs/common';
import type { Observable } from 'rxjs';
import { PricingService, type Price } from './pricing.service.js';

@Controller('pricing')
export class PricingController {
  constructor(private readonly pricing: PricingService) {}

  @Get(':id')
  price(@Param('id') id: string): Observable<Price> {
    return this.pricing.price(id);
  }
}
