/** Which fleet-wide order: `force`, `release` or `reconfigure`. @publicApi */
export type FleetOrderKind = 'force' | 'release' | 'reconfigure';

/**
 * A fleet-wide order that Redis did not take: this replica obeys it, the
 * others were not told (the message says why). `cause` is the Redis error,
 * when there is one.
 *
 * @publicApi
 */
export class FleetOrderError extends Error {
  override readonly name = 'FleetOrderError';

  constructor(
    message: string,
    /** The breaker's name. */
    readonly breaker: string,
    readonly order: FleetOrderKind,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
