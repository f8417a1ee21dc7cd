import { Injectable, type LoggerService } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import {
  CIRCUIT_BREAKER_EVENTS,
  CircuitBreakerModule,
  CircuitBreakerRegistry,
  type CircuitBreakerModuleOptions,
} from '../lib/index.js';
import { CountingClock } from './helpers/counting-clock.js';
import { flush } from './helpers/flush.js';
import { ManualClock } from './helpers/manual-clock.js';
import { nestApps } from './helpers/nest-app.js';

/** Keeps every line, with its level and context. */
class LineLogger implements LoggerService {
  readonly lines: string[] = [];
  log(message: string, context?: string) {
    this.lines.push(`log [${context}] ${message}`);
  }
  warn(message: string, context?: string) {
    this.lines.push(`warn [${context}] ${message}`);
  }
  error(message: string, ...rest: unknown[]) {
    // Nest passes (message, stack, context) for errors.
    this.lines.push(`error [${String(rest.at(-1))}] ${message}`);
  }
  debug(message: string, context?: string) {
    this.lines.push(`debug [${context}] ${message}`);
  }
  verbose(message: string, context?: string) {
    this.lines.push(`verbose [${context}] ${message}`);
  }
}

const startApp = nestApps();

async function start(options: CircuitBreakerModuleOptions) {
  const logger = new LineLogger();
  const app = await startApp([CircuitBreakerModule.forRoot(options)], { logger });
  const lines = () => logger.lines.filter((l) => l.includes('[CircuitBreaker]'));
  return { registry: app.get(CircuitBreakerRegistry), lines };
}

const failOnce = (registry: CircuitBreakerRegistry, name: string) =>
  registry
    .get(name)
    .execute(() => Promise.reject(Object.assign(new Error('down'), { status: 503 })))
    .catch(() => undefined);

describe('transition logs', () => {
  it('logs opening at warn with the evidence, closing at log, isolation at warn; half-opening only at debug', async () => {
    const clock = new ManualClock();
    const { registry, lines } = await start({
      clock,
      breakers: {
        payments: {
          window: { type: 'count', size: 4 },
          minimumThroughput: 4,
          openDurationMs: 2_000,
        },
      },
    });
    const payments = registry.get('payments');
    await payments.execute(() => 1);
    for (let i = 0; i < 3; i++) await failOnce(registry, 'payments');
    clock.advance(2_000);
    await payments.execute(() => 'probe');
    payments.isolate();
    expect(lines()).toEqual([
      'warn [CircuitBreaker] Circuit breaker "payments" opened (failure-rate: 3 of 4 calls failed (75%)); calls fail fast for 2000 ms.',
      'log [CircuitBreaker] Circuit breaker "payments" closed (probes-succeeded).',
      'warn [CircuitBreaker] Circuit breaker "payments" forced open: isolate(). release() ends it.',
    ]);
  });

  it('prints the evidence of the rule that opened: the streak, another replica, the children', async () => {
    const clock = new ManualClock();
    const { registry, lines } = await start({
      clock,
      breakers: {
        payments: { consecutiveFailures: 2, openDurationMs: 1_000 },
        hosts: {
          perKey: { maxKeys: 10 },
          consecutiveFailures: 1,
          aggregate: { openWhenOpenRatio: 0.5, minKeys: 2 },
        },
      },
    });
    const payments = registry.get('payments');
    for (let i = 0; i < 5; i++) await payments.execute(() => 1);
    await failOnce(registry, 'payments');
    await failOnce(registry, 'payments');
    clock.advance(1_000);
    await payments.execute(() => 'probe');
    payments.adoptOpen(clock.now() + 5_000);
    const hosts = registry.get('hosts');
    await hosts.forKey('a').execute(() => 1);
    await hosts
      .forKey('b')
      .execute(() => Promise.reject(new Error('refused')))
      .catch(() => undefined);
    // The family opens inside its child's transition, so its line comes first.
    expect(lines().filter((line) => line.includes(' opened '))).toEqual([
      'warn [CircuitBreaker] Circuit breaker "payments" opened (consecutive-failures: 2 failures in a row); calls fail fast for 1000 ms.',
      'warn [CircuitBreaker] Circuit breaker "payments" opened (shared-open: another replica found the dependency broken); calls fail fast for 5000 ms.',
      'warn [CircuitBreaker] Circuit breaker "hosts" opened (open-ratio: 1 of 2 targets open or half-open); calls fail fast for 10000 ms.',
      'warn [CircuitBreaker] Circuit breaker "hosts" [b] opened (consecutive-failures: 1 failure in a row); calls fail fast for 10000 ms.',
    ]);
    expect(payments.snapshot().lastTransition).toEqual({
      from: 'closed',
      to: 'open',
      reason: 'shared-open',
      at: clock.now(),
    });
  });

  it('logs a force at warn with its state, reason and author, and its release at log', async () => {
    const { registry, lines } = await start({ breakers: { payments: {} } });
    const payments = registry.get('payments');
    payments.force('open', { reason: 'payments maintenance', by: 'ops' });
    payments.release();
    payments.force('disabled', { reason: 'bypass while we investigate' });
    expect(lines()).toEqual([
      'warn [CircuitBreaker] Circuit breaker "payments" forced open by ops: payments maintenance. release() ends it.',
      'log [CircuitBreaker] Circuit breaker "payments" released from its forced state: closed, deciding for itself again.',
      'warn [CircuitBreaker] Circuit breaker "payments" forced disabled: bypass while we investigate. release() ends it.',
    ]);
  });

  it('writes at most maxPerSecond lines when 1,000 per-key breakers open in the same second, then one summary', async () => {
    const clock = new ManualClock();
    const { registry, lines } = await start({
      clock,
      logging: { maxPerSecond: 5 },
      breakers: { hosts: { perKey: { maxKeys: 2_000 }, consecutiveFailures: 1 } },
    });
    const hosts = registry.get('hosts');
    for (let i = 0; i < 1_000; i++)
      await hosts
        .forKey(`host-${i}`)
        .execute(() => Promise.reject(new Error('refused')))
        .catch(() => undefined);
    expect(lines()).toHaveLength(5);
    expect(lines()[0]).toBe(
      'warn [CircuitBreaker] Circuit breaker "hosts" [host-0] opened (consecutive-failures: 1 failure in a row); calls fail fast for 10000 ms.',
    );
    clock.advance(1_000);
    await hosts
      .forKey('host-late')
      .execute(() => Promise.reject(new Error('refused')))
      .catch(() => undefined);
    expect(lines().slice(5)).toEqual([
      'warn [CircuitBreaker] 995 more circuit breaker transition(s) not logged (limit 5 per second); see the metrics or GET the registry snapshot.',
      'warn [CircuitBreaker] Circuit breaker "hosts" [host-late] opened (consecutive-failures: 1 failure in a row); calls fail fast for 10000 ms.',
    ]);
  });

  it('logging: false writes nothing; level: warn keeps only warnings', async () => {
    const off = await start({ logging: false, breakers: { a: { consecutiveFailures: 1 } } });
    await failOnce(off.registry, 'a');
    expect(off.lines()).toEqual([]);
    const clock = new ManualClock();
    const quiet = await start({
      clock,
      logging: { level: 'warn' },
      breakers: { a: { consecutiveFailures: 1, openDurationMs: 10 } },
    });
    await failOnce(quiet.registry, 'a');
    clock.advance(10);
    await quiet.registry.get('a').execute(() => 1);
    expect(quiet.lines().map((l) => l.split(' ')[0])).toEqual(['warn']);
  });

  it('rejects bad logging options at start-up', async () => {
    await expect(start({ logging: { maxPerSecond: 0 } })).rejects.toThrow(
      'CircuitBreakerModule: option "logging.maxPerSecond" must be an integer >= 1, got 0.',
    );
  });
});

describe('events for the rest of the application', () => {
  it('publishes opened, half-opened, closed, isolated and rejected with typed payloads to any emitter', async () => {
    const emitted: [string, unknown][] = [];
    @Injectable()
    class Emitter {
      emit(event: string, payload: unknown) {
        emitted.push([event, payload]);
        return true;
      }
    }
    const clock = new ManualClock(1_000);
    const { registry } = await start({
      clock,
      eventEmitter: new Emitter(),
      breakers: { payments: { consecutiveFailures: 1, openDurationMs: 100 } },
    });
    await failOnce(registry, 'payments');
    await registry
      .get('payments')
      .execute(() => 1)
      .catch(() => undefined);
    clock.advance(100);
    await registry.get('payments').execute(() => 1);
    registry.get('payments').isolate();
    expect(emitted).toEqual([
      [
        CIRCUIT_BREAKER_EVENTS.opened,
        {
          breaker: 'payments',
          from: 'closed',
          to: 'open',
          reason: 'consecutive-failures',
          at: 1_000,
          openUntil: 1_100,
        },
      ],
      [CIRCUIT_BREAKER_EVENTS.rejected, { breaker: 'payments', reason: 'open', retryAfterMs: 100 }],
      [
        'circuit-breaker.half-opened',
        {
          breaker: 'payments',
          from: 'open',
          to: 'half-open',
          reason: 'open-duration-elapsed',
          at: 1_100,
        },
      ],
      [
        'circuit-breaker.closed',
        {
          breaker: 'payments',
          from: 'half-open',
          to: 'closed',
          reason: 'probes-succeeded',
          at: 1_100,
        },
      ],
      [
        'circuit-breaker.isolated',
        { breaker: 'payments', from: 'closed', to: 'isolated', reason: 'forced', at: 1_100 },
      ],
    ]);
  });

  it('a listener of the application that throws is logged, not thrown at the process', async () => {
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown) => uncaught.push(error);
    process.on('uncaughtException', onUncaught);
    try {
      const { registry, lines } = await start({
        eventEmitter: {
          emit: () => {
            throw new Error('listener bug');
          },
        },
        breakers: { payments: { consecutiveFailures: 1 } },
      });
      await failOnce(registry, 'payments');
      await flush();
      expect(uncaught).toEqual([]);
      expect(lines()).toContain(
        'error [CircuitBreaker] A listener of circuit-breaker.opened threw: listener bug. The breaker carried on; catch errors inside the listener.',
      );
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });

  it('watching transitions does not make healthy calls pay for timing', async () => {
    const clock = new CountingClock();
    const { registry } = await start({
      clock,
      eventEmitter: { emit: () => true },
      breakers: { quiet: {} },
    });
    expect(await clock.readsDuring(() => registry.get('quiet').execute(() => 'ok'))).toBe(0);
  });
});

describe('CircuitBreakerRegistry.control().reconfigure()', () => {
  it('patches the options a breaker was defined with, over the defaults, keeps its state, and logs what changed', async () => {
    const { registry, lines } = await start({
      defaults: { openDurationMs: 20_000 },
      breakers: { payments: { timeoutMs: 2_000, consecutiveFailures: 5 } },
    });
    const payments = registry.get('payments');
    await failOnce(registry, 'payments');
    const result = await registry.control('payments').reconfigure({ consecutiveFailures: 2 });
    expect([
      result.reset,
      payments.config.timeoutMs,
      payments.config.openDurationMs,
      payments.config.consecutiveFailures,
    ]).toEqual([[], 2_000, 20_000, 2]);
    await failOnce(registry, 'payments');
    expect(payments.state).toBe('open');
    expect(lines()[0]).toBe(
      'log [CircuitBreaker] Circuit breaker "payments" reconfigured: consecutiveFailures 5 → 2; state and window kept.',
    );
    await registry.control('payments').reconfigure({ window: { type: 'count', size: 10 } });
    expect(payments.config.consecutiveFailures).toBe(2);
    expect(lines()[2]).toBe(
      'log [CircuitBreaker] Circuit breaker "payments" reconfigured: window {"type":"count","size":100} → {"type":"count","size":10}, rateRule false → true, minimumThroughput 20 → 10; started afresh: window.',
    );
  });

  it('refuses a patch start-up would refuse, naming the breaker, the site and the option, and changes nothing', async () => {
    const { registry } = await start({ breakers: { payments: { timeoutMs: 2_000 } } });
    await expect(registry.control('payments').reconfigure({ timeoutMs: -1 })).rejects.toThrow(
      'Circuit breaker "payments" in CircuitBreakerRegistry.control().reconfigure(): option "timeoutMs" must be a positive number of milliseconds up to 2147483647, or false for no deadline, got -1.',
    );
    await expect(registry.control('payments').reconfigure({ nope: 1 } as never)).rejects.toThrow(
      'unknown option "nope"',
    );
    await expect(registry.control('paymnets').reconfigure({})).rejects.toThrow('paymnets');
    expect(registry.get('payments').config.timeoutMs).toBe(2_000);
  });

  it('publishes reconfigured to CircuitBreakerEvents', async () => {
    const { registry } = await start({ logging: false, breakers: { payments: {} } });
    const seen: string[] = [];
    registry.events.observe(['reconfigured'], (event) => {
      if (event.type === 'reconfigured')
        seen.push(
          `${event.breaker} ${event.payload.previous.jitter} → ${event.payload.current.jitter}`,
        );
    });
    await registry.control('payments').reconfigure({ jitter: 0.2 });
    expect(seen).toEqual(['payments 0 → 0.2']);
  });
});
