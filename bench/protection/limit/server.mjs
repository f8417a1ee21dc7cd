// The server of Netflix concurrency-limits' Example.java, in virtual time: it
// runs `concurrency` requests at once behind a fair semaphore (the rest wait in
// its own FIFO queue, unbounded), each for a log-normal time (LogNormal(mu 3,
// sigma 1), scaled to a mean of `meanMs`). Capacity: concurrency / mean, 100
// requests/s by default. It cannot tell that a caller gave up: every request it
// accepted is served. `stall(ms)` is a GC-like pause: what is in service is held
// `ms` more, and nothing starts before it ends.

/** One draw of LogNormal(mu, sigma) from a seeded uniform source (Box-Muller). */
export function logNormal(random, mu, sigma) {
  const u1 = random() || 1e-12;
  const u2 = random();
  return Math.exp(mu + sigma * Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2));
}

export class SemaphoreServer {
  constructor(time, random, { concurrency = 2, meanMs = 20, mu = 3, sigma = 1 } = {}) {
    this.time = time;
    this.random = random;
    this.concurrency = concurrency;
    this.mu = mu;
    this.sigma = sigma;
    // The mean of LogNormal(mu, sigma) is exp(mu + sigma^2 / 2).
    this.scale = meanMs / Math.exp(mu + (sigma * sigma) / 2);
    this.queue = [];
    this.inService = new Set();
    this.pausedUntil = 0;
    this.served = 0;
  }

  /** Requests/s it serves when busy all the time. */
  get capacity() {
    return (this.concurrency * 1000) / (this.scale * Math.exp(this.mu + this.sigma ** 2 / 2));
  }

  /** Resolves when the request has been served (it never fails). */
  request() {
    return new Promise((resolve) => {
      this.queue.push(resolve);
      this.pump();
    });
  }

  pump() {
    if (this.time.now < this.pausedUntil) return;
    while (this.inService.size < this.concurrency && this.queue.length > 0) {
      this.serve(this.queue.shift());
    }
  }

  serve(resolve) {
    const job = { resolve, dueAt: 0, cancel: undefined };
    this.inService.add(job);
    this.schedule(job, this.time.now + this.scale * logNormal(this.random, this.mu, this.sigma));
  }

  schedule(job, dueAt) {
    job.dueAt = dueAt;
    job.cancel = this.time.clock.setTimer(() => {
      this.inService.delete(job);
      this.served++;
      job.resolve();
      this.pump();
    }, dueAt - this.time.now);
  }

  /** A pause of `ms` from now: every request in service ends `ms` later, none starts before. */
  stall(ms) {
    this.pausedUntil = this.time.now + ms;
    for (const job of this.inService) {
      job.cancel();
      this.schedule(job, job.dueAt + ms);
    }
    this.time.clock.setTimer(() => this.pump(), ms);
  }
}
