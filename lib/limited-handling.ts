import type { CallHandler } from '@nestjs/common';
import { Observable, type Subscriber, type Subscription } from 'rxjs';
import {
  isCallRejected,
  type CallRejectedError,
  type ConcurrencyLimiter,
  type Criticality,
  type LimitPermit,
} from './core/index.js';
import { isOverloadSign } from './overload-sign.js';

/** Where a queued request learns that its client went away: the raw HTTP response, when there is one. @internal */
export interface ClientConnection {
  readonly writableEnded: boolean;
  once(event: 'close', listener: () => void): unknown;
  off(event: 'close', listener: () => void): unknown;
}

/** How one handling runs under a limiter. @internal */
export interface LimitedHandling {
  readonly limiter: ConcurrencyLimiter;
  readonly criticality: Criticality;
  /** Whether the limiter may queue (maxQueue > 0): only then is an abort signal made. */
  readonly queues: boolean;
  /** The client's connection, read only when the request waits in the queue. */
  readonly connection: () => ClientConnection | undefined;
  /** The error a refusal is answered with (the HTTP 503, or the rejection itself). */
  readonly refuse: (rejection: CallRejectedError) => Error;
}

/**
 * The handler's result under a place of the limiter: the handler is
 * subscribed (pipes included) only once the place is taken. The place is freed
 * when the result settles: `succeed()` on completion (its time is a latency
 * sample), `drop()` on an error that signals overload (the limit backs off),
 * `release()` on any other error (a failing request measures its failure
 * path, not the service's capacity: a fast 400 or 500 would pull the latency
 * baseline down) and on unsubscription (a cancel). A request waiting in the
 * queue leaves it when unsubscribed or when its HTTP client goes away.
 *
 * @internal
 */
export function limitedHandling(next: CallHandler, how: LimitedHandling): Observable<unknown> {
  return new Observable<unknown>((subscriber) => {
    let permit: LimitPermit | undefined;
    let inner: Subscription | undefined;
    const run = (granted: LimitPermit) => {
      permit = granted;
      let result: Observable<unknown>;
      try {
        result = next.handle();
      } catch (error) {
        // A handler that throws before it has a result (not Nest's, which defers): its place is freed all the same.
        granted.release();
        return subscriber.error(error);
      }
      inner = result.subscribe({
        next: (value) => subscriber.next(value),
        error: (error: unknown) => {
          if (isOverloadSign(error)) granted.drop();
          else granted.release();
          subscriber.error(error);
        },
        complete: () => {
          granted.succeed();
          subscriber.complete();
        },
      });
    };
    // A place now, without an abort signal: making one costs microseconds (Node 20), more than the rest.
    if (!how.queues || how.limiter.hasFreePlace) {
      const ticket = how.limiter.tryAcquire(how.criticality);
      if (isCallRejected(ticket)) subscriber.error(how.refuse(ticket));
      else run(ticket);
      return () => {
        inner?.unsubscribe();
        permit?.release();
      };
    }
    // The request may wait: its wait ends when its subscriber or its client leaves.
    const controller = new AbortController();
    const ticket = how.limiter.acquire(how.criticality, controller.signal);
    if (isPromise(ticket)) wait(ticket, controller, how, subscriber, run);
    else run(ticket);
    return () => {
      // Only a request still waiting has a wait to end (an abort builds an error: not on every request).
      if (permit === undefined) controller.abort();
      inner?.unsubscribe();
      permit?.release();
    };
  });
}

/**
 * A queued request: it runs once given a place, unless its subscriber or its
 * client left meanwhile. A client that went away is answered with nothing (an
 * empty result): there is nobody to tell, and an error would only be logged
 * as the application's.
 */
function wait(
  ticket: Promise<LimitPermit>,
  controller: AbortController,
  how: LimitedHandling,
  subscriber: Subscriber<unknown>,
  run: (permit: LimitPermit) => void,
): void {
  const connection = how.connection();
  let gone = false;
  const onClose = () => {
    if (connection?.writableEnded !== false) return;
    gone = true;
    controller.abort();
  };
  connection?.once('close', onClose);
  const leave = () => {
    subscriber.next(undefined);
    subscriber.complete();
  };
  ticket.then(
    (permit) => {
      connection?.off('close', onClose);
      if (subscriber.closed || controller.signal.aborted) {
        // Granted as its client went away (the same turn): freed, and the result still ends.
        permit.release();
        if (gone) leave();
      } else run(permit);
    },
    (error: unknown) => {
      connection?.off('close', onClose);
      if (gone) leave();
      else subscriber.error(isCallRejected(error) ? how.refuse(error) : error);
    },
  );
}

function isPromise(value: unknown): value is Promise<LimitPermit> {
  return typeof (value as { then?: unknown }).then === 'function';
}
