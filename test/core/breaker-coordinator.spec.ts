import { describe, expect, it } from 'vitest';
import { Breaker, type BreakerCoordinator, type StateChangeEvent } from '../../lib/core/index.js';
import { ManualClock } from '../helpers/manual-clock.js';

class RecordingCoordinator implements BreakerCoordinator {
  readonly changes: string[] = [];
  probeAllowed = true;
  asked = 0;
  transitioned(breaker: Breaker, change: StateChangeEvent): void {
    this.changes.push(
      `${breaker.name}: ${change.from} -> ${change.to} (${change.reason})${change.openUntil === undefined ? '' : ` until ${change.openUntil}`}`,
    );
  }
  mayProbe(): boolean {
    this.asked++;
    return this.probeAllowed;
  }
}

const failOnce = (b: Breaker) =>
  b.execute(() => Promise.reject(new Error('down'))).catch((e: unknown) => e);

describe('Breaker coordination hooks (shared state)', () => {
  it('tells the coordinator about every transition', async () => {
    const clock = new ManualClock(0);
    const coordinator = new RecordingCoordinator();
    const breaker = new Breaker(
      'shared',
      { consecutiveFailures: 1, openDurationMs: 100 },
      { clock, coordinator },
    );
    await failOnce(breaker);
    clock.advance(100);
    await breaker.execute(() => 1);
    expect(coordinator.changes).toEqual([
      'shared: closed -> open (consecutive-failures) until 100',
      'shared: open -> half-open (open-duration-elapsed)',
      'shared: half-open -> closed (probes-succeeded)',
    ]);
  });

  it('stays open past its open duration while the coordinator withholds the probe permit, rejecting with the probe deadline as estimate', async () => {
    const clock = new ManualClock(0);
    const coordinator = new RecordingCoordinator();
    const breaker = new Breaker(
      'fleet',
      { consecutiveFailures: 1, openDurationMs: 100, halfOpen: { maxWaitMs: 5_000 } },
      { clock, coordinator },
    );
    await failOnce(breaker);
    coordinator.probeAllowed = false;
    clock.advance(150);
    const rejection = await breaker.execute(() => 1).catch((e: unknown) => e);
    expect(rejection).toMatchObject({ reason: 'open', retryAfterMs: 5_000 });
    expect(breaker.state).toBe('open');
    coordinator.probeAllowed = true;
    // Reading never asks for the fleet's probe: a health check or a scrape must not take it.
    const asked = coordinator.asked;
    expect(breaker.state).toBe('open');
    expect(breaker.snapshot()).toMatchObject({ state: 'open', retryAfterMs: 5_000 });
    expect(coordinator.asked).toBe(asked);
    // A call does: it becomes the probe, and closes the breaker.
    await expect(breaker.execute(() => 'probe')).resolves.toBe('probe');
    expect(coordinator.asked).toBe(asked + 1);
    expect(breaker.state).toBe('closed');
  });

  it('a family past its open duration whose fleet probe is elsewhere estimates the probe deadline, never a negative wait', async () => {
    const clock = new ManualClock(0);
    const coordinator: BreakerCoordinator = {
      transitioned: () => undefined,
      mayProbe: () => false,
    };
    const family = new Breaker(
      'fleet',
      {
        perKey: { maxKeys: 10 },
        aggregate: { openWhenOpenRatio: 0.5, minKeys: 2 },
        consecutiveFailures: 1,
        openDurationMs: 1_000,
        halfOpen: { maxWaitMs: 3_000 },
      },
      { clock, coordinator },
    );
    await family
      .forKey('a')
      .execute(() => Promise.reject(new Error('x')))
      .catch(() => undefined);
    await family
      .forKey('b')
      .execute(() => Promise.reject(new Error('x')))
      .catch(() => undefined);
    expect(family.state).toBe('open');
    clock.advance(5_000);
    const rejection = await family
      .forKey('c')
      .execute(() => 1)
      .catch((e: unknown) => e);
    expect(rejection).toMatchObject({ breakerName: 'fleet', reason: 'open', retryAfterMs: 3_000 });
  });

  it('adopts an open state from the fleet until the shared time, and a close', async () => {
    const clock = new ManualClock(1_000);
    const coordinator = new RecordingCoordinator();
    const breaker = new Breaker('adopter', { openDurationMs: 100 }, { clock, coordinator });
    breaker.adoptOpen(900); // already over: ignored
    expect(breaker.state).toBe('closed');
    breaker.adoptOpen(5_000);
    expect(breaker.snapshot()).toMatchObject({ state: 'open', openUntil: 5_000 });
    breaker.adoptOpen(6_000);
    expect(breaker.snapshot().openUntil).toBe(6_000);
    breaker.adoptClosed();
    expect(breaker.state).toBe('closed');
    expect(coordinator.changes).toEqual([
      'adopter: closed -> open (shared-open) until 5000',
      'adopter: open -> closed (shared-close)',
    ]);
    breaker.isolate();
    breaker.adoptOpen(9_000);
    expect(breaker.state).toBe('isolated');
  });
});
