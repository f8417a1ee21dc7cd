/**
 * The store's lines about quorums (at start-up, how many replicas must report
 * each shared breaker open; later, when the quorum 'auto' changes with the
 * fleet): tests that count the outage and recovery lines leave them out.
 */
export const QUORUM_LINE =
  /^(Shared breakers open on every replica once this many replicas report them open: |Quorum 'auto' is now )/;

/** A logger's `log` that keeps every line but the quorum lines. */
export const keepingAllButQuorum =
  (lines: string[]) =>
  (message: string): void => {
    if (!QUORUM_LINE.test(message)) lines.push(message);
  };
