import { Injectable, Module } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import {
  CircuitBreaker,
  CircuitBreakerModule,
  CircuitBreakerRegistry,
  type CircuitBreakerModuleOptions,
} from '../../lib/index.js';
import { CapturingLogger, nestApps } from '../helpers/nest-app.js';

// Issue "a NestJS user's first hour", item 3: a breaker-name typo must not silently build a second breaker on defaults.

const startApp = nestApps();

async function start(
  options: CircuitBreakerModuleOptions,
  imports: unknown[] = [],
  providers: unknown[] = [],
) {
  const logger = new CapturingLogger();
  const app = await startApp([CircuitBreakerModule.forRoot(options), ...imports], {
    providers,
    logger,
  });
  return { app, warnings: logger.warnings };
}

@Injectable()
class BillingService {
  @CircuitBreaker('payment')
  async charge(): Promise<string> {
    return 'charged';
  }

  @CircuitBreaker('payment')
  async refund(): Promise<string> {
    return 'refunded';
  }
}

@Injectable()
class SearchService {
  @CircuitBreaker()
  async find(): Promise<string[]> {
    return [];
  }

  @CircuitBreaker('search')
  async suggest(): Promise<string[]> {
    return [];
  }
}

const CONFIGURED = { breakers: { payments: { openDurationMs: 60_000 }, search: {} } };

describe('an undefined breaker name beside configured breakers', () => {
  it('a decorator naming one warns once at start-up, suggesting the closest defined name', async () => {
    const { app, warnings } = await start(CONFIGURED, [], [BillingService, SearchService]);
    expect(warnings).toEqual([
      'Circuit breaker "payment" used by @CircuitBreaker() on BillingService.charge is not defined: it was built from the module\'s defaults, beside the configured breakers. ' +
        'Did you mean "payments"? Fix the name, or define "payment" in CircuitBreakerModule.forRoot({ breakers }) or forFeature({ ... }) if it is meant to be a breaker of its own (strict: true makes this an error).',
    ]);
    // It still works, on defaults, as before: a warning, not a behaviour change.
    await expect(app.get(BillingService).charge()).resolves.toBe('charged');
    expect(app.get(CircuitBreakerRegistry).get('payment').config.openDurationMs).toBe(10_000);
  });

  it('forFeature([name]) of an undefined name warns the same way; a name far from every defined one lists them', async () => {
    @Module({ imports: [CircuitBreakerModule.forFeature(['paymnets', 'ledger'])] })
    class LedgerModule {}
    const { warnings } = await start(CONFIGURED, [LedgerModule]);
    expect(warnings).toEqual([
      'Circuit breaker "paymnets" used by CircuitBreakerModule.forFeature() of "paymnets" is not defined: it was built from the module\'s defaults, beside the configured breakers. ' +
        'Did you mean "payments"? Fix the name, or define "paymnets" in CircuitBreakerModule.forRoot({ breakers }) or forFeature({ ... }) if it is meant to be a breaker of its own (strict: true makes this an error).',
      'Circuit breaker "ledger" used by CircuitBreakerModule.forFeature() of "ledger" is not defined: it was built from the module\'s defaults, beside the configured breakers. ' +
        'Defined breakers: "payments", "search". Fix the name, or define "ledger" in CircuitBreakerModule.forRoot({ breakers }) or forFeature({ ... }) if it is meant to be a breaker of its own (strict: true makes this an error).',
    ]);
  });

  it('names defined in forFeature({ name: options }) count as configured and as candidates', async () => {
    @Module({ imports: [CircuitBreakerModule.forFeature({ payments: { timeoutMs: 1_000 } })] })
    class PaymentsModule {}
    const { warnings } = await start({}, [PaymentsModule], [BillingService]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(
      'Circuit breaker "payment" used by @CircuitBreaker() on BillingService.charge is not defined',
    );
    expect(warnings[0]).toContain('Did you mean "payments"?');
  });

  it('no warning without configured breakers, nor for @CircuitBreaker() without a name, nor for defined names', async () => {
    expect((await start({}, [], [BillingService, SearchService])).warnings).toEqual([]);
    expect((await start(CONFIGURED, [], [SearchService])).warnings).toEqual([]);
  });

  it('under strict, the same typo fails start-up with the suggestion', async () => {
    await expect(start({ ...CONFIGURED, strict: true }, [], [BillingService])).rejects.toThrow(
      'Circuit breaker "payment" used by @CircuitBreaker() on BillingService.charge is not defined, and CircuitBreakerModule is strict. ' +
        'Did you mean "payments"? Fix the name, or define "payment" in CircuitBreakerModule.forRoot({ breakers }) or forFeature({ ... }).',
    );
    @Module({ imports: [CircuitBreakerModule.forFeature(['serach'])] })
    class SearchModule {}
    await expect(start({ ...CONFIGURED, strict: true }, [SearchModule])).rejects.toThrow(
      'Circuit breaker "serach" used by CircuitBreakerModule.forFeature() of "serach" is not defined, and CircuitBreakerModule is strict. ' +
        'Did you mean "search"? Fix the name, or define "serach" in CircuitBreakerModule.forRoot({ breakers }) or forFeature({ ... }).',
    );
  });
});
