import { Controller, Get, Param, Query } from '@nestjs/common';
import type { Observable } from 'rxjs';
import { CatalogService, type Product } from './catalog.service.js';

@Controller('catalog')
export class CatalogController {
  constructor(private readonly catalog: CatalogService) {}

  @Get('products/:id')
  product(@Param('id') id: string): Promise<Product> {
    return this.catalog.product(id);
  }

  @Get('search')
  search(@Query('q') query = ''): Observable<Product[]> {
    return this.catalog.search(query);
  }
}
