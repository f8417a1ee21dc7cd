/**
 * How important a request is, Google SRE's four levels: under pressure a
 * limiter sheds the least important first. A request that says nothing is
 * `critical`, as in Google's RPC stack; mark what may wait or fail
 * `sheddable`.
 *
 * @publicApi
 */
export type Criticality = 'critical-plus' | 'critical' | 'sheddable-plus' | 'sheddable';

/** The four criticalities, most important first. @publicApi */
export const CRITICALITIES: readonly Criticality[] = Object.freeze([
  'critical-plus',
  'critical',
  'sheddable-plus',
  'sheddable',
]);

/** The rank of a criticality: 0 for the most important. @internal */
export function rankOf(criticality: Criticality): number {
  switch (criticality) {
    case 'critical-plus':
      return 0;
    case 'critical':
      return 1;
    case 'sheddable-plus':
      return 2;
    case 'sheddable':
      return 3;
  }
}

/** Whether `value` names a criticality. @internal */
export function isCriticality(value: unknown): value is Criticality {
  return typeof value === 'string' && (CRITICALITIES as readonly string[]).includes(value);
}
