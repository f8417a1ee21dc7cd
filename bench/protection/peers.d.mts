import type { Implementation } from './simulate.mjs';

export type PeerRows = Record<
  'none' | 'opossum' | 'cockatielConsecutive' | 'cockatielSampling',
  Implementation
>;

export function peersOf(packages: {
  CircuitBreaker: new (action: unknown, options: object) => unknown;
  cockatiel: Record<string, unknown>;
  versions: { opossum: string; cockatiel: string };
}): PeerRows;

export const peers: PeerRows;
