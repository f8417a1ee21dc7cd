// Virtual time for the protection simulator: one timer heap behind the global
// setTimeout/setInterval, Date.now and performance.now, so every implementation
// (opossum and cockatiel read the globals; this package is given `clock`) sees
// the same time, and an hour of traffic runs in seconds. An own loop rather than
// @sinonjs/fake-timers: no new dependency, and between two instants it drains
// the microtask queue with one real setImmediate, which fake-timers' tickAsync
// does per timer (one real timer each).

const EPOCH = Date.UTC(2026, 0, 1);

class Timer {
  constructor(id, at, fn, args, every) {
    this.id = id;
    this.at = at;
    this.fn = fn;
    this.args = args;
    this.every = every;
    this.cancelled = false;
  }
  ref() {
    return this;
  }
  unref() {
    return this;
  }
  hasRef() {
    return false;
  }
  refresh() {
    return this;
  }
  [Symbol.toPrimitive]() {
    return this.id;
  }
}

/** A binary heap of timers by due time, then by creation order. */
class TimerHeap {
  items = [];
  static before(a, b) {
    return a.at < b.at || (a.at === b.at && a.id < b.id);
  }
  push(timer) {
    const items = this.items;
    let i = items.push(timer) - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!TimerHeap.before(items[i], items[parent])) break;
      [items[i], items[parent]] = [items[parent], items[i]];
      i = parent;
    }
  }
  peek() {
    return this.items[0];
  }
  pop() {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0) {
      items[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < items.length && TimerHeap.before(items[l], items[m])) m = l;
        if (r < items.length && TimerHeap.before(items[r], items[m])) m = r;
        if (m === i) break;
        [items[i], items[m]] = [items[m], items[i]];
        i = m;
      }
    }
    return top;
  }
}

export class VirtualTime {
  /** Milliseconds since the start of the run. */
  now = 0;
  heap = new TimerHeap();
  byId = new Map();
  nextId = 1;
  saved = undefined;
  errors = [];

  /** The clock this package's breakers are given: the same time, and its timers. */
  clock = {
    now: () => EPOCH + Math.floor(this.now),
    monotonic: () => this.now,
    setTimer: (callback, delayMs) => {
      const timer = this.schedule(callback, [], delayMs, undefined);
      return () => this.cancel(timer);
    },
  };

  schedule(fn, args, delayMs, every) {
    const delay = Number.isFinite(delayMs) && delayMs > 0 ? delayMs : 0;
    const timer = new Timer(this.nextId++, this.now + delay, fn, args, every);
    this.heap.push(timer);
    this.byId.set(timer.id, timer);
    return timer;
  }

  cancel(handle) {
    const id = typeof handle === 'object' && handle !== null ? handle.id : handle;
    const timer = this.byId.get(id);
    if (timer === undefined) return;
    timer.cancelled = true;
    this.byId.delete(id);
  }

  /** Replaces the globals; `uninstall()` puts them back. */
  install() {
    const perf = globalThis.performance;
    this.saved = {
      setTimeout: globalThis.setTimeout,
      clearTimeout: globalThis.clearTimeout,
      setInterval: globalThis.setInterval,
      clearInterval: globalThis.clearInterval,
      dateNow: Date.now,
      perfNow: Object.getOwnPropertyDescriptor(perf, 'now'),
      setImmediate: globalThis.setImmediate,
    };
    globalThis.setTimeout = (fn, ms, ...args) => this.schedule(fn, args, ms, undefined);
    globalThis.setInterval = (fn, ms, ...args) =>
      this.schedule(fn, args, ms, Math.max(1, Number(ms) || 0));
    globalThis.clearTimeout = (handle) => this.cancel(handle);
    globalThis.clearInterval = (handle) => this.cancel(handle);
    Date.now = () => EPOCH + Math.floor(this.now);
    Object.defineProperty(perf, 'now', {
      value: () => this.now,
      configurable: true,
      writable: true,
    });
  }

  uninstall() {
    const saved = this.saved;
    if (saved === undefined) return;
    globalThis.setTimeout = saved.setTimeout;
    globalThis.clearTimeout = saved.clearTimeout;
    globalThis.setInterval = saved.setInterval;
    globalThis.clearInterval = saved.clearInterval;
    Date.now = saved.dateNow;
    if (saved.perfNow === undefined) delete globalThis.performance.now;
    else Object.defineProperty(globalThis.performance, 'now', saved.perfNow);
    this.saved = undefined;
  }

  /** Lets every promise chain settled so far run to its end (a real macrotask turn). */
  drain() {
    const immediate = this.saved?.setImmediate ?? globalThis.setImmediate;
    return new Promise((resolve) => immediate(resolve));
  }

  /** Runs every timer due up to `untilMs`, in time order, draining microtasks between instants. */
  async runUntil(untilMs) {
    await this.drain();
    for (;;) {
      const top = this.heap.peek();
      if (top === undefined || top.at > untilMs) break;
      if (top.cancelled) {
        // A cleared timer (most client timeouts are): no instant to run, no drain.
        this.heap.pop();
        continue;
      }
      const at = top.at;
      this.now = at;
      // Every timer of this instant, then one drain.
      while (this.heap.peek() !== undefined && this.heap.peek().at === at) {
        const timer = this.heap.pop();
        if (timer.cancelled) continue;
        if (timer.every === undefined) this.byId.delete(timer.id);
        else {
          timer.at = at + timer.every;
          this.heap.push(timer);
        }
        try {
          timer.fn(...timer.args);
        } catch (error) {
          this.errors.push(error);
        }
      }
      await this.drain();
    }
    this.now = Math.max(this.now, untilMs);
  }
}
