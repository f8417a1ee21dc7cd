import type { Implementation } from './simulate.mjs';

export function oursImplementations(core: {
  Breaker: unknown;
  withRetry: unknown;
}): Record<
  'ours' | 'ours01' | 'oursRampUp' | 'oursProbe' | 'oursRetry' | 'oursPerKey' | 'oursShared',
  Implementation
>;
