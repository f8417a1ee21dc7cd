import type { Implementation } from './simulate.mjs';

export function oursImplementations(core: {
  Breaker: unknown;
  withRetry: unknown;
}): Record<
  | 'ours'
  | 'oursPrevious'
  | 'oursRampUp'
  | 'oursHealthCheck'
  | 'oursRetry'
  | 'oursPerKey'
  | 'oursShared',
  Implementation
>;
