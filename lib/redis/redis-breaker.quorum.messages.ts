/**
 * The lines that say how many replicas must report a shared breaker open
 * before every replica opens it (its quorum): at start-up, and when the
 * quorum `'auto'` changes with the number of replicas that report.
 *
 * @internal
 */
export const redisBreakerQuorumMessages = {
  fixed: (quorum: number) => `${quorum}`,
  auto: (quorum: number, listed: number | undefined) =>
    listed === undefined
      ? `${quorum} (auto: the replicas that report are not counted yet)`
      : `${quorum} (auto: ${listed} ${listed === 1 ? 'replica reports' : 'replicas report'})`,
  group: (quorum: string, names: readonly string[], more: number) =>
    `${quorum} for ${names.map((name) => JSON.stringify(name)).join(', ')}${more > 0 ? ` and ${more} more` : ''}`,
  quorums: (groups: readonly string[]) =>
    `Shared breakers open on every replica once this many replicas report them open: ${groups.join('; ')}.`,
  autoChanged: (quorum: number, previous: number, listed: number, breakers: number) =>
    `Quorum 'auto' is now ${quorum} (was ${previous}) for ${breakers} shared ${breakers === 1 ? 'breaker' : 'breakers'}: ${listed} ${listed === 1 ? 'replica reports' : 'replicas report'}.`,
} as const;
