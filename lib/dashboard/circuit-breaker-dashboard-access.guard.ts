import {
  Inject,
  Injectable,
  NotFoundException,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { isObservable, lastValueFrom } from 'rxjs';
import { CIRCUIT_BREAKER_DASHBOARD_OPTIONS } from './circuit-breaker-dashboard.constants.js';
import type { ResolvedDashboardOptions } from './dashboard-options.js';

/**
 * The guard of a dashboard made by `forRootAsync()`, whose routes exist
 * before its factory has said whether it is enabled and who may see it: a
 * disabled dashboard answers 404 as if it were not there, and an enabled one
 * asks the guard the factory gave (a class is built once, in the dashboard
 * module's scope, so its dependencies come from `imports`).
 *
 * @internal
 */
@Injectable()
export class CircuitBreakerDashboardAccessGuard implements CanActivate {
  private guard: Promise<CanActivate | undefined> | undefined;

  constructor(
    @Inject(CIRCUIT_BREAKER_DASHBOARD_OPTIONS) private readonly options: ResolvedDashboardOptions,
    @Inject(ModuleRef) private readonly moduleRef: ModuleRef,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (!this.options.enabled) throw new NotFoundException();
    const guard = await (this.guard ??= this.build());
    if (guard === undefined) return true;
    const allowed = guard.canActivate(context);
    return isObservable(allowed) ? lastValueFrom(allowed, { defaultValue: false }) : allowed;
  }

  private async build(): Promise<CanActivate | undefined> {
    const guard = this.options.guard;
    return typeof guard === 'function' ? this.moduleRef.create(guard) : guard;
  }
}
