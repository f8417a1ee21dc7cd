import type { CallOutcome } from '../core/index.js';
import { handlerThrew, type BreakerRequest } from './breaker-request.js';

/**
 * The request whose failure's body is read: what `FailureBody` needs of its
 * handler, in the words of the handler's API.
 *
 * @internal
 */
export interface FailureBodyReader<End> extends BreakerRequest {
  /** Whether the caller's handler asked for a pause: it hears nothing until it resumes. */
  readonly callerPaused: boolean;
  /** Gives the caller's handler a chunk of the body (it may pause). */
  deliverChunk(chunk: Buffer): void;
  /** Gives the caller's handler the response's end (`End`, its trailers): its last word. */
  deliverEnd(end: End): void;
}

/**
 * A failure's body (or an overload's), read for the caller up to
 * `failureBodyLimit`: an unread error body must not hold the connection, so
 * it keeps coming while the caller is paused, held here and given on resume,
 * in order, with its end. Made only when such a body is read: a success has
 * none.
 *
 * @internal
 */
export class FailureBody<End> {
  /** The bytes the body may still take. */
  private budget: number;
  /** What came while the caller was paused: given on resume, in order. */
  private held: Buffer[] | undefined = undefined;
  /** The response's end, when it came while the body was held. */
  private end: End | undefined = undefined;
  private flushing = false;

  constructor(private readonly reader: FailureBodyReader<End>) {
    this.budget = reader.failureBodyLimit;
  }

  /** Whether the response's end came and is held for the caller. */
  get endHeld(): boolean {
    return this.end !== undefined;
  }

  /** A chunk of the body: given or held; `false`, nothing else, when it takes the body over its limit. */
  take(chunk: Buffer): boolean {
    this.budget -= chunk.length;
    if (this.budget < 0) return false;
    // A paused caller hears nothing until it resumes (undici's retry decides meanwhile): held for it.
    if (this.held !== undefined || this.reader.callerPaused) (this.held ??= []).push(chunk);
    else this.reader.deliverChunk(chunk);
    return true;
  }

  /** The response's end: `true` when held for the caller (it is paused, or held chunks come first). */
  holds(end: End): boolean {
    if (this.held === undefined && !this.reader.callerPaused) return false;
    this.held ??= [];
    this.end = end;
    return true;
  }

  /** The caller resumed: what was held, as long as it does not pause again. */
  flush(): void {
    if (this.held === undefined || this.flushing) return;
    this.flushing = true;
    try {
      this.deliverHeld();
    } catch (error) {
      handlerThrew(this.reader, error as Error);
    } finally {
      this.flushing = false;
    }
  }

  private deliverHeld(): void {
    const held = this.held!;
    const reader = this.reader;
    while (held.length > 0 && !reader.callerPaused && !reader.done)
      reader.deliverChunk(held.shift()!);
    if (held.length > 0 || reader.callerPaused || reader.done) return;
    this.held = undefined;
    const end = this.end;
    if (end === undefined) return;
    this.end = undefined;
    reader.deliverEnd(end);
  }
}

/** The body a response settled as `outcome` has: a `FailureBody` for a failure's or an overload's, when a limit allows reading it. @internal */
export function failureBodyAfter<End>(
  outcome: CallOutcome,
  reader: FailureBodyReader<End>,
): FailureBody<End> | undefined {
  return (outcome === 'failure' || outcome === 'overload') && reader.failureBodyLimit > 0
    ? new FailureBody(reader)
    : undefined;
}
