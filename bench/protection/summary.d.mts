// Types of the protection summary for its test (test/protection/summary.spec.ts).

export interface ProtectionOutcome {
  scenario: string;
  run: string;
  implementation: string;
  wasted: number;
  peakInFlight: number;
  waitingS: number | null;
  detectMs: number | null;
  recoverMs: number | null;
  goodput: number;
  p50Ms: number | null;
  p99Ms: number | null;
  amplification: number | null;
}

export interface ProtectionRun {
  kind: string;
  mode: string;
  date: string;
  commit: string;
  node: string;
  peers: { opossum: string; cockatiel: string };
  seed: number;
  results: ProtectionOutcome[];
}

export const SUMMARY_START: string;
export const SUMMARY_END: string;
export const SUMMARY_PAGES: string[];
export function mean(values: number[]): number;
export function fixed(value: number | undefined, digits?: number): string;
export function latestRun(log?: string): ProtectionRun;
export function renderSummary(run: ProtectionRun): string;
export function withSummary(page: string, summary: string, name?: string): string;
export function writeSummaries(run?: ProtectionRun): string[];
