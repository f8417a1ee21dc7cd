let last = 0;

/**
 * The next moment of this process: each read sent to Redis and each order or
 * state heard or obeyed takes one, so "did this happen before that read went
 * out?" has one answer. `Date.now()` could not give it: two things done in
 * one millisecond get the same time, and a read sent just after an order was
 * obeyed was taken for one sent before it (and what it found was dropped).
 *
 * @internal
 */
export function nextMoment(): number {
  return ++last;
}
