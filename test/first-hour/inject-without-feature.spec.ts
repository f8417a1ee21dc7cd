import { Injectable, Module } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import {
  Breaker,
  CircuitBreakerModule,
  CircuitBreakerRegistry,
  getCircuitBreakerToken,
  InjectCircuitBreaker,
} from '../../lib/index.js';
import { CapturingLogger, nestApps } from '../helpers/nest-app.js';

// Issue "a NestJS user's first hour", item 5: @InjectCircuitBreaker(name) under forRootAsync needs no forFeature([name]).

const start = nestApps();

@Injectable()
class LedgerClient {
  constructor(@InjectCircuitBreaker('ledger') readonly breaker: Breaker) {}
}

@Injectable()
class AuditClient {
  @InjectCircuitBreaker('audit')
  readonly breaker!: Breaker;
}

@Injectable()
class TypoClient {
  constructor(@InjectCircuitBreaker('ledgr') readonly breaker: Breaker) {}
}

@Injectable()
class NeverProvided {
  constructor(@InjectCircuitBreaker('elsewhere') readonly breaker: Breaker) {}
}

describe('@InjectCircuitBreaker(name) under forRootAsync, without forFeature()', () => {
  const asyncRoot = (options: object) =>
    CircuitBreakerModule.forRootAsync({ useFactory: () => options });

  it('injects the breaker the factory defines, by constructor parameter or property', async () => {
    const app = await start([asyncRoot({ breakers: { ledger: { openDurationMs: 9_000 } } })], {
      providers: [LedgerClient, AuditClient],
    });
    const registry = app.get(CircuitBreakerRegistry);
    expect(app.get(LedgerClient).breaker).toBe(registry.get('ledger'));
    expect(registry.get('ledger').config.openDurationMs).toBe(9_000);
    // Not configured: built from the defaults, as a decorator's name would be.
    expect(app.get(AuditClient).breaker).toBe(registry.get('audit'));
    expect(app.get(getCircuitBreakerToken('ledger'))).toBe(registry.get('ledger'));
    // A name only a class outside this application injects builds nothing here.
    expect(registry.has('elsewhere')).toBe(false);
    expect(NeverProvided).toBeDefined();
  });

  it('in a feature module too, without importing anything', async () => {
    @Module({ providers: [LedgerClient] })
    class LedgerModule {}
    const app = await start([asyncRoot({ breakers: { ledger: {} } }), LedgerModule]);
    expect(app.get(LedgerClient).breaker).toBe(app.get(CircuitBreakerRegistry).get('ledger'));
  });

  it('a mistyped name warns with the nearest defined one, and fails start-up under strict', async () => {
    const logger = new CapturingLogger();
    await start([asyncRoot({ breakers: { ledger: {} } })], { providers: [TypoClient], logger });
    expect(logger.warnings).toEqual([
      'Circuit breaker "ledgr" used by @InjectCircuitBreaker() in TypoClient is not defined: it was built from the module\'s defaults, beside the configured breakers. ' +
        'Did you mean "ledger"? Fix the name, or define "ledgr" in CircuitBreakerModule.forRoot({ breakers }) or forFeature({ ... }) if it is meant to be a breaker of its own (strict: true makes this an error).',
    ]);
    await expect(
      start([asyncRoot({ strict: true, breakers: { ledger: {} } })], { providers: [TypoClient] }),
    ).rejects.toThrow(
      'Circuit breaker "ledgr" used by @InjectCircuitBreaker() in TypoClient is not defined, and CircuitBreakerModule is strict. ' +
        'Did you mean "ledger"? Fix the name, or define "ledgr" in CircuitBreakerModule.forRoot({ breakers }) or forFeature({ ... }).',
    );
  });

  it('rejects a name that is not a non-empty string where the class is declared', () => {
    expect(() => InjectCircuitBreaker('')).toThrow(
      '@InjectCircuitBreaker() takes a breaker name, a non-empty string, got "". Pass the name, e.g. @InjectCircuitBreaker(\'payments\').',
    );
  });
});
