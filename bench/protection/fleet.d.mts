import type { CoordinatedBreaker } from '../../lib/core/index.js';

export class FleetCoordinator {
  constructor(options?: { quorum?: number | 'auto'; delayMs?: number });
  readonly members: CoordinatedBreaker[];
  fleetOpen: boolean;
  fleetOpenUntil: number;
  join<B extends CoordinatedBreaker>(breaker: B): B;
  quorum(): number;
  transitioned(breaker: CoordinatedBreaker, change: unknown): void;
  mayProbe(breaker: CoordinatedBreaker): boolean;
}
