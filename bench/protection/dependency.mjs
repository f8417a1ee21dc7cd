// The simulated dependency: `slots` requests served at once, the rest waiting
// in a FIFO queue (so latency rises with load, as in Little's law), each
// served in a log-normal time around `serviceMs` that also grows with how busy
// the slots are. A request whose caller gave up stays queued and is still
// served: the server cannot tell, which is what keeps a retry storm going.
// Its condition follows a script of phases over time.

/** Seeded uniform numbers in [0, 1) (mulberry32). */
export function seeded(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function httpError(status, message, retryAfterMs) {
  const error = new Error(message);
  error.status = status;
  if (retryAfterMs !== undefined) error.retryAfterMs = retryAfterMs;
  return error;
}

/** A refused connection as Node's `net` reports it: a `code`, not only a message. */
function refused() {
  const error = new Error('connect ECONNREFUSED 10.0.0.1:443');
  error.code = 'ECONNREFUSED';
  error.errno = -111;
  error.syscall = 'connect';
  return error;
}

function abortError(signal) {
  return signal.reason instanceof Error ? signal.reason : new Error('aborted');
}

/**
 * A condition: `mode` is `healthy`, `down` (refused at once, `ECONNREFUSED`), `hung` (never
 * answers) or `shedding` (429 + Retry-After past `maxQueue`); `capacity` is
 * the share of the healthy throughput it can serve, `latency` multiplies the
 * service time and `addedMs` is added to it, `failRate` is the share of served
 * requests answered 5xx.
 */
export const HEALTHY = Object.freeze({
  mode: 'healthy',
  capacity: 1,
  latency: 1,
  addedMs: 0,
  failRate: 0,
});

export class Dependency {
  constructor(
    time,
    random,
    { slots = 10, serviceMs = 50, contention = 0.2, maxQueue = 2000 } = {},
  ) {
    this.time = time;
    this.random = random;
    this.baseSlots = slots;
    this.serviceMs = serviceMs;
    this.contention = contention;
    this.maxQueue = maxQueue;
    this.busy = 0;
    this.queue = [];
    this.received = 0;
    this.setCondition(HEALTHY);
  }

  setCondition(condition) {
    const c = { ...HEALTHY, ...condition };
    // Fewer slots for a lower capacity; below one slot, one slow slot.
    const wanted = this.baseSlots * c.capacity;
    c.slots = Math.max(1, Math.round(wanted));
    c.scale = c.slots / wanted;
    this.condition = c;
    this.pump();
  }

  /** Whether a request arriving now could be served (the incident's phases are not). */
  get serving() {
    const c = this.condition;
    return (
      c.mode === 'healthy' &&
      c.failRate === 0 &&
      c.capacity >= 1 &&
      c.latency === 1 &&
      c.addedMs === 0
    );
  }

  /** A health endpoint: answers at once unless the dependency is down or hung. */
  health() {
    const mode = this.condition.mode;
    if (mode === 'down') return Promise.reject(refused());
    if (mode === 'hung') return new Promise(() => {});
    return Promise.resolve('ok');
  }

  /** One request; it rejects as soon as any of `signals` (the caller's, the breaker's) aborts. */
  request(signals) {
    this.received++;
    return new Promise((resolve, reject) => {
      const aborted = signals.find((signal) => signal.aborted);
      if (aborted !== undefined) return reject(abortError(aborted));
      const c = this.condition;
      const job = { resolve, reject, settled: false };
      const onAbort = (event) => {
        if (job.settled) return;
        job.settled = true;
        for (const signal of signals) signal.removeEventListener('abort', onAbort);
        reject(abortError(event.target));
      };
      for (const signal of signals) signal.addEventListener('abort', onAbort, { once: true });
      job.done = (fn) => {
        for (const signal of signals) signal.removeEventListener('abort', onAbort);
        if (job.settled) return;
        job.settled = true;
        fn();
      };
      if (c.mode === 'down') {
        setTimeout(() => job.done(() => reject(refused())), 1);
        return;
      }
      if (c.mode === 'hung') return;
      if (c.mode === 'shedding' && this.queue.length >= c.maxQueue) {
        setTimeout(
          () => job.done(() => reject(httpError(429, 'Too Many Requests', c.retryAfterMs))),
          1,
        );
        return;
      }
      if (this.queue.length >= this.maxQueue) {
        setTimeout(() => job.done(() => reject(httpError(503, 'Service Unavailable'))), 1);
        return;
      }
      this.queue.push(job);
      this.pump();
    });
  }

  pump() {
    while (this.busy < this.condition.slots && this.queue.length > 0)
      this.serve(this.queue.shift());
  }

  serve(job) {
    const c = this.condition;
    this.busy++;
    // Log-normal around serviceMs (sigma 0.5), longer as the slots fill up.
    const u1 = this.random() || 1e-12;
    const u2 = this.random();
    const normal = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
    const sample = this.serviceMs * Math.exp(0.5 * normal - 0.125);
    const load = 1 + (this.contention * this.busy) / c.slots;
    const ms = sample * c.scale * c.latency * load + c.addedMs;
    const fails = c.failRate > 0 && this.random() < c.failRate;
    setTimeout(() => {
      this.busy--;
      job.done(() =>
        fails ? job.reject(httpError(503, 'Service Unavailable')) : job.resolve('ok'),
      );
      this.pump();
    }, ms);
  }
}
