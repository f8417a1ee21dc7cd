import type { LimitRow } from './simulate.mjs';

export const noLimit: LimitRow;
export function limiterRow(core: object, name: string, label: string, options: object): LimitRow;
export function hasAlgorithm(core: object, algorithm: string): boolean;
