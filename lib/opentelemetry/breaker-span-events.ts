import { trace, type Attributes } from '@opentelemetry/api';
import type { CircuitBreakerEvent } from '../interfaces/circuit-breaker-event.interface.js';
import {
  CIRCUIT_BREAKER_ATTRIBUTES as ATTR,
  CIRCUIT_BREAKER_SPAN_EVENTS as EVENTS,
} from './circuit-breaker-telemetry.constants.js';

/**
 * Records a refusal or a transition on the active span, if one records. An
 * event on the caller's span, not a span of its own: during an outage a
 * breaker refuses thousands of calls a second, and a span each would flood
 * the tracer with spans that say one thing, while the event sits where the
 * reader already looks (the request that was refused). @internal
 */
export function recordOnActiveSpan(event: CircuitBreakerEvent, keyAttribute: boolean): void {
  if (event.type !== 'rejected' && event.type !== 'stateChange') return;
  const span = trace.getActiveSpan();
  if (span === undefined || !span.isRecording()) return;
  const id: Attributes =
    keyAttribute && event.key !== undefined
      ? { [ATTR.name]: event.breaker, [ATTR.key]: event.key }
      : { [ATTR.name]: event.breaker };
  if (event.type === 'rejected') {
    const { reason, error } = event.payload;
    const retryAfterMs = error.retryAfterMs;
    const attributes: Attributes = {
      ...id,
      [ATTR.rejectionReason]: reason,
      ...(retryAfterMs === undefined ? {} : { [ATTR.retryAfterMs]: retryAfterMs }),
    };
    span.addEvent(EVENTS.rejected, attributes);
    span.setAttributes({ ...attributes, [ATTR.decision]: 'rejected' });
    return;
  }
  const { from, to, reason } = event.payload;
  span.addEvent(EVENTS.stateChange, {
    ...id,
    [ATTR.transitionFrom]: from,
    [ATTR.transitionTo]: to,
    [ATTR.transitionReason]: reason,
  });
}
