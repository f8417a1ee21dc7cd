import type { LimitRun } from './simulate.mjs';

export interface ClassFigures {
  offered: number;
  goodput: number;
  goodputPct: number;
  shedPct: number;
  p50Ms: number;
  p99Ms: number;
}

export interface WindowFigures extends ClassFigures {
  critical: ClassFigures;
  sheddable: ClassFigures;
  meanLimit: number;
}

export interface StepFigures extends WindowFigures {
  rate: number;
  settleMs: number | undefined;
}

export function windowFigures(result: LimitRun, fromMs: number, toMs: number): WindowFigures;
export function limitPerSecond(result: LimitRun): number[];
export function settleMs(
  result: LimitRun,
  fromMs: number,
  toMs: number,
  target: number,
  options?: { band?: number; holdS?: number },
): number | undefined;
export function limitSlopePerMinute(result: LimitRun, fromMs: number): number;
export function stallFigures(
  result: LimitRun,
  atMs: number,
  ms: number,
): { before: number; minAfter: number; backMs: number | undefined; after: WindowFigures };
export function stepFigures(
  result: LimitRun,
  target: number,
  options?: { settledAfterMs?: number },
): StepFigures[];
