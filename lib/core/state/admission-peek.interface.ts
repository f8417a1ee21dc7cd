import type { BreakerState, RejectionReason } from './breaker-state.js';

/**
 * What `breaker.peek()` answers: whether a call made now would be admitted,
 * and if not, the rejection it would get.
 *
 * @publicApi
 */
export type AdmissionPeek =
  | {
      readonly permitted: true;
      /** The state the call would find: after the transitions time has made due (which `peek()` does not make). */
      readonly state: BreakerState;
      /** Whether it would be admitted as a half-open probe (of the breaker, or of its family). */
      readonly probe: boolean;
    }
  | {
      readonly permitted: false;
      readonly state: BreakerState;
      readonly reason: RejectionReason;
      /** As `CallRejectedError.retryAfterMs` would say. */
      readonly retryAfterMs: number | undefined;
      /** The breaker that would reject: the family's, for a child whose family rejects every key. */
      readonly breakerName: string;
    };
