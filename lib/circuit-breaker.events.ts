import { Injectable } from '@nestjs/common';
import { Observable, Subject } from 'rxjs';
import { BREAKER_EVENT_NAMES, type Breaker, type BreakerEventName } from './core/index.js';
import { circuitBreakerMessages } from './circuit-breaker.messages.js';
import type { CircuitBreakerEvent } from './interfaces/circuit-breaker-event.interface.js';

/** A family's own call events only mirror its children's: they are reported by the children. */
const CALL_EVENTS = new Set<BreakerEventName>([
  'success',
  'failure',
  'ignored',
  'timeout',
  'slowCall',
]);

/**
 * The events of every breaker of one application, tagged with the breaker's
 * name (and a per-key child's `key`): per-key children and breakers created
 * later included. Inject it to react to breakers (a logger, metrics, an
 * alert): `observe()` listens to the event types named, `events$` to all of
 * them. Breakers are only listened to while someone observes, so an
 * unobserved application pays nothing for it.
 *
 * @publicApi
 */
@Injectable()
export class CircuitBreakerEvents {
  /**
   * Every event of every breaker, as an RxJS Observable: the breakers are
   * listened to from the first subscription to the last unsubscription.
   * `CircuitBreakerRegistry.events$` is this same Observable.
   */
  readonly events$: Observable<CircuitBreakerEvent>;

  private readonly breakers: Breaker[] = [];
  private readonly observers = new Set<Observer>();
  private readonly subject = new Subject<CircuitBreakerEvent>();
  private stopSubject: (() => void) | undefined;
  private subscribers = 0;

  constructor() {
    this.events$ = new Observable<CircuitBreakerEvent>((subscriber) => {
      const subscription = this.subject.subscribe(subscriber);
      if (this.subscribers++ === 0)
        this.stopSubject = this.observe(BREAKER_EVENT_NAMES, (event) => this.subject.next(event));
      return () => {
        subscription.unsubscribe();
        if (--this.subscribers === 0) {
          this.stopSubject?.();
          this.stopSubject = undefined;
        }
      };
    });
  }

  /**
   * Calls `sink` with every event of the given types from every breaker,
   * per-key children and breakers created later included, until the returned
   * function is called. Only the named types are listened to, so watching
   * transitions costs a healthy call nothing. A family reports its own
   * transitions, rejections and probes; its calls are reported once, by the
   * children that made them. `evicted` is told of each per-key child its
   * family evicts, after which that child's events no longer reach `sink` (a
   * call still in flight on it settles unreported), so what `sink` keeps per
   * key can be dropped for good.
   */
  observe(
    types: readonly BreakerEventName[],
    sink: (event: CircuitBreakerEvent) => void,
    evicted?: (name: string, key: string) => void,
  ): () => void {
    const observer: Observer = {
      types: checkTypes(types),
      sink,
      evicted,
      offs: [],
      childOffs: new WeakMap(),
    };
    if (typeof sink !== 'function')
      throw new TypeError(
        circuitBreakerMessages.invalidObserveArgument('sink', sink, 'a function (event) => void'),
      );
    if (evicted !== undefined && typeof evicted !== 'function') {
      throw new TypeError(
        circuitBreakerMessages.invalidObserveArgument(
          'evicted',
          evicted,
          'a function (name, key) => void, or undefined',
        ),
      );
    }
    this.observers.add(observer);
    for (const breaker of this.breakers) this.attach(observer, breaker);
    return () => {
      if (!this.observers.delete(observer)) return;
      for (const off of observer.offs) off();
      for (const breaker of this.breakers) {
        for (const child of breaker.children())
          observer.childOffs.get(child)?.forEach((off) => off());
      }
    };
  }

  /** @internal A breaker of the application, observed from now on by every observer, present and future. */
  track(breaker: Breaker): void {
    this.breakers.push(breaker);
    for (const observer of this.observers) this.attach(observer, breaker);
  }

  /** @internal Forgets every observer, before the breakers are disposed. */
  detachAll(): void {
    this.observers.clear();
  }

  /** @internal Completes `events$`: the application is shutting down. */
  complete(): void {
    this.subject.complete();
  }

  private attach(observer: Observer, breaker: Breaker): void {
    observer.offs.push(...this.listen(observer, breaker, breaker.name, undefined));
    if (breaker.config.perKey === undefined) return;
    // Children's listeners live in a weak map: an evicted child takes them with it.
    const attachChild = (child: Breaker) =>
      observer.childOffs.set(child, this.listen(observer, child, breaker.name, child.key));
    for (const child of breaker.children()) attachChild(child);
    observer.offs.push(breaker.onChild(attachChild));
    observer.offs.push(
      breaker.onEvict((child) => {
        observer.childOffs.get(child)?.forEach((off) => off());
        observer.childOffs.delete(child);
        observer.evicted?.(breaker.name, child.key!);
      }),
    );
  }

  private listen(
    observer: Observer,
    breaker: Breaker,
    name: string,
    key: string | undefined,
  ): (() => void)[] {
    const { sink } = observer;
    // A family's own call events only mirror its children's (a family probe is a child's call): reporting
    // both would count one call twice. The family reports its transitions, rejections and probes.
    const family = key === undefined && breaker.config.perKey !== undefined;
    const types = family ? observer.types.filter((type) => !CALL_EVENTS.has(type)) : observer.types;
    return types.map((type) =>
      breaker.on(type, (payload) =>
        sink(
          (key === undefined
            ? { breaker: name, type, payload }
            : { breaker: name, key, type, payload }) as CircuitBreakerEvent,
        ),
      ),
    );
  }
}

/** The event types to observe, read once: an array of known event names (checked before any breaker is listened to). */
function checkTypes(types: unknown): BreakerEventName[] {
  const expected = `an array of event names (${BREAKER_EVENT_NAMES.join(', ')})`;
  let copy: unknown[] | undefined;
  try {
    if (Array.isArray(types)) copy = [...(types as unknown[])];
  } catch {
    // A revoked Proxy: reported below as not an array.
  }
  if (copy === undefined)
    throw new TypeError(circuitBreakerMessages.invalidObserveArgument('types', types, expected));
  for (const type of copy) {
    if (!(BREAKER_EVENT_NAMES as readonly unknown[]).includes(type))
      throw new TypeError(circuitBreakerMessages.invalidObserveArgument('types', type, expected));
  }
  return copy as BreakerEventName[];
}

interface Observer {
  readonly types: readonly BreakerEventName[];
  readonly sink: (event: CircuitBreakerEvent) => void;
  readonly evicted: ((name: string, key: string) => void) | undefined;
  readonly offs: (() => void)[];
  readonly childOffs: WeakMap<Breaker, (() => void)[]>;
}
