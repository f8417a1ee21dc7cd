// Shared state for scenario 9, in virtual time: a `BreakerCoordinator` (the
// engine's public port, the one the Redis store implements) that does what
// docs/many-replicas.md and docs/redis-store.md document, with no Redis in
// between. What is modelled:
//
// - a replica's own trip is a report; once `quorum` distinct replicas report
//   within their open periods (`'auto'`: 1 for a fleet of two, else 2), the
//   fleet is open until the latest reported open-until, and every other
//   replica adopts it (`adoptOpen`, reason `shared-open`) `delayMs` later
//   (2 ms: the median adoption measured across processes with 10 replicas);
// - one probe permit for the fleet: the first replica admitting a call after
//   the open period takes it, at once (the store asks for it when the period
//   ends, so the first calls already find the answer), for the half-open
//   period (`probeMaxWaitMs`); the others keep rejecting;
// - the holder's verdict reaches everyone `delayMs` later: a close closes
//   every replica (`adoptClosed`), a reopen (its probe failed) opens the
//   fleet again until its new open-until;
// - a replica that opened alone, short of the quorum, probes on its own.
// Not modelled: Redis round trips on the permit, the periodic reconcile, store
// outages, hydration, clock skew.

/** @param {{ quorum?: number | 'auto', delayMs?: number }} options */
export class FleetCoordinator {
  members = [];
  /** breaker -> its reported open-until (wall time). */
  reports = new Map();
  fleetOpen = false;
  fleetOpenUntil = 0;
  permitHolder = undefined;
  permitUntil = 0;

  constructor({ quorum = 'auto', delayMs = 2 } = {}) {
    this.quorumOption = quorum;
    this.delayMs = delayMs;
  }

  join(breaker) {
    this.members.push(breaker);
    return breaker;
  }

  quorum() {
    if (this.quorumOption !== 'auto') return this.quorumOption;
    return this.members.length <= 2 ? 1 : 2;
  }

  /** Runs `fn` on every replica but `origin`, after the propagation delay. */
  broadcast(origin, fn) {
    setTimeout(() => {
      for (const member of this.members) if (member !== origin) fn(member);
    }, this.delayMs);
  }

  transitioned(breaker, change) {
    const { from, to, reason } = change;
    if (to !== 'half-open' && this.permitHolder === breaker) this.permitHolder = undefined;
    // Adopted: the fleet already knows.
    if (reason === 'shared-open' || reason === 'shared-close') return;
    const now = breaker.clock.now();
    if (to === 'open' && (from === 'closed' || from === 'half-open')) {
      this.reports.set(breaker, change.openUntil ?? now);
      for (const [member, until] of this.reports) if (until <= now) this.reports.delete(member);
      const reopen = from === 'half-open' && this.fleetOpen;
      if (!reopen && this.reports.size < this.quorum()) return;
      this.fleetOpen = true;
      this.fleetOpenUntil = Math.max(...this.reports.values());
      const until = this.fleetOpenUntil;
      this.broadcast(undefined, (member) => member.adoptOpen(until));
    } else if (to === 'closed' && (from === 'half-open' || reason === 'health-check')) {
      if (!this.fleetOpen) {
        this.reports.delete(breaker);
        return;
      }
      this.fleetOpen = false;
      this.reports.clear();
      this.broadcast(breaker, (member) => member.adoptClosed(now));
    } else if (to === 'closed' && reason === 'reset') {
      this.reports.delete(breaker);
    }
  }

  mayProbe(breaker) {
    if (!this.fleetOpen) return true;
    if (this.permitHolder === breaker) return true;
    const now = breaker.clock.now();
    if (this.permitHolder !== undefined && now < this.permitUntil) return false;
    this.permitHolder = breaker;
    const { probeMaxWaitMs, maxProbes, maxConcurrentProbes } = breaker.config;
    this.permitUntil = now + probeMaxWaitMs * Math.ceil(maxProbes / maxConcurrentProbes);
    return true;
  }
}
