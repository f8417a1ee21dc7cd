import type { LimitRow } from './simulate.mjs';

export interface MixFigures {
  load: number;
  criticalPct: number;
  goodput: number;
  criticalP99Ms: number;
  meanLimit: number;
}

export const QUEUE_SIZES: number[];
export const QUEUE_TIMEOUTS_MS: number[];
export function mixFigures(row: LimitRow, seed: number, loads?: number[]): Promise<MixFigures[]>;
export function meetsTargets(figures: MixFigures[]): boolean;
export function mixScore(figures: MixFigures[]): number;
