import { describe, expect, it } from 'vitest';
import { WriteQueue } from '../../lib/redis/redis-breaker-write.queue.js';

describe('WriteQueue', () => {
  it('keeps one entry per breaker, the latest, in the order of the latest writes', () => {
    const queue = new WriteQueue<string, number>(10);
    queue.push('a', 1);
    queue.push('b', 2);
    queue.push('a', 3);
    expect(queue.drain()).toEqual([
      ['b', 2],
      ['a', 3],
    ]);
    expect(queue.size).toBe(0);
  });

  it('drops the oldest entry past its bound, and counts it', () => {
    const queue = new WriteQueue<string, number>(2);
    queue.push('a', 1);
    queue.push('b', 2);
    queue.push('c', 3);
    expect(queue.dropped).toBe(1);
    expect(queue.drain()).toEqual([
      ['b', 2],
      ['c', 3],
    ]);
  });
});
