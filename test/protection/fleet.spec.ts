import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FleetCoordinator } from '../../bench/protection/fleet.mjs';
import { Breaker } from '../../lib/core/index.js';
import { ManualClock } from '../helpers/manual-clock.js';

// The shared state of scenario 9, modelled on the engine's coordinator port:
// what docs/many-replicas.md documents (a quorum of reports opens the fleet,
// one probe permit, the holder's verdict reaches everyone), checked step by
// step on three replicas with a manual clock.

const fail = () => Promise.reject(new Error('ECONNREFUSED'));
const succeed = () => Promise.resolve('ok');

function fleet(size: number) {
  const clock = new ManualClock();
  const coordinator = new FleetCoordinator({ delayMs: 2 });
  const replicas = Array.from({ length: size }, (_, i) =>
    coordinator.join(
      new Breaker(
        `replica-${i}`,
        { consecutiveFailures: 1, openDurationMs: 1_000, timeoutMs: false },
        { clock, coordinator },
      ),
    ),
  );
  return { clock, coordinator, replicas };
}

const settle = (promise: Promise<unknown>) =>
  promise.then(
    () => 'ok',
    (error: Error & { reason?: string }) => error.reason ?? error.message,
  );

describe('FleetCoordinator (scenario 9 shared state, virtual time)', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('opens the fleet on the second report of three ("auto"), 2 ms later, until the latest open-until', async () => {
    const { clock, coordinator, replicas } = fleet(3);
    expect(coordinator.quorum()).toBe(2);
    await settle(replicas[0].execute(fail));
    vi.advanceTimersByTime(10);
    expect(replicas.map((r) => r.lastDecidedState)).toEqual(['open', 'closed', 'closed']);
    clock.advance(100);
    await settle(replicas[1].execute(fail));
    vi.advanceTimersByTime(1);
    expect(replicas[2].lastDecidedState).toBe('closed');
    vi.advanceTimersByTime(1);
    expect(replicas.map((r) => r.lastDecidedState)).toEqual(['open', 'open', 'open']);
    expect(coordinator.fleetOpenUntil).toBe(1_000_000 + 100 + 1_000);
    // The first replica's period is extended to the fleet's: it does not probe at 1,001,000.
    clock.advance(950);
    expect(await settle(replicas[0].execute(succeed))).toBe('open');
  });

  it('gives one probe permit: the holder probes, the others reject until its verdict closes them', async () => {
    const { clock, replicas } = fleet(3);
    await settle(replicas[0].execute(fail));
    await settle(replicas[1].execute(fail));
    vi.advanceTimersByTime(2);
    clock.advance(1_000);
    let release!: (value: string) => void;
    const probe = replicas[2].execute(() => new Promise<string>((r) => (release = r)));
    expect(replicas[2].lastDecidedState).toBe('half-open');
    expect(await settle(replicas[0].execute(succeed))).toBe('open');
    expect(replicas[0].lastDecidedState).toBe('open');
    release('ok');
    expect(await settle(probe)).toBe('ok');
    expect(replicas[2].lastDecidedState).toBe('closed');
    expect(replicas[1].lastDecidedState).toBe('open');
    vi.advanceTimersByTime(2);
    expect(replicas.map((r) => r.lastDecidedState)).toEqual(['closed', 'closed', 'closed']);
  });

  it('a failed probe reopens every replica until the prober’s new open-until', async () => {
    const { clock, coordinator, replicas } = fleet(3);
    await settle(replicas[0].execute(fail));
    await settle(replicas[1].execute(fail));
    vi.advanceTimersByTime(2);
    clock.advance(1_000);
    expect(await settle(replicas[1].execute(fail))).toBe('ECONNREFUSED');
    expect(coordinator.fleetOpenUntil).toBe(1_000_000 + 1_000 + 1_000);
    vi.advanceTimersByTime(2);
    // The permit is free again, but the fleet is open until the new time: nobody probes before it.
    clock.advance(999);
    expect(await settle(replicas[0].execute(succeed))).toBe('open');
    clock.advance(1);
    expect(await settle(replicas[0].execute(succeed))).toBe('ok');
    vi.advanceTimersByTime(2);
    expect(replicas.map((r) => r.lastDecidedState)).toEqual(['closed', 'closed', 'closed']);
  });
});
