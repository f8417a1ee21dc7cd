import { NOT_TIMED } from './breaker-machine.js';
import { BreakerCalls, UNCOUNTED } from './breaker-calls.js';
import { CLOSED, DISABLED } from './breaker-state.js';
import type { CircuitOpenError } from './breaker.errors.js';
import { TrackedCall } from './tracked-call.js';
import { UncountedCall } from './uncounted-call.js';

/**
 * How a call gets in: past a family's gate, then the breaker's own admission,
 * into the call object it needs. `Breaker` checks its arguments, then comes here.
 *
 * Not exported; kept in the declarations because `Breaker` extends it.
 */
export abstract class BreakerAdmission extends BreakerCalls {
  /** Whether this is a child whose family is not closed: its calls pass the family's gate first. */
  protected underFamilyGate(): boolean {
    const parent = this.parent as BreakerAdmission | undefined;
    return parent !== undefined && parent.current !== CLOSED && parent.current !== DISABLED;
  }

  /**
   * A child's call while its family is not closed: the family rejects for every
   * key while open, and while half-open admits its probes through whichever key
   * is asked for. A family probe's call carries the family's permit with it
   * (settled alike); a child's own rejection returns that permit.
   */
  protected familyCall<T>(
    signal: AbortSignal | undefined,
  ): TrackedCall<T> | UncountedCall<T> | CircuitOpenError {
    const parent = this.parent as BreakerAdmission;
    const gate = parent.admitAsFamily();
    if (typeof gate !== 'number') return gate;
    const token = this.admitOwn();
    // A family probe learns nothing from a call that is not recorded: its permit goes back too.
    if (typeof token !== 'number' || token === UNCOUNTED) {
      if (gate < 0) parent.settle(gate, 'ignored', undefined, NOT_TIMED, undefined);
      return typeof token !== 'number' ? token : new UncountedCall<T>(signal);
    }
    const startedAt = this.timed ? this.monotonic() : NOT_TIMED;
    const call = new TrackedCall<T>(this, token, startedAt);
    if (gate !== 0) call.parentCall = new TrackedCall<T>(parent, gate, startedAt);
    return call;
  }
}
