import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';
import type {
  BreakerOptions,
  BreakerSnapshot,
  ForcedMode,
  ForceOptions,
  ResolvedBreakerOptions,
} from '../../../lib/core/index.js';
import type { FleetReconfigured, FleetWrite } from '../../../lib/index.js';
import type { RedisBreakerStoreOptions } from '../../../lib/redis/index.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/replica.mjs', import.meta.url));

export interface ReplicaConfig {
  instanceId: string;
  redisPort: number;
  keyPrefix: string;
  upstreamUrl: string;
  breakers: Record<string, BreakerOptions>;
  store?: Omit<
    RedisBreakerStoreOptions,
    'redis' | 'subscriber' | 'logger' | 'keyPrefix' | 'instanceId'
  >;
}

export interface ReplicaTransition {
  breaker: string;
  from: string;
  to: string;
  reason: string;
  /** Date.now() in the replica when it happened (one machine: comparable across replicas). */
  at: number;
  /** The time the breaker gives the transition: a lazy one (the end of a force) is dated when it was due. */
  dated: number;
  openUntil?: number;
  /** For reason `forced`: the force. */
  forced?: { state: string; reason: string; by?: string };
}

/** How a fleet-wide order went on the replica that gave it. */
export interface FleetOrderOutcome<T> {
  /** Date.now() in the replica just before the call. */
  calledAt: number;
  result?: T;
  error?: { name: string; message: string };
}

type Message =
  | { type: 'ready'; snapshots: Record<string, BreakerSnapshot> }
  | ({ type: 'transition' } & ReplicaTransition)
  | { type: 'log'; level: 'warn' | 'log'; message: string }
  | { type: 'issued'; breaker: string; n: number }
  | { type: 'reply'; id: number; result?: unknown; error?: string };

// Every replica started by this test process, so that none outlives it.
const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** A replica of the fixture application in a process of its own, driven over IPC. */
export class ReplicaProcess {
  readonly transitions: ReplicaTransition[] = [];
  readonly logs: { level: string; message: string }[] = [];
  /** Each breaker's snapshot right after start-up, before any call. */
  readySnapshots: Record<string, BreakerSnapshot> = {};
  private readonly pending = new Map<
    number,
    { resolve(value: unknown): void; reject(error: Error): void }
  >();
  private readonly listeners = new Set<(message: Message) => void>();
  private seq = 0;
  private stderr = '';

  private constructor(
    readonly config: ReplicaConfig,
    private readonly child: ChildProcess,
  ) {}

  static async start(config: ReplicaConfig): Promise<ReplicaProcess> {
    const buildError = inject('replicaBuildError');
    if (buildError !== undefined)
      throw new Error(`The replica processes need dist/: ${buildError}`);
    const child = fork(FIXTURE, [], {
      // The children are plain Node: none of vitest's loaders or flags.
      execArgv: [],
      env: { ...process.env, NODE_OPTIONS: '', REPLICA_CONFIG: JSON.stringify(config) },
      stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
    });
    running.add(child);
    const replica = new ReplicaProcess(config, child);
    child.once('exit', (code, signal) => {
      running.delete(child);
      // A request to a replica that died is answered, never left hanging.
      for (const waiter of replica.pending.values())
        waiter.reject(
          new Error(`Replica ${config.instanceId} exited (${code ?? signal}).\n${replica.stderr}`),
        );
      replica.pending.clear();
    });
    child.stderr!.on('data', (chunk: Buffer) => (replica.stderr += chunk.toString()));
    child.on('message', (message: Message) => replica.receive(message));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(`Replica ${config.instanceId} did not start within 15 s.\n${replica.stderr}`),
          ),
        15_000,
      );
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(
          new Error(
            `Replica ${config.instanceId} exited (${code ?? signal}) before it was ready.\n${replica.stderr}`,
          ),
        );
      });
      replica.listeners.add(function ready(message) {
        if (message.type !== 'ready') return;
        replica.listeners.delete(ready);
        clearTimeout(timer);
        replica.readySnapshots = message.snapshots;
        resolve();
      });
    });
    return replica;
  }

  get id(): string {
    return this.config.instanceId;
  }

  /** `n` concurrent calls through `breaker`; resolves with how they ended (`ok`, `upstream-error`, `rejected:<reason>`, `other:...`). */
  burst(breaker: string, n: number): Promise<Record<string, number>> {
    return this.request('burst', { breaker, n }) as Promise<Record<string, number>>;
  }

  /** Resolves once every call of the replica's current burst has been made (none need have settled). */
  issued(breaker: string): Promise<void> {
    return this.next((m) => m.type === 'issued' && m.breaker === breaker, 15_000).then(
      () => undefined,
    );
  }

  snapshot(breaker: string): Promise<BreakerSnapshot> {
    return this.request('snapshot', { breaker }) as Promise<BreakerSnapshot>;
  }

  /** The breaker's state now (a due transition, such as the end of a force, happens as it is read). */
  state(breaker: string): Promise<string> {
    return this.request('state', { breaker }) as Promise<string>;
  }

  /** The breaker's options in force. */
  optionsOf(breaker: string): Promise<ResolvedBreakerOptions> {
    return this.request('config', { breaker }) as Promise<ResolvedBreakerOptions>;
  }

  /** `registry.control(breaker, { fleet: true }).force(state, options)` in the replica. */
  force(
    breaker: string,
    state: ForcedMode | 'closed',
    options: ForceOptions,
  ): Promise<FleetOrderOutcome<FleetWrite>> {
    return this.request('force', { breaker, state, options }) as Promise<
      FleetOrderOutcome<FleetWrite>
    >;
  }

  release(breaker: string): Promise<FleetOrderOutcome<FleetWrite>> {
    return this.request('release', { breaker }) as Promise<FleetOrderOutcome<FleetWrite>>;
  }

  reconfigure(
    breaker: string,
    patch: BreakerOptions,
  ): Promise<FleetOrderOutcome<FleetReconfigured>> {
    return this.request('reconfigure', { breaker, patch }) as Promise<
      FleetOrderOutcome<FleetReconfigured>
    >;
  }

  reconcile(): Promise<void> {
    return this.request('reconcile', {}).then(() => undefined);
  }

  /** The first transition (already seen or to come) that `matches`. */
  async transition(
    matches: (t: ReplicaTransition) => boolean,
    timeoutMs = 10_000,
  ): Promise<ReplicaTransition> {
    const seen = this.transitions.find(matches);
    if (seen !== undefined) return seen;
    const message = await this.next((m) => m.type === 'transition' && matches(m), timeoutMs);
    return message as ReplicaTransition;
  }

  /**
   * Closes the application (the store writes what is pending) and waits for the
   * process to end on its own; fails if it has to be killed (a handle was left running).
   */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    let killed = false;
    const timer = setTimeout(() => {
      killed = true;
      this.child.kill('SIGKILL');
    }, 5_000);
    this.request('close', {}).catch(() => undefined);
    await exited;
    clearTimeout(timer);
    if (killed)
      throw new Error(
        `Replica ${this.id} did not exit within 5 s of app.close(): something it started was left running.`,
      );
  }

  /** Kills the process at once, as a crash would. */
  async kill(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGKILL');
    await exited;
  }

  private request(cmd: string, args: object): Promise<unknown> {
    const id = ++this.seq;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.child.send({ id, cmd, ...args });
    });
  }

  private next(matches: (message: Message) => boolean, timeoutMs: number): Promise<Message> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.listeners.delete(listener);
        reject(
          new Error(`Replica ${this.id}: timed out after ${timeoutMs} ms waiting for a message.`),
        );
      }, timeoutMs);
      const listener = (message: Message) => {
        if (!matches(message)) return;
        clearTimeout(timer);
        this.listeners.delete(listener);
        resolve(message);
      };
      this.listeners.add(listener);
    });
  }

  private receive(message: Message): void {
    if (message.type === 'transition') this.transitions.push(message);
    else if (message.type === 'log')
      this.logs.push({ level: message.level, message: message.message });
    else if (message.type === 'reply') {
      const waiter = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (message.error !== undefined)
        waiter?.reject(new Error(`Replica ${this.id}: ${message.error}`));
      else waiter?.resolve(message.result);
    }
    // A listener may remove itself while called: a Set iteration allows that.
    for (const listener of this.listeners) listener(message);
  }
}
