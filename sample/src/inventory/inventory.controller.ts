import { Controller, Get, Param } from '@nestjs/common';
import { InventoryService, type Stock } from './inventory.service.js';

@Controller('inventory')
export class InventoryController {
  constructor(private readonly inventory: InventoryService) {}

  @Get(':warehouse/:sku')
  stock(@Param('warehouse') warehouse: string, @Param('sku') sku: string): Promise<Stock> {
    return this.inventory.stock(warehouse, sku);
  }
}
