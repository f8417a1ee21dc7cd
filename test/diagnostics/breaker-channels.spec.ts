import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { describe, expect, it } from 'vitest';
import { Breaker } from '../../lib/core/index.js';
import {
  BREAKER_CHANNEL_NAMES,
  breakerChannels,
  type BreakerRejectedMessage,
  type BreakerStateChangeMessage,
} from '../../lib/diagnostics/index.js';
import { CircuitBreakerModule, CircuitBreakerRegistry } from '../../lib/index.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { nestApps } from '../helpers/nest-app.js';

const startApp = nestApps();

/** Subscribes to both channels by name, as an APM agent would, until the test ends. */
function listen() {
  const rejected: BreakerRejectedMessage[] = [];
  const changes: BreakerStateChangeMessage[] = [];
  const onRejected = (m: unknown) => rejected.push(m as BreakerRejectedMessage);
  const onChange = (m: unknown) => changes.push(m as BreakerStateChangeMessage);
  subscribe(BREAKER_CHANNEL_NAMES.rejected, onRejected);
  subscribe(BREAKER_CHANNEL_NAMES.stateChange, onChange);
  startApp.onCleanup(() => {
    unsubscribe(BREAKER_CHANNEL_NAMES.rejected, onRejected);
    unsubscribe(BREAKER_CHANNEL_NAMES.stateChange, onChange);
  });
  return { rejected, changes };
}

describe("Node's diagnostics channels", () => {
  it('carry the refusals and transitions of a breaker built with deps.channels: breakerChannels()', async () => {
    const { rejected, changes } = listen();
    const breaker = new Breaker(
      'by-hand',
      { consecutiveFailures: 1, timeoutMs: false, openDurationMs: 3_000 },
      { clock: new ManualClock(5_000), channels: breakerChannels() },
    );
    await expect(breaker.execute(() => Promise.reject(new Error('down')))).rejects.toThrow('down');
    await expect(breaker.execute(async () => 1)).rejects.toMatchObject({ reason: 'open' });
    expect(
      changes.map(({ breaker: b, from, to, reason, at }) => ({ b, from, to, reason, at })),
    ).toEqual([
      { b: 'by-hand', from: 'closed', to: 'open', reason: 'consecutive-failures', at: 5_000 },
    ]);
    expect(
      rejected.map(({ breaker: b, state, reason, retryAfterMs }) => ({
        b,
        state,
        reason,
        retryAfterMs,
      })),
    ).toEqual([{ b: 'by-hand', state: 'open', reason: 'open', retryAfterMs: 3_000 }]);
    // One set of channels for the process: what an agent subscribed to by name.
    expect(breakerChannels()).toBe(breakerChannels());
  });

  it('carry the start and the settlement of each call, one message for both', async () => {
    const seen: [string, Record<string, unknown>, unknown][] = [];
    const onStart = (m: unknown) => seen.push(['start', { ...(m as object) }, m]);
    const onSettle = (m: unknown) => seen.push(['settle', { ...(m as object) }, m]);
    subscribe(BREAKER_CHANNEL_NAMES.callStart, onStart);
    subscribe(BREAKER_CHANNEL_NAMES.callSettle, onSettle);
    startApp.onCleanup(() => {
      unsubscribe(BREAKER_CHANNEL_NAMES.callStart, onStart);
      unsubscribe(BREAKER_CHANNEL_NAMES.callSettle, onSettle);
    });
    expect(BREAKER_CHANNEL_NAMES).toMatchObject({
      callStart: 'nestjs-circuit-breaker:call-start',
      callSettle: 'nestjs-circuit-breaker:call-settle',
    });
    const breaker = new Breaker(
      'calls',
      { timeoutMs: false },
      { clock: new ManualClock(5_000), channels: breakerChannels() },
    );
    await expect(breaker.execute(async () => 'ok')).resolves.toBe('ok');
    expect(seen.map(([phase, copy]) => [phase, copy])).toEqual([
      ['start', { breaker: 'calls' }],
      ['settle', { breaker: 'calls', result: 'ok' }],
    ]);
    expect(seen[1]![2]).toBe(seen[0]![2]);
  });

  it("carry a Nest module's breakers without any option", async () => {
    const { rejected, changes } = listen();
    const app = await startApp([
      CircuitBreakerModule.forRoot({
        clock: new ManualClock(7_000),
        breakers: { payments: { consecutiveFailures: 1, timeoutMs: false } },
      }),
    ]);
    const payments = app.get(CircuitBreakerRegistry).get('payments');
    payments.force('open', { reason: 'maintenance' });
    await expect(payments.execute(async () => 1)).rejects.toMatchObject({ reason: 'isolated' });
    expect(changes.map(({ breaker: b, to, reason }) => ({ b, to, reason }))).toEqual([
      { b: 'payments', to: 'isolated', reason: 'forced' },
    ]);
    expect(rejected.map(({ breaker: b, reason }) => ({ b, reason }))).toEqual([
      { b: 'payments', reason: 'isolated' },
    ]);
  });
});
