import { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import {
  RedisBreakerConnection,
  type ConnectionOptions,
} from '../../lib/redis/redis-breaker.connection.js';

// The connection state machine on its own: fake clients that move only when
// the test says so, and a clock that does the same. No Redis is needed.

const CHANNEL = 'cb:signals';
const UNREACHABLE = (reason: string) =>
  `Redis is unreachable (${reason}): every circuit breaker now decides on its own, and sharing resumes by itself when Redis is back.`;
const RESUMED = (ms: number) =>
  `Redis is reachable again after ${ms} ms: circuit breakers share their state again.`;

/** An ioredis client as the connection sees it: a status, events, and the few commands it sends. */
class FakeClient extends EventEmitter {
  status = 'wait';
  readonly calls: string[] = [];
  /** What the next SUBSCRIBEs answer, in turn; then they succeed. */
  readonly subscribeReplies: (() => Promise<unknown>)[] = [];
  duplicated: FakeClient | undefined;

  connect(): Promise<void> {
    this.calls.push('connect');
    this.status = 'connecting';
    return Promise.resolve();
  }
  subscribe(channel: string): Promise<unknown> {
    this.calls.push(`subscribe ${channel}`);
    return this.subscribeReplies.shift()?.() ?? Promise.resolve(1);
  }
  unsubscribe(channel: string): Promise<unknown> {
    this.calls.push(`unsubscribe ${channel}`);
    return Promise.resolve(0);
  }
  quit(): Promise<string> {
    this.calls.push('quit');
    return Promise.resolve('OK');
  }
  disconnect(): void {
    this.calls.push('disconnect');
    this.status = 'end';
    this.emit('end');
  }
  duplicate(): FakeClient {
    return (this.duplicated = new FakeClient());
  }
  /** Connected (again). */
  ready(): void {
    this.status = 'ready';
    this.emit('ready');
  }
  /** Lost the connection; ioredis reconnects by itself. */
  drop(): void {
    this.status = 'reconnecting';
    this.emit('close');
  }
}

function setup(overrides: Partial<ConnectionOptions> & { given?: boolean } = {}) {
  let time = 10_000;
  const redis = new FakeClient();
  const given = overrides.given === true ? new FakeClient() : undefined;
  const warnings: string[] = [];
  const logs: string[] = [];
  const messages: string[] = [];
  let recoveries = 0;
  const connection = new RedisBreakerConnection({
    redis: redis as unknown as Redis,
    subscriber: given as unknown as Redis | undefined,
    channel: CHANNEL,
    operationTimeoutMs: 5,
    closeClient: false,
    logger: { warn: (m) => warnings.push(m), log: (m) => logs.push(m) },
    now: () => time,
    message: (m) => messages.push(m),
    recovered: () => recoveries++,
    ...overrides,
  });
  const subscriber = () => (given ?? redis.duplicated)!;
  return {
    connection,
    redis,
    subscriber,
    warnings,
    logs,
    messages,
    recoveries: () => recoveries,
    advance: (ms: number) => (time += ms),
    /** Starts, connects both clients and lets the subscription land. */
    async shared() {
      connection.start();
      redis.ready();
      subscriber().ready();
      await settle();
    },
  };
}

/** Lets promise callbacks run (a SUBSCRIBE reply, a deadline's cleanup). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('RedisBreakerConnection: starting', () => {
  it("hears the clients' errors before it starts, without counting or reporting them", () => {
    const t = setup();
    t.redis.emit('error', new Error('ECONNREFUSED'));
    expect([t.connection.state, t.connection.errors, t.connection.shared, t.warnings]).toEqual([
      'idle',
      0,
      false,
      [],
    ]);
    expect(t.redis.listenerCount('error')).toBe(1);
  });

  it('connects both clients on start, subscribes, and shares once both are ready and subscribed', async () => {
    const t = setup();
    expect(t.connection.start()).toBe(true);
    expect(t.connection.start()).toBe(false);
    expect(t.connection.state).toBe('connecting');
    expect(t.redis.calls).toEqual(['connect']);
    expect(t.subscriber().calls).toEqual(['connect', `subscribe ${CHANNEL}`]);
    const ready = t.connection.whenReady();
    let resolved = false;
    void ready.then(() => (resolved = true));
    t.redis.ready();
    await settle();
    expect([t.connection.state, resolved]).toEqual(['connecting', false]);
    t.subscriber().ready();
    await settle();
    expect([t.connection.state, t.connection.shared, resolved]).toEqual(['shared', true, true]);
    // No outage was reported, so none ends: the first connection is no recovery.
    expect([t.warnings, t.logs, t.recoveries()]).toEqual([[], [], 0]);
  });

  it("leaves a given subscriber's connecting to its owner, and only subscribes it", () => {
    const t = setup({ given: true });
    t.connection.start();
    expect(t.subscriber().calls).toEqual([`subscribe ${CHANNEL}`]);
    expect(t.redis.duplicated).toBeUndefined();
  });

  it('passes on the messages of its channel only', async () => {
    const t = setup();
    await t.shared();
    t.subscriber().emit('message', 'other:signals', 'x');
    t.subscriber().emit('message', CHANNEL, 'y');
    expect(t.messages).toEqual(['y']);
  });

  it('retries a failed first subscription, one outage for all the failures, until it lands', async () => {
    // The retry waits operationTimeoutMs (5 ms) on a timer: faked, or a loaded machine runs it before the first check.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    onTestFinished(() => void vi.useRealTimers());
    const t = setup();
    const refused = () => Promise.reject(new Error('NOPERM'));
    t.redis.duplicate = () => {
      const made = FakeClient.prototype.duplicate.call(t.redis);
      made.subscribeReplies.push(refused, refused);
      return made;
    };
    t.connection.start();
    t.redis.ready();
    t.subscriber().ready();
    await settle();
    expect([t.connection.state, t.connection.errors, t.warnings]).toEqual([
      'outage',
      1,
      [UNREACHABLE('NOPERM')],
    ]);
    t.advance(40);
    // The second try is refused too; the third lands.
    await vi.advanceTimersByTimeAsync(5);
    await vi.advanceTimersByTimeAsync(5);
    expect(t.subscriber().calls.filter((c) => c.startsWith('subscribe'))).toHaveLength(3);
    expect([t.connection.state, t.connection.errors, t.warnings.length]).toEqual(['shared', 2, 1]);
    expect([t.logs, t.recoveries()]).toEqual([[RESUMED(40)], 1]);
  });
});

describe('RedisBreakerConnection: outages', () => {
  it('on a Cluster, ends an outage only when every breaker was read again and none has its slot down, never on one answer elsewhere', async () => {
    let slotsDown = 0;
    const t = setup({ cluster: true, slotsDown: () => slotsDown });
    await t.shared();
    // A node is down: the others still answer a PING, a command of another slot, and reconnect. The breakers of the
    // other slots share on (each goes local when a command on its own keys fails: SlotOutages).
    t.redis.emit('error', new Error('connect ECONNREFUSED 127.0.0.1:7003'));
    expect([t.connection.state, t.connection.shared, t.connection.verifying]).toEqual([
      'recovering',
      true,
      true,
    ]);
    t.connection.succeeded();
    t.connection.slotFailed(new Error('connect ECONNREFUSED 127.0.0.1:7003'));
    slotsDown = 2;
    expect([t.connection.state, t.connection.shared, t.logs]).toEqual(['recovering', true, []]);
    t.connection.succeeded();
    t.redis.ready();
    t.connection.failed(new Error('CLUSTERDOWN The cluster is down'));
    t.connection.succeeded();
    expect([t.connection.state, t.connection.shared, t.logs, t.recoveries()]).toEqual([
      'outage',
      false,
      [],
      0,
    ]);
    t.advance(3_000);
    // Every breaker read, two of them still failing: the others share, and the outage goes on.
    t.connection.verified();
    expect([t.connection.state, t.connection.shared, t.logs, t.recoveries()]).toEqual([
      'recovering',
      true,
      [],
      0,
    ]);
    slotsDown = 0;
    t.connection.verified();
    expect([t.connection.state, t.warnings.length, t.logs, t.recoveries()]).toEqual([
      'shared',
      1,
      [RESUMED(3_000)],
      1,
    ]);
  });

  it('reports a dropped connection once, fails open, and shares again when it is back, saying how long it was down', async () => {
    const t = setup();
    await t.shared();
    t.redis.drop();
    t.redis.emit('error', new Error('ECONNRESET'));
    t.redis.emit('error', new Error('ECONNREFUSED'));
    expect([t.connection.state, t.connection.shared, t.connection.errors]).toEqual([
      'outage',
      false,
      2,
    ]);
    expect(t.warnings).toEqual([UNREACHABLE('connection closed')]);
    t.advance(1_234);
    t.redis.ready();
    expect([t.connection.state, t.logs, t.recoveries()]).toEqual(['shared', [RESUMED(1_234)], 1]);
  });

  it('stays in the outage while only one of the two connections is back', async () => {
    const t = setup();
    await t.shared();
    t.redis.drop();
    t.subscriber().drop();
    t.redis.ready();
    expect([t.connection.state, t.recoveries()]).toEqual(['outage', 0]);
    t.advance(7);
    t.subscriber().ready();
    expect([t.connection.state, t.logs, t.recoveries()]).toEqual(['shared', [RESUMED(7)], 1]);
  });

  it('counts a failed operation as an outage while the connections look ready (a frozen Redis), until one succeeds', async () => {
    const t = setup();
    await t.shared();
    t.connection.failed(new Error('PING did not answer within 5 ms (operationTimeoutMs)'));
    t.connection.failed(
      new Error('reading shared state did not answer within 5 ms (operationTimeoutMs)'),
    );
    expect([
      t.connection.state,
      t.connection.failing,
      t.connection.connected,
      t.connection.errors,
    ]).toEqual(['outage', true, true, 2]);
    expect(t.warnings).toEqual([
      UNREACHABLE('PING did not answer within 5 ms (operationTimeoutMs)'),
    ]);
    t.advance(300);
    t.connection.succeeded();
    expect([t.connection.state, t.connection.failing, t.logs, t.recoveries()]).toEqual([
      'shared',
      false,
      [RESUMED(300)],
      1,
    ]);
  });

  it('is recovering after an error on connections that stay ready: sharing goes on, and the next success ends the outage', async () => {
    const t = setup();
    await t.shared();
    t.redis.emit('error', new Error('Connection is in subscriber mode'));
    expect([t.connection.state, t.connection.shared, t.connection.errors]).toEqual([
      'recovering',
      true,
      1,
    ]);
    expect(t.warnings).toEqual([UNREACHABLE('Connection is in subscriber mode')]);
    t.advance(5);
    t.connection.succeeded();
    expect([t.connection.state, t.logs, t.recoveries()]).toEqual(['shared', [RESUMED(5)], 1]);
  });

  it('reports each outage once: a second one after a recovery warns again', async () => {
    const t = setup();
    await t.shared();
    t.connection.failed(new Error('first'));
    t.connection.succeeded();
    t.connection.failed(new Error('second'));
    expect(t.warnings).toEqual([UNREACHABLE('first'), UNREACHABLE('second')]);
    expect([t.connection.errors, t.recoveries()]).toEqual([2, 1]);
  });

  it('takes a fresh connection as a fresh start: a ready event clears the last failure', async () => {
    const t = setup();
    await t.shared();
    t.connection.failed(new Error('timed out'));
    t.redis.ready();
    expect([t.connection.state, t.connection.failing, t.recoveries()]).toEqual([
      'shared',
      false,
      1,
    ]);
  });

  it('waits in connecting without an outage until Redis first answers, and reports one once something fails', async () => {
    const t = setup();
    t.connection.start();
    expect([t.connection.state, t.warnings]).toEqual(['connecting', []]);
    t.redis.emit('error', new Error('ECONNREFUSED'));
    expect([t.connection.state, t.warnings]).toEqual(['outage', [UNREACHABLE('ECONNREFUSED')]]);
  });

  it('neither counts nor reports what fails before it starts or after it closes', async () => {
    const t = setup();
    t.connection.failed(new Error('early'));
    await t.connection.close();
    t.connection.failed(new Error('late'));
    expect([t.connection.state, t.connection.errors, t.warnings]).toEqual(['closed', 0, []]);
  });
});

describe('RedisBreakerConnection: closing', () => {
  it('releases whoever waits for readiness, quits the subscriber it made, leaves redis alone, and detaches every listener', async () => {
    const t = setup();
    t.connection.start();
    t.redis.ready();
    t.subscriber().ready();
    const waiting = t.connection.whenReady();
    await t.connection.close();
    await waiting;
    expect(t.connection.state).toBe('closed');
    expect(t.subscriber().calls).toEqual(['connect', `subscribe ${CHANNEL}`, 'quit', 'disconnect']);
    expect(t.redis.calls).toEqual(['connect']);
    for (const event of ['error', 'ready', 'close', 'message']) {
      expect([event, t.redis.listenerCount(event), t.subscriber().listenerCount(event)]).toEqual([
        event,
        0,
        0,
      ]);
    }
    expect(t.connection.start()).toBe(false);
  });

  it('only unsubscribes a subscriber it was given, and quits redis with closeClient', async () => {
    const t = setup({ given: true, closeClient: true });
    await t.shared();
    await t.connection.close();
    expect(t.subscriber().calls).toEqual([`subscribe ${CHANNEL}`, `unsubscribe ${CHANNEL}`]);
    expect(t.redis.calls).toEqual(['connect', 'quit', 'disconnect']);
  });

  it('does not wake a client that never connected to quit it', async () => {
    const t = setup({ given: true, closeClient: true });
    await t.connection.close();
    expect([t.subscriber().calls, t.redis.calls]).toEqual([[], ['disconnect']]);
  });
});
