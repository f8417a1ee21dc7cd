import type { Implementation } from './simulate.mjs';

export const CANDIDATES_MARKER: string;
export function adaptiveDeadline(
  now: () => number,
  options?: { factor?: number; minMs?: number; maxMs?: number; samples?: number },
): (fn: (signal?: AbortSignal) => Promise<unknown>) => (signal?: AbortSignal) => Promise<unknown>;
export function adaptiveRamp(
  breaker: {
    on(
      event: 'stateChange',
      listener: (change: { from: string; to: string; reason: string }) => void,
    ): unknown;
  },
  now: () => number,
  options?: { initialRatio?: number; stepMs?: number },
): (call: () => Promise<unknown>) => Promise<unknown>;
export const CANDIDATES: ((core: unknown) => Implementation)[];
