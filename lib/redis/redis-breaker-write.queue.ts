/**
 * The writes waiting to reach Redis: at most one per breaker (a newer
 * transition replaces an unwritten older one: what the fleet needs is the
 * breaker's latest state, not its history), at most `max` breakers. Past the
 * bound the oldest entry is dropped and counted; the store replays every
 * breaker's latest own transition when sharing resumes, so a drop delays a
 * signal, it does not lose the state.
 *
 * @internal
 */
export class WriteQueue<K, V> {
  private readonly entries = new Map<K, V>();
  /** Entries dropped because the queue was full. */
  dropped = 0;

  constructor(private readonly max: number) {}

  get size(): number {
    return this.entries.size;
  }

  push(key: K, value: V): void {
    // Delete first, so that a replaced entry moves to the back: the order is that of the latest writes.
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.max) {
      this.entries.delete(this.entries.keys().next().value as K);
      this.dropped++;
    }
  }

  /** Takes every entry, oldest first. */
  drain(): [K, V][] {
    const all = [...this.entries];
    this.entries.clear();
    return all;
  }

  clear(): void {
    this.entries.clear();
  }
}
