import type { Figures, Implementation } from '../simulate.mjs';

export function tierRows(
  core: object,
  limits: { text: string; options: object; retryAfterMs?: number; bothOnly?: boolean }[],
): Implementation[];
export function tierFigures(
  core: object,
  limits: { text: string; options: object; retryAfterMs?: number; bothOnly?: boolean }[],
  seed: number,
  afterMs?: number,
): Promise<{ row: Implementation; figures: Figures }[]>;
