import type { LimitScenario } from './simulate.mjs';

export const SERVER: { concurrency: number; meanMs: number; mu: number; sigma: number };
export const CAPACITY: number;
export const TRUE_LIMIT: number;
export const CLIENT_TIMEOUT_MS: number;
export const MIX_LOADS: number[];
export function stepLoad(options?: { rates?: number[]; stepMs?: number }): LimitScenario;
export function unloaded(options?: { rate?: number; durationMs?: number }): LimitScenario;
export function drift(options?: { load?: number; durationMs?: number }): LimitScenario;
export function stall(options?: {
  load?: number;
  atMs?: number;
  ms?: number;
  durationMs?: number;
}): LimitScenario;
export function mix(options: {
  load: number;
  criticalShare?: number;
  durationMs?: number;
  warmupMs?: number;
}): LimitScenario;
