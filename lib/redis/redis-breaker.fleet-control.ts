import type { Cluster, Redis } from 'ioredis';
import type {
  Breaker,
  BreakerOptions,
  ForcedMode,
  ForceOptions,
  ReconfiguredEvent,
} from '../core/index.js';
import type {
  FleetControl,
  FleetReconfigured,
  FleetReconfigurer,
  FleetWrite,
} from '../interfaces/fleet-control.interface.js';
import {
  evalCall,
  markApart,
  markKeys,
  scriptOf,
  signalChannel,
  type ScriptCall,
  type Writer,
} from './redis-breaker.commands.js';
import type { RedisBreakerConnection } from './redis-breaker.connection.js';
import { FLEET_CONFIG_ATTEMPTS, KEY_TTL_MS } from './redis-breaker.constants.js';
import type { SharedBreaker } from './redis-breaker.coordinator.js';
import { isKeyError, type CorruptKeys } from './redis-breaker.corrupt-keys.js';
import { withDeadline } from './redis-breaker.deadline.js';
import { FleetOrderError, type FleetOrderKind } from './redis-breaker.errors.js';
import type { FleetOrders, RestoredOrder } from './redis-breaker.fleet-orders.js';
import { decodeConfigHash, type FleetForceState } from './redis-breaker.fleet-records.js';
import { FLEET_SCRIPTS } from './redis-breaker.fleet-scripts.js';
import { redisBreakerMessages as messages } from './redis-breaker.messages.js';
import { decimalOf } from './redis-breaker.numbers.js';
import type { SlotOutages } from './redis-breaker.slots.js';

/** What the fleet's orders need from the store. @internal */
export interface FleetControlLink {
  readonly redis: Redis | Cluster;
  readonly writer: Writer;
  readonly operationTimeoutMs: number;
  readonly connection: RedisBreakerConnection;
  readonly corrupt: CorruptKeys;
  readonly slots: SlotOutages;
  readonly orders: FleetOrders;
  /** The store's record of `breaker`, if the store shares it. */
  recordOf(breaker: Breaker): SharedBreaker | undefined;
  /** Connects, if the store has not started yet. */
  start(): void;
}

/**
 * The caller's side of fleet-wide orders (`store.fleet`): obeys the order
 * here first (checked as the local method checks it: bad input changes
 * nothing anywhere), then stores and signals it in one script. The promise
 * settles within `operationTimeoutMs` (twice that while the store connects): it resolves once Redis took the
 * order, and rejects with a `FleetOrderError` naming the breaker when Redis
 * cannot take it (this replica still obeys, as an order of its own).
 *
 * @internal
 */
export class RedisFleetControl implements FleetControl {
  constructor(private readonly link: FleetControlLink) {}

  useReconfigurer(reconfigurer: FleetReconfigurer): void {
    this.link.orders.reconfigurer = reconfigurer;
  }

  async force(
    breaker: Breaker,
    state: ForcedMode | 'closed',
    options: ForceOptions,
  ): Promise<FleetWrite> {
    const record = this.recordOf(breaker, 'force');
    const { orders } = this.link;
    const mine = orders.forceHere(record, state, options);
    orders.begin(record);
    let reply: [number, number];
    try {
      reply = await this.send<[number, number]>(
        record,
        'force',
        `forced ${state}`,
        this.forceCall(record, state, options.reason, options.by ?? '', options.untilMs ?? 0),
      );
    } catch (error) {
      orders.forceNotTold(record, mine);
      throw error;
    }
    orders.forceWritten(record, reply[0], mine);
    return { breaker: record.name, generation: reply[0], subscribers: reply[1] };
  }

  async release(breaker: Breaker): Promise<FleetWrite> {
    const record = this.recordOf(breaker, 'release');
    const { orders } = this.link;
    const mine = orders.releaseHere(record);
    orders.begin(record);
    let reply: [number, number];
    try {
      reply = await this.send<[number, number]>(
        record,
        'release',
        'released',
        this.forceCall(record, 'released', '', '', 0),
      );
    } catch (error) {
      orders.forceNotTold(record, mine);
      throw error;
    }
    orders.forceWritten(record, reply[0], mine);
    return { breaker: record.name, generation: reply[0], subscribers: reply[1] };
  }

  async reconfigure(breaker: Breaker, patch: BreakerOptions): Promise<FleetReconfigured> {
    const record = this.recordOf(breaker, 'reconfigure');
    const { orders } = this.link;
    const reconfigurer = orders.reconfigurer;
    const data = plainPatch(record.name, patch);
    let local: ReconfiguredEvent | undefined;
    for (let attempt = 0; attempt < FLEET_CONFIG_ATTEMPTS; attempt++) {
      const previous = orders.patchOf(record);
      const merged = reconfigurer.merge(previous ?? {}, data);
      // Here first, the fleet's whole patch as every replica will apply it, checked as start-up checks it: refused (a
      // BreakerConfigError naming the breaker and the option), nothing is written, and the caller is told.
      const applied = reconfigurer.apply(breaker, merged);
      local ??= applied;
      // Known before the write, so that its own signal is recognised as applied.
      orders.setPatch(record, merged);
      orders.begin(record);
      let reply: unknown[];
      try {
        reply = await this.send<unknown[]>(
          record,
          'reconfigure',
          'reconfigured',
          this.configCall(record, orders.configGenerationOf(record), JSON.stringify(merged)),
        );
      } catch (error) {
        orders.setPatch(record, previous);
        orders.configDone(record, undefined);
        throw error;
      }
      if (reply[0] === 1) {
        orders.configDone(record, Number(reply[1]));
        return {
          ...local,
          fleet: {
            breaker: record.name,
            generation: Number(reply[1]),
            subscribers: Number(reply[2]),
          },
        };
      }
      // Another replica wrote one since this replica last heard: obey it, and merge over it.
      orders.setPatch(record, previous);
      orders.configDone(record, undefined);
      this.obeyStored(record, reply);
    }
    throw new FleetOrderError(
      messages.fleetConflict(record.name, FLEET_CONFIG_ATTEMPTS),
      record.name,
      'reconfigure',
    );
  }

  /**
   * Writes again an order this replica holds and Redis lost (see
   * `FleetOrdersLink.restore`), without obeying it again. A failure is the
   * store's as any operation's: the next read finds the order missing, and
   * tries again.
   */
  restore(record: SharedBreaker, order: RestoredOrder): void {
    const { orders } = this.link;
    orders.begin(record);
    const call =
      order.kind === 'force'
        ? this.forceCall(record, order.state, order.reason, order.by ?? '', order.until)
        : this.configCall(record, 0, JSON.stringify(order.patch));
    const kind = order.kind === 'force' ? 'force' : 'reconfigure';
    this.send<unknown[]>(record, kind, 'restored', call).then(
      (reply) => {
        if (order.kind === 'force') return orders.forceWritten(record, Number(reply[0]));
        // Refused: another replica wrote one meanwhile, which the next read obeys.
        orders.configDone(record, reply[0] === 1 ? Number(reply[1]) : undefined);
      },
      () => orders.end(record),
    );
  }

  /** The store's record of `breaker`; refused before anything changes when the store cannot carry the order at all. */
  private recordOf(breaker: Breaker, order: FleetOrderKind): SharedBreaker {
    // Closed (the application shut down): the order would be obeyed here only, by a replica that is stopping.
    if (this.link.connection.state === 'closed')
      throw new FleetOrderError(messages.fleetClosed(breaker.name, order), breaker.name, order);
    const record = this.link.recordOf(breaker);
    if (record === undefined) throw new TypeError(messages.fleetNotShared(breaker.name));
    return record;
  }

  /** Sends one order within the operation deadline; a failure becomes a `FleetOrderError` that says why. */
  private async send<T>(
    record: SharedBreaker,
    order: FleetOrderKind,
    what: string,
    call: ScriptCall,
  ): Promise<T> {
    const { connection, corrupt, slots, operationTimeoutMs } = this.link;
    const refuse = (why: string, cause?: unknown): never => {
      throw new FleetOrderError(messages.fleetNotTold(record.name, what, why), record.name, order, {
        cause,
      });
    };
    if (connection.state === 'closed') refuse(messages.why.closed);
    this.link.start();
    if (connection.state === 'connecting') {
      const ready = connection.whenReady();
      await withDeadline(ready, operationTimeoutMs, () => messages.why.connecting)
        .catch(() => undefined)
        .finally(() => ready.cancel());
    }
    if (!connection.shared)
      refuse(
        connection.state === 'connecting' ? messages.why.connecting : messages.why.unreachable,
      );
    if (corrupt.isolated(record)) refuse(messages.why.repairing);
    // A Cluster: its slot is known down, and the order would only wait out the deadline. The reconcile reads it again
    // at every interval while it is down, and brings it back as soon as it answers.
    if (slots.has(record)) refuse(messages.why.slotDown);
    try {
      const reply = await withDeadline(evalCall<T>(this.link.redis, call), operationTimeoutMs, () =>
        messages.timedOut('order', operationTimeoutMs),
      );
      connection.succeeded();
      corrupt.healthy(record);
      slots.answered(record);
      // A Cluster: the log lives in another slot, so the order is marked apart.
      markApart(this.link.redis, this.link.writer, record.breaker.clock.now(), [record.name]);
      return reply;
    } catch (error) {
      // A Cluster: the slot of this breaker's keys, not the store (see SlotOutages).
      if (isKeyError(error)) corrupt.report(record, error);
      else slots.keysFailed(record, error);
      return refuse(error instanceof Error ? error.message : String(error), error);
    }
  }

  /** The config script's answer when another replica wrote first: `[0, generation, patch, origin, at]`. */
  private obeyStored(record: SharedBreaker, reply: unknown[]): void {
    const [, generation, patch, origin, at] = reply.map(String);
    const stored = decodeConfigHash(record.name, { generation, patch, origin, at } as Record<
      string,
      string
    >);
    // Junk with a generation in range: nothing to obey, and the next attempt replaces it.
    if (stored === null || stored === undefined)
      this.link.orders.passConfig(record, decimalOf(generation));
    else this.link.orders.apply(record, stored);
  }

  private forceCall(
    record: SharedBreaker,
    state: FleetForceState,
    reason: string,
    by: string,
    until: number,
  ): ScriptCall {
    const { writer } = this.link;
    return [
      scriptOf(writer, FLEET_SCRIPTS.force),
      [record.keys.force, ...markKeys(this.link.writer)],
      // The breaker's clock, as every write of the store: generations and times are compared with it.
      [
        writer.instanceId,
        record.breaker.clock.now(),
        state,
        reason,
        by,
        until,
        signalChannel(writer, record.name),
        record.name,
        KEY_TTL_MS,
      ],
    ];
  }

  private configCall(record: SharedBreaker, expected: number, patch: string): ScriptCall {
    const { writer } = this.link;
    return [
      scriptOf(writer, FLEET_SCRIPTS.config),
      [record.keys.config, ...markKeys(writer)],
      [
        writer.instanceId,
        record.breaker.clock.now(),
        expected,
        patch,
        signalChannel(writer, record.name),
        record.name,
      ],
    ];
  }
}

/** The call that writes a replica's refusal of the fleet's reconfiguration of `generation` next to it. @internal */
export function refuseCall(
  writer: Writer,
  record: SharedBreaker,
  generation: number,
  message: string,
): ScriptCall {
  return [FLEET_SCRIPTS.refuse, [record.keys.config], [generation, writer.instanceId, message]];
}

/**
 * `patch` as it travels: plain data only (a function, a class instance or a
 * symbol would not survive JSON, and another replica would apply something
 * else), `undefined` dropped (it means "not given"). Throws a `TypeError`
 * naming the option otherwise.
 *
 * @internal
 */
export function plainPatch(breaker: string, patch: unknown): BreakerOptions {
  const walk = (value: unknown, path: string): unknown => {
    if (typeof value === 'string' || typeof value === 'boolean') return value;
    if (typeof value === 'number' && Number.isFinite(value)) return value;
    if (Array.isArray(value)) return value.map((item, i) => walk(item, `${path}[${i}]`));
    if (
      typeof value === 'object' &&
      value !== null &&
      [Object.prototype, null].includes(Object.getPrototypeOf(value))
    ) {
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value))
        if (item !== undefined) out[key] = walk(item, path === '' ? key : `${path}.${key}`);
      return out;
    }
    throw new TypeError(
      messages.fleetPatchNotData(breaker, path === '' ? '(the patch)' : path, value),
    );
  };
  return walk(patch, '') as BreakerOptions;
}
