import {
  Breaker,
  CallTimeoutError,
  defaultClassifyError,
  FAMILY_OVERFLOW_KEY,
  InjectedFaultError,
  isCallRejected,
  withRetry,
  type BreakerOptions,
  type CallRejectedError,
  type Clock,
  type InjectedFault,
} from '../../lib/core/index.js';
import { getCallSignal } from '../../lib/call-signal.js';
import { REGISTRY_PROPERTY } from '../../lib/circuit-breaker.constants.js';
import { CircuitBreaker } from '../../lib/decorators/circuit-breaker.decorator.js';

/**
 * One run of the combination suite (test/combinations.property.spec.ts): a
 * whole configuration and a hostile sequence of steps against the public
 * engine API (or the `@CircuitBreaker()` decorator's path, for fallbacks),
 * on one fake clock that drives the breaker's clock, its deadlines, the
 * bulkhead's queue, health checks and the retry's waits alike. It returns
 * every violation of the invariants, each under its invariant's name.
 */

export type Outcome = 's' | 'f' | 'i';

export interface Combination {
  window: { type: 'count'; size: number } | { type: 'time'; durationMs: number; buckets: number };
  /** Whether the failure-rate rule is on (always, without `consecutive`). */
  rate: boolean;
  minimumThroughput: number;
  failureRateThreshold: number;
  consecutive: number | undefined;
  timeoutMs: number | false;
  openDurationMs: number;
  jitter: number;
  halfOpen: {
    maxProbes: number;
    maxConcurrent: number;
    successesToClose: number;
    maxWaitMs: number;
  };
  /** With `algorithm`, an adaptive cap from `maxConcurrent` up to `maxLimit` (what the invariants hold it to). */
  bulkhead:
    | {
        maxConcurrent: number;
        maxQueue: number;
        queueTimeoutMs: number;
        algorithm?: 'gradient' | 'aimd';
        maxLimit?: number;
      }
    | undefined;
  rampUp: { durationMs: number; initialRatio: number } | undefined;
  /** The health check's answers, in turn (true: healthy). */
  healthCheck:
    { intervalMs: number; healthy: boolean[]; onSuccess: 'half-open' | 'closed' } | undefined;
  perKey: { maxKeys: number; idleMs: number | undefined } | undefined;
  retry:
    | {
        attempts: number;
        initialMs: number;
        budget: false | { ratio: number; minPerSecond: number };
      }
    | undefined;
  /** `engine`: execute()/withRetry() with the caller's signal; `decorator`: a method under @CircuitBreaker(). */
  front: 'engine' | 'decorator';
  fallback: boolean;
  /** `hostile`: the random sources (the breaker's, an injected fault's) now and then answer outside [0, 1) (NaN, 1, Infinity, -1) or throw. */
  random: 'fair' | 'hostile';
  seed: number;
}

export type Control =
  'force-open' | 'force-closed' | 'force-disabled' | 'release' | 'reset' | 'isolate' | 'disable';

export type Step =
  | { do: 'call'; key: number; signal: boolean }
  | { do: 'settle'; pick: number; outcome: Outcome }
  | { do: 'abort'; pick: number }
  /** Settles a running call (freeing its slot) and, `depth` microtasks later, aborts a waiting caller or makes a call. */
  | { do: 'handover'; pick: number; next: 'abort' | 'call'; target: number; depth: number }
  | { do: 'advance'; ms: number }
  | { do: 'control'; what: Control }
  | { do: 'reconfigure'; variant: number }
  /** A made-up failure for a share of calls (`rate`, drawn from the run's random source), or its removal. */
  | { do: 'inject'; rate: number | undefined };

export const INVARIANTS = [
  'every caller settles exactly once',
  "a caller's abort reaches its call",
  'the probe budget is never exceeded',
  'the bulkhead cap is never exceeded',
  'the retry budget is never exceeded',
  'a local refusal never counts as a dependency failure',
  'a fallback answers exactly the calls counted failed or refused',
  'the reported state matches the admission the next call gets',
  'totals add up',
] as const;
export type Invariant = (typeof INVARIANTS)[number];

export interface Violation {
  invariant: Invariant;
  detail: string;
}

export const KEYS = ['a', 'b', 'c', 'd', 'e'];
const FALLBACK = 'served by the fallback';
const IGNORED = 'ignored';

interface Invocation {
  caller: Caller;
  key: string;
  /** Let through a breaker forced `disabled`: no slot, no count, no deadline. */
  exempt: boolean;
  /** The breakers that admitted it as a half-open probe (a child's, its family's gate). */
  probeOf: Breaker[];
  signal: AbortSignal | undefined;
  /** What ended it first: our answer, its deadline, or its caller's abort. */
  ended: Outcome | 'deadline' | 'caller' | undefined;
  /** When it ended, in the run's order of events (`order()`), which also orders events of one millisecond. */
  endedAt: number;
  error: unknown;
  answer(outcome: Outcome): void;
}

interface Caller {
  id: number;
  key: string;
  /** The breaker its calls go through (a family's child as it was when the call began). */
  target: Breaker | undefined;
  attemptsAllowed: number;
  controller: AbortController | undefined;
  /** When its caller gave up, in the run's order of events. */
  abortedAt: number | undefined;
  invocations: Invocation[];
  settled: number;
  result: { ok: boolean; value: unknown } | undefined;
  fallbackErrors: unknown[];
  refusal: CallRejectedError['reason'] | undefined;
}

interface Retained {
  breaker: Breaker;
  key: string;
  failures: number;
  rejections: number;
  /** The retry budget's deposits and withdrawals (times), for this breaker's own budget. */
  deposits: number[];
  retries: number[];
  budgetStart: number | undefined;
}

/** 2026-01-01T00:00:00Z, where every run's clock starts. */
export const START = 1_767_225_600_000;

/** The one clock of a run: vitest's fake timers, which also move the retry's waits and the bulkhead's queue. */
const fakeClock: Clock = {
  now: () => Date.now(),
  setTimer(callback, delayMs) {
    const handle = setTimeout(callback, delayMs);
    return () => clearTimeout(handle);
  },
};

const settleMicrotasks = async (n = 12): Promise<void> => {
  for (let i = 0; i < n; i++) await Promise.resolve();
};

function randomSource(c: Combination): () => number {
  let state = c.seed >>> 0 || 1;
  let draws = 0;
  const hostile = [Number.NaN, 1, Number.POSITIVE_INFINITY, -1, 'throw'] as const;
  return () => {
    draws++;
    if (c.random === 'hostile' && draws % 3 === 0) {
      const answer = hostile[(draws / 3) % hostile.length]!;
      if (answer === 'throw') throw new Error('the random source broke');
      return answer;
    }
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    return state / 2 ** 32;
  };
}

/** A combination's bulkhead as options; `flip` (a reconfiguration) turns a fixed cap adaptive and back. */
function bulkheadOf(
  b: NonNullable<Combination['bulkhead']>,
  flip: boolean,
): NonNullable<BreakerOptions['bulkhead']> {
  const { maxConcurrent, maxQueue, queueTimeoutMs } = b;
  if ((b.algorithm !== undefined) === flip) return { maxConcurrent, maxQueue, queueTimeoutMs };
  return {
    algorithm: b.algorithm ?? 'aimd',
    initialLimit: maxConcurrent,
    minLimit: 1,
    maxLimit: capOf(b),
    maxQueue,
    queueTimeoutMs,
  };
}

/** The most calls a combination's bulkhead may hold at once: its fixed cap, or its adaptive cap's `maxLimit`. */
function capOf(b: NonNullable<Combination['bulkhead']>): number {
  return b.maxLimit ?? b.maxConcurrent;
}

/** The options of a configuration; `variant` is what a mid-run `reconfigure()` changes. */
export function optionsOf(
  c: Combination,
  variant: number,
  healthCheckFn?: () => unknown,
): BreakerOptions {
  const flip = variant === 2;
  const window: BreakerOptions['window'] = flip
    ? c.window.type === 'count'
      ? { type: 'time', durationMs: 1_000, buckets: 4 }
      : { type: 'count', size: 5 }
    : c.window;
  const rate = variant === 3 ? !c.rate || c.consecutive === undefined : c.rate;
  const consecutive = variant === 3 && c.consecutive === undefined ? 2 : c.consecutive;
  return {
    ...(rate || consecutive === undefined
      ? {
          window,
          // Never more than a count window holds (refused at start-up).
          minimumThroughput:
            variant === 1
              ? 1
              : Math.min(c.minimumThroughput, window.type === 'count' ? window.size : Infinity),
          failureRateThreshold: variant === 1 ? 1 : c.failureRateThreshold,
        }
      : {}),
    ...(consecutive === undefined ? {} : { consecutiveFailures: consecutive }),
    timeoutMs: variant === 1 && c.timeoutMs !== false ? c.timeoutMs * 2 : c.timeoutMs,
    openDurationMs: variant === 1 ? c.openDurationMs * 2 : c.openDurationMs,
    jitter: c.jitter,
    halfOpen: c.halfOpen,
    classify: (error) =>
      error instanceof Error && error.message === IGNORED ? 'ignored' : defaultClassifyError(error),
    ...(c.bulkhead === undefined ? {} : { bulkhead: bulkheadOf(c.bulkhead, flip) }),
    ...(c.rampUp === undefined ? {} : { rampUp: c.rampUp }),
    ...(c.healthCheck === undefined || healthCheckFn === undefined
      ? {}
      : {
          healthCheck: {
            fn: healthCheckFn,
            intervalMs: c.healthCheck.intervalMs,
            onSuccess: c.healthCheck.onSuccess,
          },
        }),
    ...(c.perKey === undefined
      ? {}
      : {
          perKey: {
            maxKeys: c.perKey.maxKeys,
            ...(c.perKey.idleMs === undefined ? {} : { idleMs: c.perKey.idleMs }),
          },
        }),
  };
}

/** `log`: a trace of every step, call and event, to read a counterexample with. */
export async function runCombination(
  c: Combination,
  steps: Step[],
  log?: (line: string) => void,
): Promise<{ violations: Violation[] }> {
  const violations: Violation[] = [];
  const fail = (invariant: Invariant, detail: string) => violations.push({ invariant, detail });
  let healthCheckRuns = 0;
  const healthCheckFn = () => {
    const healthy = c.healthCheck!.healthy[healthCheckRuns++ % c.healthCheck!.healthy.length];
    return healthy ? 'ok' : Promise.reject(new Error('still down'));
  };
  const deps = {
    clock: fakeClock,
    random: randomSource(c),
    reportError: () => undefined,
    faultInjection: true,
  };
  const faults: InjectedFault[] = [];
  const root = new Breaker('combo', optionsOf(c, 0, healthCheckFn), deps);
  const retained: Retained[] = [];
  const retain = (breaker: Breaker, key: string): Retained => {
    const r: Retained = {
      breaker,
      key,
      failures: 0,
      rejections: 0,
      deposits: [],
      retries: [],
      budgetStart: undefined,
    };
    breaker.on('failure', () => r.failures++);
    breaker.on('rejected', () => r.rejections++);
    breaker.on('probe', (event) => {
      if (event.result === 'admitted') probesAdmitted.push(breaker);
      else probesAdmitted.length = 0;
    });
    breaker.on('failure', (event) => {
      if (event.probe && event.category === 'timeout') probeExpired(breaker, event.error);
    });
    if (log !== undefined)
      for (const event of [
        'stateChange',
        'success',
        'failure',
        'ignored',
        'rejected',
        'timeout',
        'probe',
        'fallback',
        'retry',
      ] as const)
        breaker.on(event, (e) =>
          log(`${Date.now() - START} ${breaker.name} ${event} ${describe(e)}`),
        );
    breaker.on('retry', (event) => {
      if (event.result !== 'scheduled' || c.retry === undefined || c.retry.budget === false) return;
      r.retries.push(Date.now());
      checkRetryBudget(r, c.retry.budget, fail);
    });
    retained.push(r);
    return r;
  };
  const rootRecord = retain(root, '');
  const byBreaker = new Map<Breaker, Retained>([[root, rootRecord]]);
  root.onChild((child) => byBreaker.set(child, retain(child, child.key ?? '')));

  let events = 0;
  const order = () => ++events;
  const callers: Caller[] = [];
  const invocations: Invocation[] = [];
  // The breakers that admitted a probe since the dependency was last reached: admission runs the call in the same tick.
  const probesAdmitted: Breaker[] = [];
  /**
   * A probe unsettled after `halfOpen.maxWaitMs` is counted failed (category `timeout`): the breaker's own
   * deadline, as `timeoutMs` is. The model once counted only a deadline that aborted the call's signal, and a
   * call without one (no `timeoutMs`, no caller's signal) still ran, so the expiry looked like a local
   * refusal counted as a failure, and its fallback like one for a call that succeeded. The probes of a round
   * share one `maxWaitMs`: the one that expires is its breaker's earliest still running.
   */
  const probeExpired = (breaker: Breaker, error: unknown) => {
    // A deadline that aborted its call's signal (its own `timeoutMs`, or an expiry) was seen as it came.
    if (invocations.some((i) => i.error === error)) return;
    const probe = invocations.find((i) => i.probeOf.includes(breaker) && i.ended === undefined);
    if (probe === undefined) return;
    probe.ended = 'deadline';
    probe.endedAt = order();
    probe.error = error;
  };
  const running = () => invocations.filter((i) => i.ended === undefined);

  /**
   * The breaker a call on `target` runs on: a retry's next attempt goes to its key's child as it is then
   * (`rejoined()`), not to the child its caller began on if the family evicted that one meanwhile; the model
   * once read the first child's forced state, and took an attempt let through by the new one for a capped call.
   */
  const runsOn = (target: Breaker): Breaker => {
    const held = [...root.children()];
    if (target === root || held.includes(target)) return target;
    return (
      held.find((k) => k.key === target.key) ??
      held.find((k) => k.key === FAMILY_OVERFLOW_KEY) ??
      target
    );
  };

  // What the dependency does: a call that waits until the step that answers it.
  const dependency = (
    caller: Caller,
    key: string,
    target: Breaker,
    signal: AbortSignal | undefined,
  ) => {
    let resolve!: (v: string) => void;
    let reject!: (e: unknown) => void;
    const promise = new Promise<string>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    const invocation: Invocation = {
      caller,
      key,
      // A first attempt runs on its caller's child, even one evicted while the call waited for a slot.
      exempt:
        (caller.invocations.length === 0 ? target : runsOn(target)).snapshot().forced?.state ===
        'disabled',
      probeOf: probesAdmitted.splice(0),
      signal,
      ended: undefined,
      endedAt: 0,
      error: undefined,
      answer(outcome) {
        if (this.ended === undefined) {
          this.ended = outcome;
          this.endedAt = order();
        }
        if (outcome === 's') resolve('ok');
        else reject((this.error = new Error(outcome === 'i' ? IGNORED : 'dependency failed')));
      },
    };
    signal?.addEventListener('abort', () => {
      if (invocation.ended !== undefined) return;
      invocation.ended = signal.reason instanceof CallTimeoutError ? 'deadline' : 'caller';
      invocation.endedAt = order();
      invocation.error = signal.reason;
    });
    caller.invocations.push(invocation);
    log?.(
      `${Date.now() - START} caller ${caller.id} reaches the dependency (${key}${invocation.exempt ? ', uncounted' : ''})`,
    );
    invocations.push(invocation);
    return promise;
  };

  const targetOf = (key: string): Breaker => (c.perKey === undefined ? root : root.forKey(key));

  // The decorator's path: a class whose method is decorated at run time, with a registry that resolves to `root`.
  const method = decorated(
    c,
    (callerId) => {
      const caller = callers[callerId]!;
      return dependency(caller, caller.key, caller.target!, getCallSignal());
    },
    (error, callerId) => {
      callers[callerId as number]!.fallbackErrors.push(error);
      return FALLBACK;
    },
    // The decorator asks for the key, then takes forKey(key): the same child this looks up first.
    (callerId) => {
      const caller = callers[callerId]!;
      caller.target = root.forKey(caller.key);
      return caller.key;
    },
  );
  const instance = Object.assign(Object.create(method.prototype) as Record<PropertyKey, unknown>, {
    [REGISTRY_PROPERTY]: { orchestrator: { resolve: () => root } },
  });

  const startCall = async (keyIndex: number, withSignal: boolean): Promise<void> => {
    const key = KEYS[keyIndex % KEYS.length]!;
    const peek = c.perKey === undefined ? root.peek() : root.peekKey(key);
    const stateBefore = c.perKey === undefined ? root.state : undefined;
    if (stateBefore !== undefined && stateBefore !== peek.state)
      fail(
        'the reported state matches the admission the next call gets',
        `peek() said ${peek.state}, state said ${stateBefore}`,
      );
    const caller: Caller = {
      id: callers.length,
      key,
      target: c.front === 'engine' || c.perKey === undefined ? targetOf(key) : undefined,
      attemptsAllowed: c.retry?.attempts ?? 1,
      controller: c.front === 'engine' && withSignal ? new AbortController() : undefined,
      abortedAt: undefined,
      invocations: [],
      settled: 0,
      result: undefined,
      fallbackErrors: [],
      refusal: undefined,
    };
    callers.push(caller);
    const record = (ok: boolean, value: unknown) => {
      log?.(
        `${Date.now() - START} caller ${caller.id} settles: ${ok ? 'value' : 'error'} ${value instanceof Error ? value.message : String(value)}`,
      );
      caller.settled++;
      caller.result ??= { ok, value };
      if (!ok && isCallRejected(value)) caller.refusal ??= (value as CallRejectedError).reason;
    };
    const queuedBefore = queuedOn(root, key, c);
    let promise: Promise<unknown>;
    try {
      if (c.front === 'decorator') {
        promise = (instance.call as (id: number) => Promise<unknown>)(caller.id);
      } else {
        const target = caller.target!;
        const own = byBreaker.get(target)!;
        const signal = caller.controller?.signal;
        const fn = ({ signal: s }: { signal?: AbortSignal }) => dependency(caller, key, target, s);
        if (c.retry === undefined) promise = target.execute(fn, { signal });
        else {
          own.budgetStart ??= Date.now();
          own.deposits.push(Date.now());
          promise = withRetry(target, retryOptions(c)).execute(fn, { signal });
        }
      }
    } catch (error) {
      // execute() answers with a promise: a throw after admission leaves whatever it took (a probe permit, a slot).
      fail(
        'every caller settles exactly once',
        `caller ${caller.id}'s call threw synchronously: ${error instanceof Error ? error.message : String(error)}`,
      );
      promise = Promise.reject(error);
    }
    if (c.front === 'decorator' && c.retry !== undefined) {
      const own = byBreaker.get(caller.target!)!;
      own.budgetStart ??= Date.now();
      own.deposits.push(Date.now());
    }
    // A call that waits for a bulkhead slot was admitted to the queue: what happens to it later is not its admission.
    const queued = queuedOn(root, key, c) > queuedBefore;
    promise.then(
      (value) => record(true, value),
      (error: unknown) => record(false, error),
    );
    await settleMicrotasks();
    // The admission the call got, against what peek() said a moment before.
    const refusedAtOnce =
      !queued &&
      caller.invocations.length === 0 &&
      (caller.refusal !== undefined || caller.fallbackErrors.some((e) => isCallRejected(e)));
    const reason =
      caller.refusal ??
      (caller.fallbackErrors.find((e) => isCallRejected(e)) as CallRejectedError | undefined)
        ?.reason;
    if (peek.permitted && refusedAtOnce && reason !== 'ramp-up' && reason !== 'throttled')
      fail(
        'the reported state matches the admission the next call gets',
        `peek() permitted a call (state ${peek.state}) that was refused at once: ${reason}`,
      );
    if (!peek.permitted && !refusedAtOnce)
      fail(
        'the reported state matches the admission the next call gets',
        `peek() refused (${peek.reason}) a call that was ${queued ? 'queued' : 'admitted'}`,
      );
    // The slow start sheds by a random draw, in front of the bulkhead and the state: peek() cannot foretell
    // a draw, so a call it refused for another reason may meet the shed first (the model once required
    // peek()'s reason then, though the call was refused either way).
    if (!peek.permitted && refusedAtOnce && reason !== peek.reason && reason !== 'ramp-up')
      fail(
        'the reported state matches the admission the next call gets',
        `peek() said ${peek.reason}, the call was refused with ${reason}`,
      );
  };

  const abortCaller = (caller: Caller | undefined) => {
    if (caller?.controller === undefined || caller.controller.signal.aborted) return;
    caller.abortedAt = order();
    caller.controller.abort(new Error('the caller gave up'));
  };
  const waiting = () => callers.filter((k) => k.settled === 0 && k.controller !== undefined);

  for (const step of steps) {
    log?.(`${Date.now() - START} step ${JSON.stringify(step)}`);
    switch (step.do) {
      case 'call':
        await startCall(step.key, step.signal);
        break;
      case 'settle': {
        const live = running();
        if (live.length > 0) live[step.pick % live.length]!.answer(step.outcome);
        await settleMicrotasks();
        break;
      }
      case 'abort': {
        const w = waiting();
        if (w.length > 0) abortCaller(w[step.pick % w.length]);
        await settleMicrotasks();
        break;
      }
      case 'handover': {
        const live = running();
        if (live.length > 0) live[step.pick % live.length]!.answer('s');
        for (let i = 0; i < step.depth; i++) await Promise.resolve();
        if (step.next === 'call') await startCall(step.target, true);
        else {
          // A caller still waiting for a slot first: its slot may be handed over in this very tick.
          const queued = waiting().filter((k) => k.invocations.length === 0);
          const w = queued.length > 0 ? queued : waiting();
          const aborted = w[step.target % Math.max(1, w.length)];
          abortCaller(aborted);
        }
        await settleMicrotasks();
        break;
      }
      case 'advance':
        await advanceClock(step.ms);
        break;
      case 'control':
        control(root, step.what);
        await settleMicrotasks();
        break;
      case 'inject':
        if (step.rate === undefined) faults.at(-1)?.remove();
        else
          faults.push(
            root.injectFault({
              fail: true,
              rate: step.rate,
              random: randomSource({ ...c, seed: c.seed + faults.length }),
            }),
          );
        await settleMicrotasks();
        break;
      case 'reconfigure':
        root.reconfigure(optionsOf(c, step.variant, healthCheckFn));
        await settleMicrotasks();
        break;
    }
    checkBounds(c, retained, invocations, fail);
  }

  // Drain: every force ends, the dependency answers everything still running, and time runs out every wait.
  for (const invocation of running()) {
    const caller = invocation.caller;
    if (caller.abortedAt !== undefined && invocation.signal?.aborted !== true)
      fail(
        "a caller's abort reaches its call",
        `caller ${caller.id}'s call still runs with a live signal`,
      );
  }
  // Every wait of a configuration is at most a few seconds (a retry's backoff, a doubled open duration, a queue).
  for (let round = 0; round < 3; round++) {
    for (const invocation of running()) invocation.answer('s');
    await settleMicrotasks();
    await advanceClock(5_000);
  }
  for (const caller of callers)
    if (caller.settled !== 1)
      fail(
        'every caller settles exactly once',
        `caller ${caller.id} (key ${caller.key}) settled ${caller.settled} times`,
      );
  const injected = faults.reduce((sum, fault) => sum + fault.injected, 0);
  checkEnd(c, retained, callers, invocations, injected, fail);
  root.dispose();
  return { violations };
}

/** Moves the fake clock: the spec hands in `vi.advanceTimersByTimeAsync`. */
let advanceClock: (ms: number) => Promise<void> = () => Promise.resolve();
export function useAdvance(advance: (ms: number) => Promise<void>): void {
  advanceClock = advance;
}

/** How many calls wait in the queue of the breaker a call on `key` goes to. */
function queuedOn(root: Breaker, key: string, c: Combination): number {
  if (c.bulkhead === undefined) return 0;
  const target = c.perKey === undefined ? root : [...root.children()].find((k) => k.key === key);
  if (target !== undefined) return target.snapshot().bulkhead?.queued ?? 0;
  // A key whose child was evicted with calls waiting: its next child takes that bulkhead over, queue and all.
  // The model once counted none before the call and the whole queue after, so a call refused at once
  // (bulkhead-full, as peek() said) looked queued (white-box: the family's kept bulkhead).
  const family = root['keyed'] as unknown as { kept(key: string): KeptSlots | undefined };
  return family.kept(key)?.slots.queued ?? 0;
}

interface KeptSlots {
  slots: { queued: number };
}

function describe(event: object): string {
  return Object.entries(event)
    .filter(([k]) => k !== 'previous' && k !== 'current')
    .map(
      ([k, v]) =>
        `${k}=${v instanceof Error ? v.message : typeof v === 'object' ? JSON.stringify(v) : String(v)}`,
    )
    .join(' ');
}

function retryOptions(c: Combination) {
  const r = c.retry!;
  return {
    attempts: r.attempts,
    backoff: { initialMs: r.initialMs, maxMs: r.initialMs * 4, jitter: 0 },
    budget: r.budget,
  };
}

function control(root: Breaker, what: Control): void {
  if (what === 'release') root.release();
  else if (what === 'reset') root.reset();
  else if (what === 'isolate') root.isolate();
  else if (what === 'disable') root.disable();
  else root.force(what.slice('force-'.length) as 'open', { reason: 'combination suite' });
}

function decorated(
  c: Combination,
  body: (callerId: number) => Promise<string>,
  fallback: (error: unknown, callerId: unknown) => string,
  keyOf: (callerId: number) => string,
): { prototype: object } {
  class Target {
    declare call: unknown;
  }
  // The method reads its call's signal the way an application's method does.
  const call = function call(callerId: number): Promise<string> {
    void getCallSignal;
    return body(callerId);
  };
  const descriptor: PropertyDescriptor = { value: call, writable: true, configurable: true };
  Reflect.defineMetadata('design:returntype', Promise, Target.prototype, 'call');
  CircuitBreaker({
    name: 'combo',
    ...(c.fallback ? { fallback } : {}),
    ...(c.perKey === undefined ? {} : { key: (callerId: number) => keyOf(callerId) }),
    ...(c.retry === undefined ? {} : { retry: retryOptions(c) }),
  })(Target.prototype, 'call', descriptor);
  Object.defineProperty(Target.prototype, 'call', descriptor);
  return Target;
}

function checkRetryBudget(
  r: Retained,
  budget: { ratio: number; minPerSecond: number },
  fail: (invariant: Invariant, detail: string) => void,
): void {
  const start = r.budgetStart ?? 0;
  const bucket = (t: number) => Math.floor((t - start) / 1_000);
  const now = bucket(Date.now());
  const inWindow = (t: number) => bucket(t) > now - 10;
  const calls = r.deposits.filter(inWindow).length;
  const retries = r.retries.filter(inWindow).length;
  const allowed = budget.ratio * calls + budget.minPerSecond * 10;
  if (retries > allowed)
    fail(
      'the retry budget is never exceeded',
      `${r.breaker.name}: ${retries} retries over ${calls} calls in the last 10 s (allowed ${allowed})`,
    );
}

function checkBounds(
  c: Combination,
  retained: Retained[],
  invocations: Invocation[],
  fail: (invariant: Invariant, detail: string) => void,
): void {
  for (const { breaker } of retained) {
    const s = breaker.snapshot();
    if (s.state === 'half-open' && s.halfOpen !== undefined) {
      if (s.halfOpen.probesAdmitted > c.halfOpen.maxProbes)
        fail(
          'the probe budget is never exceeded',
          `${s.name}: ${s.halfOpen.probesAdmitted} probes admitted of ${c.halfOpen.maxProbes}`,
        );
      if (s.halfOpen.probesInFlight > c.halfOpen.maxConcurrent)
        fail(
          'the probe budget is never exceeded',
          `${s.name}: ${s.halfOpen.probesInFlight} probes in flight of ${c.halfOpen.maxConcurrent}`,
        );
    }
    if (c.bulkhead !== undefined && s.bulkhead !== undefined) {
      if (s.bulkhead.active > capOf(c.bulkhead) || s.bulkhead.queued > c.bulkhead.maxQueue)
        fail('the bulkhead cap is never exceeded', `${s.name}: ${JSON.stringify(s.bulkhead)}`);
    }
  }
  if (c.bulkhead === undefined) return;
  const perKey = new Map<string, number>();
  for (const i of invocations)
    if (i.ended === undefined && !i.exempt) perKey.set(i.key, (perKey.get(i.key) ?? 0) + 1);
  for (const [key, n] of perKey)
    if (n > capOf(c.bulkhead))
      fail(
        'the bulkhead cap is never exceeded',
        `${n} calls run at once for key '${key}' (cap ${capOf(c.bulkhead)})`,
      );
}

function checkEnd(
  c: Combination,
  retained: Retained[],
  callers: Caller[],
  invocations: Invocation[],
  injected: number,
  fail: (invariant: Invariant, detail: string) => void,
): void {
  // A counted failure is a call that reached the dependency and failed there, or outlived its deadline.
  const attributable =
    invocations.filter(
      (i) =>
        !i.exempt &&
        (i.ended === 'f' ||
          // A deadline after its caller gave up is the caller's business: the call should have ended then.
          (i.ended === 'deadline' &&
            (i.caller.abortedAt === undefined || i.caller.abortedAt > i.endedAt))),
    ).length + injected;
  const counted = retained.reduce((sum, r) => sum + r.failures, 0);
  if (counted > attributable)
    fail(
      'a local refusal never counts as a dependency failure',
      `${counted} failures counted, ${attributable} calls failed at the dependency, at their deadline or by an injected fault`,
    );
  for (const r of retained) {
    const s = r.breaker.snapshot();
    const t = s.totals;
    if (s.bulkhead !== undefined && (s.bulkhead.active !== 0 || s.bulkhead.queued !== 0))
      fail(
        'the bulkhead cap is never exceeded',
        `${s.name}: a slot stays taken after every call settled: ${JSON.stringify(s.bulkhead)}`,
      );
    // Every call has settled here, so no probe is in flight: each admitted one ended one way.
    const settledProbes =
      t.probes.succeeded + t.probes.failed + t.probes.released + t.probes.abandoned;
    if (t.probes.admitted !== settledProbes)
      fail('totals add up', `${s.name}: probes ${JSON.stringify(t.probes)}`);
    const ended = t.successes + t.failures.total + t.ignored + t.overloads;
    if (t.admitted !== ended)
      fail(
        'totals add up',
        `${s.name}: admitted ${t.admitted}, ended ${ended} (${JSON.stringify({ s: t.successes, f: t.failures.total, i: t.ignored, o: t.overloads })})`,
      );
    if (t.failures.total !== r.failures)
      fail(
        'totals add up',
        `${s.name}: failures ${t.failures.total}, failure events ${r.failures}`,
      );
    if (t.rejected.total !== r.rejections)
      fail(
        'totals add up',
        `${s.name}: rejected ${t.rejected.total}, rejection events ${r.rejections}`,
      );
  }
  for (const caller of callers) {
    if (caller.invocations.length > caller.attemptsAllowed)
      fail(
        'the retry budget is never exceeded',
        `caller ${caller.id} reached the dependency ${caller.invocations.length} times, attempts ${caller.attemptsAllowed}`,
      );
    if (c.front !== 'decorator' || !c.fallback) continue;
    checkFallback(caller, fail);
  }
}

function checkFallback(caller: Caller, fail: (invariant: Invariant, detail: string) => void): void {
  const name = 'a fallback answers exactly the calls counted failed or refused';
  if (caller.fallbackErrors.length > 1) {
    fail(name, `caller ${caller.id}: the fallback ran ${caller.fallbackErrors.length} times`);
    return;
  }
  const last = caller.invocations.at(-1);
  const lastFailed =
    last !== undefined && !last.exempt && (last.ended === 'f' || last.ended === 'deadline');
  const served = caller.fallbackErrors[0];
  if (caller.fallbackErrors.length === 0) {
    if (caller.result !== undefined && !caller.result.ok && isCallRejected(caller.result.value))
      fail(name, `caller ${caller.id}: refused (${caller.refusal}) without the fallback`);
    else if (lastFailed && caller.result?.ok !== true)
      fail(name, `caller ${caller.id}: its call failed (${last.ended}) without the fallback`);
    return;
  }
  if (caller.result?.value !== FALLBACK)
    fail(
      name,
      `caller ${caller.id}: the fallback ran but the caller got ${String(caller.result?.value)}`,
    );
  if (isCallRejected(served) || served instanceof InjectedFaultError) return;
  if (!lastFailed || served !== last.error)
    fail(
      name,
      `caller ${caller.id}: the fallback answered a call that ended ${last?.ended ?? 'unrun'}${last?.exempt ? ' (uncounted)' : ''}`,
    );
}
