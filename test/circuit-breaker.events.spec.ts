import { Injectable, type OnModuleInit } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import {
  CircuitBreakerEvents,
  CircuitBreakerModule,
  CircuitBreakerRegistry,
  type CircuitBreakerEvent,
} from '../lib/index.js';
import { nestApps } from './helpers/nest-app.js';

const start = nestApps();

@Injectable()
class TransitionWatcher implements OnModuleInit {
  readonly seen: string[] = [];
  constructor(private readonly events: CircuitBreakerEvents) {}
  onModuleInit(): void {
    this.events.observe(['stateChange'], (event) => {
      if (event.type === 'stateChange')
        this.seen.push(`${event.breaker} ${event.payload.from} → ${event.payload.to}`);
    });
  }
}

describe('CircuitBreakerEvents', () => {
  it('is injectable: a service observes the transitions of every breaker, breakers created later included', async () => {
    const app = await start(
      [
        CircuitBreakerModule.forRoot({
          logging: false,
          breakers: { payments: { consecutiveFailures: 1 } },
        }),
      ],
      { providers: [TransitionWatcher] },
    );
    const registry = app.get(CircuitBreakerRegistry);
    await registry
      .get('payments')
      .execute(() => Promise.reject(new Error('down')))
      .catch(() => undefined);
    await registry
      .getOrCreate('later', { consecutiveFailures: 1 })
      .execute(() => Promise.reject(new Error('down')))
      .catch(() => undefined);
    expect(app.get(TransitionWatcher).seen).toEqual([
      'payments closed → open',
      'later closed → open',
    ]);
  });

  it("events$ is the registry's events$, and only the named types reach observe()", async () => {
    const app = await start([
      CircuitBreakerModule.forRoot({ logging: false, breakers: { payments: {} } }),
    ]);
    const events = app.get(CircuitBreakerEvents);
    expect(events.events$).toBe(app.get(CircuitBreakerRegistry).events$);
    const seen: CircuitBreakerEvent['type'][] = [];
    const stop = events.observe(['success'], (event) => seen.push(event.type));
    await app
      .get(CircuitBreakerRegistry)
      .get('payments')
      .execute(() => 'ok');
    stop();
    await app
      .get(CircuitBreakerRegistry)
      .get('payments')
      .execute(() => 'ok');
    expect(seen).toEqual(['success']);
  });

  it('refuses what it cannot observe, saying how to call it', () => {
    const events = new CircuitBreakerEvents();
    expect(() => events.observe(['opened' as never], () => undefined)).toThrow(
      /argument "types" must be an array of event names .*got "opened"\. Pass it as observe/,
    );
    expect(() => events.observe('stateChange' as never, () => undefined)).toThrow(TypeError);
    expect(() => events.observe(['stateChange'], undefined as never)).toThrow(
      /argument "sink" must be a function/,
    );
  });
});
