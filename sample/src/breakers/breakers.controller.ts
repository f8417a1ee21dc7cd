import {
  BadRequestException,
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Post,
} from '@nestjs/common';
import {
  CircuitBreakerRegistry,
  type BreakerSnapshot,
  type FaultInjectionOptions,
  type InjectedFault,
} from 'nestjs-circuit-breaker';

/** Operator endpoints: look at every breaker, and take one out of or back into service by hand. */
@Controller('breakers')
export class BreakersController {
  /** The fault injected into each breaker by a game day, to remove it again. */
  private readonly faults = new Map<string, InjectedFault>();

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

  /**
   * A game day: the breaker's calls see the fault (`{ "fail": true, "rate": 0.5 }`,
   * `{ "latencyMs": 800 }`, `{ "overload": { "retryAfterMs": 5000 } }`) instead of
   * the dependency's answer. Only with GAME_DAY=true (the module's
   * `faultInjection`); refused otherwise, with the reason.
   */
  @Post(':name/faults')
  inject(
    @Param('name') name: string,
    @Body() fault: FaultInjectionOptions,
  ): BreakerSnapshot['injectedFault'] {
    const breaker = this.registry.get(name);
    let injected: InjectedFault;
    try {
      injected = this.registry.injectFault(name, fault);
    } catch (error) {
      throw new BadRequestException((error as Error).message);
    }
    this.faults.set(name, injected);
    return breaker.snapshot().injectedFault;
  }

  @Delete(':name/faults')
  @HttpCode(204)
  removeFault(@Param('name') name: string): void {
    this.faults.get(name)?.remove();
    this.faults.delete(name);
  }
}
