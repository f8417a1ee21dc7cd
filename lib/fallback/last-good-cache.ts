/**
 * The last good result per argument list, bounded in count (least recently
 * stored dropped first) and served only while fresh.
 *
 * @internal
 */
export class LastGoodCache {
  private readonly entries = new Map<string, { value: unknown; at: number }>();

  constructor(
    private readonly maxAgeMs: number,
    private readonly maxEntries: number,
  ) {}

  store(key: string, value: unknown, now: number): void {
    this.entries.delete(key);
    this.entries.set(key, { value, at: now });
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }

  /** The stored value if it is at most `maxAgeMs` old; stale entries are dropped. */
  lookup(key: string, now: number): { value: unknown } | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (now - entry.at > this.maxAgeMs) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }
}
