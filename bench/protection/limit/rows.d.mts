import type { LimitRow } from './simulate.mjs';

export const noLimit: LimitRow;
export function limiterRow(core: object, name: string, label: string, options: object): LimitRow;
export function adaptiveAlgorithms(core: object): ('gradient' | 'aimd')[];
