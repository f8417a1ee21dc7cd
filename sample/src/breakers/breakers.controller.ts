import { Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { CircuitBreakerRegistry, type BreakerSnapshot } from 'nestjs-circuit-breaker';

/** Operator endpoints: look at every breaker, and take one out of or back into service by hand. */
@Controller('breakers')
export class BreakersController {
  constructor(private readonly registry: CircuitBreakerRegistry) {}

  @Get()
  list(): BreakerSnapshot[] {
    return this.registry.snapshot();
  }

  @Get(':name')
  one(@Param('name') name: string): BreakerSnapshot {
    return this.registry.get(name).snapshot();
  }

  @Post(':name/isolate')
  @HttpCode(204)
  isolate(@Param('name') name: string): void {
    this.registry.get(name).isolate();
  }

  @Post(':name/reset')
  @HttpCode(204)
  reset(@Param('name') name: string): void {
    this.registry.get(name).reset();
  }
}
