import type { Redis } from 'ioredis';

/**
 * The commands a Redis server ran since its last `CONFIG RESETSTAT`, by name,
 * as Redis counts them (a script's own commands included), the test's own
 * `INFO` and `CONFIG` left out: what a reconcile or a report costs.
 */
export async function commandStats(admin: Redis): Promise<Record<string, number>> {
  const text = String(await admin.info('commandstats'));
  const calls: Record<string, number> = {};
  for (const [, name, n] of text.matchAll(/cmdstat_([a-z_|]+):calls=(\d+)/g))
    if (!name!.startsWith('info') && !name!.startsWith('config')) calls[name!] = Number(n);
  return calls;
}
