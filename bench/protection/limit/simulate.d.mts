// Types of the limit simulator for the protection tests (test/protection/), which are TypeScript.

export interface LimitScenario {
  name: string;
  server: { concurrency: number; meanMs: number; mu: number; sigma: number };
  clientTimeoutMs: number;
  phases: { atMs: number; rate: number }[];
  stalls?: { atMs: number; ms: number }[];
  criticalShare?: number;
  durationMs: number;
  settleMs?: number;
}

export interface LimitRow {
  name: string;
  label: string;
  options: object | undefined;
  make(context: { time: unknown; clock: unknown }): unknown;
}

export interface LimitRun {
  scenario: LimitScenario;
  row: string;
  arrivedAt: number[];
  critical: boolean[];
  outcome: number[];
  latency: number[];
  limit: number[];
  inFlight: number[];
  queued: number[];
  served: number;
}

export const SAMPLE_MS: number;
export const OK: number;
export const LATE: number;
export const SHED: number;
export function rateAt(scenario: LimitScenario, atMs: number): number;
export function simulateLimit(
  scenario: LimitScenario,
  row: LimitRow,
  options?: { seed?: number },
): Promise<LimitRun>;
