import type { ConcurrencyLimitSnapshot } from '../../core/index.js';

/**
 * The page's limiter line: each concurrency limiter of the application, its
 * limit now, the requests it holds and queues, and what it shed. Sent with
 * the page's script as its own source text, so it uses nothing from outside
 * its body; written as text, never parsed as HTML.
 *
 * @internal
 */
export function dashboardLimiterLine(
  box: HTMLElement,
  limiters: readonly ConcurrencyLimitSnapshot[] | undefined,
): void {
  box.hidden = limiters === undefined || limiters.length === 0;
  if (limiters === undefined) return;
  const list = document.createElement('ul');
  for (const limiter of limiters) {
    const item = document.createElement('li');
    item.dataset.limiter = limiter.name;
    item.dataset.shedding = String(limiter.shedding);
    item.textContent =
      `${limiter.name}: limit ${limiter.limit} (${limiter.algorithm}), ` +
      `${limiter.inFlight} in flight, ${limiter.queued} queued, ${limiter.shed} shed since start` +
      (limiter.shedding ? ', shedding now' : '');
    list.appendChild(item);
  }
  box.replaceChildren(list);
}
