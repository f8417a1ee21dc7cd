import type { SharedBreaker } from './redis-breaker.coordinator.js';
import { redisBreakerQuorumMessages as messages } from './redis-breaker.quorum.messages.js';

/**
 * The quorum `'auto'` comes to while fewer than three replicas report, and
 * from three on. With two replicas a quorum of 2 means no sharing at all (each
 * opens on its own failures, the other keeps calling the dead dependency), and
 * one replica's evidence cannot be told from the fleet's anyway; from three
 * on, 2 keeps one replica with trouble of its own from opening the others,
 * and stays small enough that a large fleet still opens together early.
 *
 * @internal
 */
export const AUTO_QUORUM = Object.freeze({ few: 1, many: 2, fewUpTo: 2 });

/**
 * The number of reports that open the fleet for `record`: its quorum, or for
 * `'auto'` one from `listed`, the replicas the registry listed at this
 * replica's last report (itself included). Not counted yet (before the first
 * report answers, or while Redis is unreachable): the larger one, so that a
 * replica that knows nothing of the fleet never opens it alone.
 *
 * @internal
 */
export function quorumOf(
  record: Pick<SharedBreaker, 'quorum'>,
  listed: number | undefined,
): number {
  if (record.quorum !== 'auto') return record.quorum;
  return listed !== undefined && listed <= AUTO_QUORUM.fewUpTo ? AUTO_QUORUM.few : AUTO_QUORUM.many;
}

/** Whether `record`'s quorum is `'auto'`. @internal */
export function isAuto(record: Pick<SharedBreaker, 'quorum'>): boolean {
  return record.quorum === 'auto';
}

/**
 * Lua, for the open script: `quorum`, the quorum of this write. The writer
 * sends its own (ARGV[4]: a fixed quorum, or what `'auto'` came to at its last
 * report). For `'auto'` (ARGV[9] = '1') with the registry in reach (`KEYS[6]`,
 * the sorted set of replicas that report) the replicas listed now count too,
 * and the larger quorum wins: a replica that started before the others (its
 * count is low until its next report) and a registry that Redis lost (a
 * restart: only the first replicas to report again are listed) each ask for
 * too few reports alone. Too many only waits for more reports. A registry
 * that is no sorted set leaves the writer's number.
 *
 * @internal
 */
export const QUORUM_LUA = `
local quorum = tonumber(ARGV[4])
if ARGV[9] == '1' and KEYS[6] and redis.call('TYPE', KEYS[6]).ok == 'zset' then
  local listed = redis.call('ZCARD', KEYS[6])
  quorum = math.max(quorum, listed <= ${AUTO_QUORUM.fewUpTo} and ${AUTO_QUORUM.few} or ${AUTO_QUORUM.many})
end
`;

/** The most breaker names one line lists per quorum; the rest are counted. */
const NAMES_PER_LINE = 20;

/**
 * The log line that says, per shared breaker, how many reports open the
 * fleet: one group per quorum, names listed up to `NAMES_PER_LINE`.
 * `undefined` when there is no shared breaker.
 *
 * @internal
 */
export function quorumLine(
  records: readonly SharedBreaker[],
  listed: number | undefined,
): string | undefined {
  if (records.length === 0) return undefined;
  const groups = new Map<string, string[]>();
  for (const record of records) {
    const quorum = quorumOf(record, listed);
    const key = record.quorum === 'auto' ? messages.auto(quorum, listed) : messages.fixed(quorum);
    const names = groups.get(key) ?? [];
    names.push(record.name);
    groups.set(key, names);
  }
  return messages.quorums(
    [...groups].map(([quorum, names]) =>
      messages.group(quorum, names.slice(0, NAMES_PER_LINE), names.length - NAMES_PER_LINE),
    ),
  );
}

/**
 * The store's log of quorums: one line at start-up (`quorumLine`), then one
 * each time the quorum `'auto'` comes to another number as the fleet grows or
 * shrinks.
 *
 * @internal
 */
export class QuorumLog {
  /** What `'auto'` came to when last logged; `undefined` before start-up. */
  private auto: number | undefined;

  constructor(private readonly logger: { log(message: string): void } | undefined) {}

  /** Start-up: the line for the breakers just hydrated. */
  started(records: readonly SharedBreaker[], listed: number | undefined): void {
    const line = quorumLine(records, listed);
    if (line === undefined) return;
    this.logger?.log(line);
    this.auto = quorumOf({ quorum: 'auto' }, listed);
  }

  /** A report answered with `listed` replicas: a line if `'auto'` now comes to another number for some breaker. */
  counted(records: readonly SharedBreaker[], listed: number | undefined): void {
    if (this.auto === undefined || listed === undefined) return;
    const auto = quorumOf({ quorum: 'auto' }, listed);
    if (auto === this.auto) return;
    const breakers = records.filter((record) => record.quorum === 'auto').length;
    if (breakers > 0) this.logger?.log(messages.autoChanged(auto, this.auto, listed, breakers));
    this.auto = auto;
  }
}
