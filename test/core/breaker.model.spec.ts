import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Breaker, isCallRejected, type BreakerOptions } from '../../lib/core/index.js';
import { deferred } from '../helpers/deferred.js';
import { ManualClock } from '../helpers/manual-clock.js';

/**
 * A reference model of the engine's rules, written for this test in the
 * plainest way: arrays instead of ring buffers, ratios recomputed from scratch,
 * probes looked up by id. Random command sequences run against both; any
 * divergence fails with the shrunk sequence.
 */
interface ModelConfig {
  windowSize: number;
  minimumThroughput: number;
  threshold: number;
  consecutive: number | undefined;
  rateRule: boolean;
  openDurationMs: number;
  multiplier: number;
  maxMs: number;
  maxProbes: number;
  maxConcurrent: number;
  successesToClose: number;
  maxWaitMs: number;
}

type Outcome = 's' | 'f' | 'i';
type Ticket = { gen: number; order: number; probeId?: number };

class ModelBreaker {
  state: 'closed' | 'open' | 'half-open' | 'isolated' = 'closed';
  gen = 0;
  openUntil = 0;
  reopens = 0;
  outcomes: Outcome[] = [];
  streak = 0;
  /** Calls admitted so far; the order of the streak's first failing call. */
  admitted = 0;
  streakStart = 0;
  probes: { id: number; start: number }[] = [];
  probesAdmitted = 0;
  probeSuccesses = 0;
  probeFailures = 0;
  nextProbeId = 1;

  constructor(private readonly c: ModelConfig) {}

  tick(now: number): void {
    if (this.state === 'open' && now >= this.openUntil) this.to('half-open', now);
    while (
      this.state === 'half-open' &&
      this.probes.length > 0 &&
      now - this.probes[0]!.start >= this.c.maxWaitMs
    ) {
      // A lazy expiry happened when the probe was due: a reopening's open period starts then.
      const expired = this.probes.shift()!;
      this.probeFailed(expired.start + this.c.maxWaitMs);
    }
    // ...and may be over already.
    if (this.state === 'open' && now >= this.openUntil) this.to('half-open', now);
  }

  admit(now: number): Ticket | string {
    if (this.state === 'isolated') return 'isolated';
    if (this.state === 'closed') return { gen: this.gen, order: this.admitted++ };
    this.tick(now);
    if (this.state === 'open') return 'open';
    if (this.probesAdmitted >= this.c.maxProbes || this.probes.length >= this.c.maxConcurrent)
      return 'half-open-busy';
    this.probesAdmitted++;
    const id = this.nextProbeId++;
    this.probes.push({ id, start: now });
    return { gen: this.gen, order: this.admitted++, probeId: id };
  }

  settle(ticket: Ticket, outcome: Outcome, now: number): void {
    if (ticket.probeId !== undefined) {
      const index = this.probes.findIndex((p) => p.id === ticket.probeId);
      if (index === -1) return;
      this.probes.splice(index, 1);
      if (outcome === 'i') {
        this.probesAdmitted--;
      } else if (outcome === 's') {
        if (++this.probeSuccesses >= this.c.successesToClose) this.to('closed', now);
      } else {
        this.probeFailed(now);
      }
      return;
    }
    if (outcome === 'i' || ticket.gen !== this.gen || this.state !== 'closed') return;
    this.outcomes.push(outcome);
    if (this.outcomes.length > this.c.windowSize) this.outcomes.shift();
    // Beside the rate rule, a call admitted before the streak's first failing call neither ends nor
    // extends it; the streak rule alone counts every call.
    const current = ticket.order >= this.streakStart || !this.c.rateRule;
    if (outcome === 's') {
      if (current) this.streak = 0;
    } else if (this.streak === 0) {
      this.streakStart = ticket.order;
      this.streak = 1;
    } else if (current) this.streak++;
    const failures = this.outcomes.filter((o) => o === 'f').length;
    if (this.c.consecutive !== undefined && this.streak >= this.c.consecutive) this.to('open', now);
    else if (
      this.c.rateRule &&
      this.outcomes.length >= this.c.minimumThroughput &&
      failures / this.outcomes.length >= this.c.threshold
    ) {
      this.to('open', now);
    }
  }

  reset(now: number): void {
    if (this.state !== 'closed') this.to('closed', now);
    else {
      this.gen++;
      this.outcomes = [];
      this.streak = 0;
      this.reopens = 0;
    }
  }

  /** `isolate()` is `force('open')`: every call of it is a transition, even from isolated. */
  isolate(now: number): void {
    this.to('isolated', now);
  }

  private probeFailed(now: number): void {
    this.probeFailures++;
    if (this.c.maxProbes - this.probeFailures < this.c.successesToClose) this.to('open', now);
  }

  private to(state: ModelBreaker['state'], now: number): void {
    if (state === 'open') {
      if (this.state === 'half-open') this.reopens++;
      this.openUntil =
        now + Math.min(this.c.openDurationMs * this.c.multiplier ** this.reopens, this.c.maxMs);
      this.outcomes = [];
    }
    if (state === 'closed') {
      this.reopens = 0;
      this.outcomes = [];
    }
    if (state === 'half-open') this.probesAdmitted = this.probeSuccesses = this.probeFailures = 0;
    this.probes = [];
    this.streak = 0;
    this.gen++;
    this.state = state;
  }
}

type Command =
  | { kind: 'call' }
  | { kind: 'settle'; pick: number; outcome: Outcome }
  | { kind: 'advance'; ms: number }
  | { kind: 'isolate' }
  | { kind: 'reset' };

const configArb: fc.Arbitrary<ModelConfig> = fc
  .record({
    windowSize: fc.integer({ min: 1, max: 8 }),
    minimumThroughputSeed: fc.integer({ min: 1, max: 8 }),
    threshold: fc.constantFrom(0.1, 0.3, 0.5, 0.55, 0.7, 1),
    consecutive: fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }),
    explicitRate: fc.boolean(),
    openDurationMs: fc.integer({ min: 1, max: 500 }),
    multiplier: fc.constantFrom(1, 2),
    maxMsFactor: fc.constantFrom(1, 3, 1000),
    maxProbes: fc.integer({ min: 1, max: 3 }),
    concurrentSeed: fc.integer({ min: 1, max: 3 }),
    successesSeed: fc.integer({ min: 1, max: 3 }),
    maxWaitMs: fc.integer({ min: 1, max: 800 }),
  })
  .map((r) => ({
    // The consecutive-only model passes no window: the engine keeps its default of 100 for telemetry.
    windowSize: r.consecutive !== undefined && !r.explicitRate ? 100 : r.windowSize,
    minimumThroughput: Math.min(r.minimumThroughputSeed, r.windowSize),
    threshold: r.threshold,
    consecutive: r.consecutive,
    rateRule: r.consecutive === undefined || r.explicitRate,
    openDurationMs: r.openDurationMs,
    multiplier: r.multiplier,
    maxMs: r.openDurationMs * r.maxMsFactor,
    maxProbes: r.maxProbes,
    maxConcurrent: Math.min(r.concurrentSeed, r.maxProbes),
    successesToClose: Math.min(r.successesSeed, r.maxProbes),
    maxWaitMs: r.maxWaitMs,
  }));

const commandArb: fc.Arbitrary<Command> = fc.oneof(
  { weight: 5, arbitrary: fc.constant({ kind: 'call' as const }) },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('settle' as const),
      pick: fc.nat(),
      outcome: fc.constantFrom<Outcome>('s', 'f', 'f', 'i'),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('advance' as const),
      ms: fc.integer({ min: 1, max: 600 }),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'isolate' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'reset' as const }) },
);

function toOptions(c: ModelConfig): BreakerOptions {
  return {
    ...(c.rateRule || c.consecutive === undefined
      ? {
          window: { type: 'count', size: c.windowSize },
          minimumThroughput: c.minimumThroughput,
          failureRateThreshold: c.threshold,
        }
      : {}),
    ...(c.consecutive !== undefined ? { consecutiveFailures: c.consecutive } : {}),
    openDurationMs: c.openDurationMs,
    backoff: { multiplier: c.multiplier, maxMs: c.maxMs },
    halfOpen: {
      maxProbes: c.maxProbes,
      maxConcurrent: c.maxConcurrent,
      successesToClose: c.successesToClose,
      maxWaitMs: c.maxWaitMs,
    },
    classify: (error) => ((error as Error).message === 'ignored' ? 'ignored' : 'failure'),
  };
}

const flushMicrotasks = async () => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};

async function runAgainstModel(config: ModelConfig, commands: Command[]): Promise<void> {
  const clock = new ManualClock(10_000);
  const breaker = new Breaker('model', toOptions(config), { clock });
  const model = new ModelBreaker(config);
  const pending: { ticket: Ticket; settle: (o: Outcome) => void; done: Promise<unknown> }[] = [];

  for (const [step, command] of commands.entries()) {
    const now = clock.now();
    const where = `step ${step} ${JSON.stringify(command)}`;
    switch (command.kind) {
      case 'call': {
        const expected = model.admit(now);
        const d = deferred<string>();
        let admitted = false;
        const done = breaker
          .execute(() => {
            admitted = true;
            return d.promise;
          })
          .catch((error: unknown) => error);
        if (typeof expected === 'string') {
          expect(admitted, where).toBe(false);
          const error = await done;
          expect(isCallRejected(error), where).toBe(true);
          expect((error as { reason: string }).reason, where).toBe(expected);
        } else {
          expect(admitted, where).toBe(true);
          pending.push({
            ticket: expected,
            settle: (o) =>
              o === 's' ? d.resolve('ok') : d.reject(new Error(o === 'i' ? 'ignored' : 'failed')),
            done,
          });
        }
        break;
      }
      case 'settle': {
        if (pending.length === 0) break;
        const [call] = pending.splice(command.pick % pending.length, 1);
        call!.settle(command.outcome);
        await flushMicrotasks();
        model.settle(call!.ticket, command.outcome, now);
        break;
      }
      case 'advance':
        clock.advance(command.ms);
        break;
      case 'isolate':
        breaker.isolate();
        model.isolate(now);
        break;
      case 'reset':
        breaker.reset();
        model.reset(now);
        break;
    }
    model.tick(clock.now());
    const snapshot = breaker.snapshot();
    expect(snapshot.state, where).toBe(model.state);
    expect(snapshot.generation, where).toBe(model.gen);
    if (model.state === 'open') expect(snapshot.openUntil, where).toBe(model.openUntil);
    if (model.state === 'closed') {
      expect(snapshot.window.calls, where).toBe(model.outcomes.length);
      expect(snapshot.window.failures, where).toBe(model.outcomes.filter((o) => o === 'f').length);
    }
    if (model.state === 'half-open') {
      expect(snapshot.halfOpen, where).toEqual({
        probesAdmitted: model.probesAdmitted,
        probesInFlight: model.probes.length,
        probesSucceeded: model.probeSuccesses,
        probesFailed: model.probeFailures,
      });
    }
  }
  // No caller is left with a promise that never settles once its call settles.
  for (const call of pending) call.settle('s');
  await Promise.all(pending.map((p) => p.done));
}

describe('Breaker against a reference model', () => {
  it('agrees on admissions, states, generations, windows and probe budgets for random call sequences', async () => {
    await fc.assert(
      fc.asyncProperty(
        configArb,
        fc.array(commandArb, { minLength: 1, maxLength: 60 }),
        (config, commands) => runAgainstModel(config, commands),
      ),
      { seed: 20261130, numRuns: 1000 },
    );
  });
});
