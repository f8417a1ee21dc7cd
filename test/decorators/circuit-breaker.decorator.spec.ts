import { BadRequestException, Injectable, Module } from '@nestjs/common';
import { defer, firstValueFrom, Observable, of, throwError } from 'rxjs';
import { describe, expect, it, vi } from 'vitest';
import {
  CallTimeoutError,
  CircuitBreaker,
  CircuitBreakerModule,
  CircuitBreakerRegistry,
  CallRejectedError,
  getCallSignal,
  InjectCircuitBreaker,
  type Breaker,
  type CircuitBreakerModuleOptions,
} from '../../lib/index.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { nestApps } from '../helpers/nest-app.js';

const startApp = nestApps();
const start = (
  options: CircuitBreakerModuleOptions & { httpFilter?: boolean },
  providers: unknown[],
  controllers: unknown[] = [],
) => startApp([CircuitBreakerModule.forRoot(options)], { providers, controllers });

const down = () => Object.assign(new Error('upstream down'), { status: 503 });

describe('@CircuitBreaker() on providers', () => {
  @Injectable()
  class Catalog {
    calls = 0;
    healthy = false;

    @CircuitBreaker({ consecutiveFailures: 2, fallback: 'cachedProducts' })
    async products(category: string): Promise<string[]> {
      this.calls++;
      if (!this.healthy) throw down();
      return [`${category}-1`];
    }

    cachedProducts(error: unknown, category: string): string[] {
      return [`cached-${category}`, (error as Error).name];
    }

    @CircuitBreaker('catalog.search')
    async search(query: string): Promise<string> {
      this.calls++;
      if (query === 'bad') throw new BadRequestException('bad query');
      throw down();
    }
  }

  it('names the breaker ClassName.methodName, keeps `this`, and falls back by method name on failure and rejection', async () => {
    const app = await start({}, [Catalog]);
    const catalog = app.get(Catalog);
    const registry = app.get(CircuitBreakerRegistry);
    expect(registry.list()).toEqual(['Catalog.products', 'catalog.search']);
    expect(await catalog.products('shoes')).toEqual(['cached-shoes', 'Error']);
    expect(await catalog.products('shoes')).toEqual(['cached-shoes', 'Error']);
    expect(registry.get('Catalog.products').state).toBe('open');
    expect(await catalog.products('hats')).toEqual(['cached-hats', 'CallRejectedError']);
    expect(catalog.calls).toBe(2);
    expect(registry.get('Catalog.products').snapshot().totals.fallbacks).toBe(3);
  });

  it('never falls back for an outcome classified as success: a 400 reaches the caller', async () => {
    const app = await start({}, [Catalog]);
    const catalog = app.get(Catalog);
    const badQuery = await catalog.search('bad').catch((error: unknown) => error);
    expect(badQuery).toBeInstanceOf(BadRequestException);
    expect(badQuery).toMatchObject({ message: 'bad query' });
    expect(app.get(CircuitBreakerRegistry).get('catalog.search').snapshot().totals.successes).toBe(
      1,
    );
  });

  it('keeps the method name and arity', () => {
    expect(Catalog.prototype.products.name).toBe('products');
    expect(Catalog.prototype.products.length).toBe(1);
  });

  it('falls back by function with `this` the instance; a throwing fallback surfaces its own error with the original as cause', async () => {
    @Injectable()
    class Recommendations {
      readonly empty: string[] = [];
      @CircuitBreaker({
        fallback(this: Recommendations) {
          return this.empty;
        },
      })
      async forUser(): Promise<string[]> {
        throw down();
      }
      @CircuitBreaker({
        fallback: () => {
          throw new Error('fallback broke too');
        },
      })
      async strict(): Promise<string[]> {
        throw down();
      }
    }
    const app = await start({}, [Recommendations]);
    const service = app.get(Recommendations);
    expect(await service.forUser()).toBe(service.empty);
    const error = (await service.strict().catch((e: unknown) => e)) as Error;
    expect(error.message).toBe('fallback broke too');
    expect((error.cause as Error).message).toBe('upstream down');
  });

  it('applies the breaker deadline to Promise methods', async () => {
    vi.useFakeTimers();
    try {
      @Injectable()
      class Slow {
        @CircuitBreaker({ timeoutMs: 50, fallback: () => 'too slow' })
        async call(): Promise<string> {
          return new Promise(() => undefined);
        }
      }
      const app = await start({}, [Slow]);
      const result = app.get(Slow).call();
      await vi.advanceTimersByTimeAsync(50);
      expect(await result).toBe('too slow');
      expect(app.get(CircuitBreakerRegistry).get('Slow.call').snapshot().totals.timeouts).toBe(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it('hands the call signal to the method through getCallSignal(): the deadline really aborts the work', async () => {
    vi.useFakeTimers();
    try {
      const signals: (AbortSignal | undefined)[] = [];
      @Injectable()
      class Fetcher {
        @CircuitBreaker({ timeoutMs: 30 })
        async fetch(): Promise<string> {
          const signal = getCallSignal();
          signals.push(signal);
          await Promise.resolve();
          // Still the same signal after an await: it follows the async context.
          signals.push(getCallSignal());
          return new Promise(() => undefined);
        }
        @CircuitBreaker({ timeoutMs: false })
        async plain(): Promise<string> {
          signals.push(getCallSignal());
          return 'no deadline, no signal';
        }
      }
      const app = await start({}, [Fetcher]);
      const fetcher = app.get(Fetcher);
      const pending = fetcher.fetch().catch((e: unknown) => e);
      await vi.advanceTimersByTimeAsync(30);
      const timedOut = await pending;
      expect(timedOut).toBeInstanceOf(CallTimeoutError);
      expect(timedOut).toMatchObject({ breakerName: 'Fetcher.fetch', timeoutMs: 30 });
      expect(signals[0]).toBe(signals[1]);
      expect(signals[0]?.aborted).toBe(true);
      expect(signals[0]?.reason).toBe(timedOut);
      await fetcher.plain();
      expect(signals[2]).toBeUndefined();
      expect(getCallSignal()).toBeUndefined();
    } finally {
      vi.useRealTimers();
    }
  });

  it('keeps a synchronous method synchronous: a throw is the failure, a rejection throws at once', async () => {
    @Injectable()
    class Parser {
      @CircuitBreaker({ consecutiveFailures: 1 })
      parse(input: string): number {
        if (input === 'x') throw new Error('unparseable');
        return Number(input);
      }
    }
    const app = await start({}, [Parser]);
    const parser = app.get(Parser);
    expect(parser.parse('42')).toBe(42);
    expect(() => parser.parse('x')).toThrow('unparseable');
    expect(() => parser.parse('1')).toThrow(CallRejectedError);
    expect(() => parser.parse('1')).toThrow(
      'Circuit breaker "Parser.parse" rejected the call: the circuit is open.',
    );
  });

  it('runs Observable methods through the operator: each subscription is one call', async () => {
    @Injectable()
    class Feed {
      subscriptions = 0;
      @CircuitBreaker({ consecutiveFailures: 2, fallback: () => of('from fallback') })
      latest(fail: boolean): Observable<string> {
        return defer(() => {
          this.subscriptions++;
          return fail ? throwError(() => down()) : of('fresh');
        });
      }
    }
    const app = await start({}, [Feed]);
    const feed = app.get(Feed);
    const failing = feed.latest(true);
    expect(await firstValueFrom(failing)).toBe('from fallback');
    expect(await firstValueFrom(failing)).toBe('from fallback');
    expect(feed.subscriptions).toBe(2);
    // Open: the source is not subscribed at all.
    expect(await firstValueFrom(feed.latest(false))).toBe('from fallback');
    expect(feed.subscriptions).toBe(2);
    expect(app.get(CircuitBreakerRegistry).get('Feed.latest').snapshot().totals).toMatchObject({
      admitted: 2,
      rejected: { open: 1 },
    });
  });

  it('an Observable method whose fallback throws errors the subscriber with the fallback error, never an uncaught exception', async () => {
    const broken = new Error('fallback broken');
    @Injectable()
    class Quotes {
      @CircuitBreaker({ fallback: 'stale' })
      latest(): Observable<string> {
        return throwError(() => down());
      }

      stale(): string {
        throw broken;
      }

      @CircuitBreaker({ fallback: { lastGood: { maxAgeMs: 1_000 } } })
      cached(): Observable<string> {
        return throwError(() => down());
      }
    }
    const app = await start({}, [Quotes]);
    const quotes = app.get(Quotes);
    const error = await firstValueFrom(quotes.latest()).catch((e: unknown) => e);
    expect(error).toBe(broken);
    expect((error as Error).cause).toMatchObject({ message: 'upstream down' });
    // Nothing cached yet: the call's own error, through the same path.
    await expect(firstValueFrom(quotes.cached())).rejects.toMatchObject({
      message: 'upstream down',
    });
  });

  it('serves the last good result for the same arguments while fresh, then lets the error through', async () => {
    const clock = new ManualClock();
    @Injectable()
    class Prices {
      up = true;
      @CircuitBreaker({ fallback: { lastGood: { maxAgeMs: 60_000, maxEntries: 10 } } })
      async price(sku: string): Promise<number> {
        if (!this.up) throw down();
        return sku.length * 100;
      }
    }
    const app = await start({ clock }, [Prices]);
    const prices = app.get(Prices);
    expect(await prices.price('abc')).toBe(300);
    prices.up = false;
    clock.advance(60_000);
    expect(await prices.price('abc')).toBe(300);
    await expect(prices.price('abcd')).rejects.toThrow('upstream down'); // never seen: nothing to serve
    clock.advance(1);
    await expect(prices.price('abc')).rejects.toThrow('upstream down'); // 60,001 ms old: too stale
  });

  it('serves the last good value of an Observable method too', async () => {
    @Injectable()
    class Quotes {
      up = true;
      @CircuitBreaker({ fallback: { lastGood: { maxAgeMs: 1_000 } } })
      quote(symbol: string): Observable<number> {
        return defer(() => (this.up ? of(symbol.length * 10) : throwError(down)));
      }
    }
    const app = await start({}, [Quotes]);
    const quotes = app.get(Quotes);
    expect(await firstValueFrom(quotes.quote('ACME'))).toBe(40);
    quotes.up = false;
    expect(await firstValueFrom(quotes.quote('ACME'))).toBe(40);
    await expect(firstValueFrom(quotes.quote('NEW'))).rejects.toThrow('down');
  });

  it('arguments JSON cannot hold are served and counted as usual, only not cached', async () => {
    @Injectable()
    class Circular {
      @CircuitBreaker({ fallback: { lastGood: { maxAgeMs: 1_000 } } })
      async read(argument: object): Promise<string> {
        return `read ${Object.keys(argument).length}`;
      }
    }
    const app = await start({}, [Circular]);
    const circular: Record<string, unknown> = { a: 1 };
    circular.self = circular;
    expect(await app.get(Circular).read(circular)).toBe('read 2');
    expect(app.get(CircuitBreakerRegistry).get('Circular.read').snapshot().totals.successes).toBe(
      1,
    );
  });

  it('learns the kind of a method without type metadata from its first result, with the same behaviour before and after', async () => {
    // Plain JavaScript, decorated by hand: no design:returntype to read.
    class Untyped {
      up = false;
      async fetch(id: string) {
        if (!this.up) throw down();
        return `item ${id}`;
      }
      spare(error: unknown, id: string) {
        return `spare ${id} after ${(error as Error).name}`;
      }
    }
    const descriptor = Object.getOwnPropertyDescriptor(Untyped.prototype, 'fetch')!;
    CircuitBreaker({ name: 'untyped', consecutiveFailures: 2, fallback: 'spare' })(
      Untyped.prototype,
      'fetch',
      descriptor,
    );
    Object.defineProperty(Untyped.prototype, 'fetch', descriptor);
    const app = await start({}, [Untyped]);
    const untyped = app.get(Untyped);
    expect(await untyped.fetch('1')).toBe('spare 1 after Error'); // learned: a Promise method
    expect(await untyped.fetch('2')).toBe('spare 2 after Error'); // through execute(): opens the breaker
    expect(await untyped.fetch('3')).toBe('spare 3 after CallRejectedError');
    app.get(CircuitBreakerRegistry).get('untyped').reset();
    untyped.up = true;
    expect(await untyped.fetch('4')).toBe('item 4');
  });

  it('an instance Nest did not create gets a clear error (a rejection, for a Promise method)', async () => {
    await expect(new Catalog().products('x')).rejects.toThrow(
      'Circuit breaker "Catalog.products" on Catalog.products: no CircuitBreakerRegistry was injected into this instance.',
    );
  });
});

describe('@CircuitBreaker() start-up checks', () => {
  it('a fallback method that does not exist is an error at decoration time', () => {
    expect(() => {
      class Broken {
        @CircuitBreaker({ fallback: 'nope' })
        async call(): Promise<void> {}
      }
      return Broken;
    }).toThrow(
      '@CircuitBreaker() on Broken.call: option "fallback" names the method "nope", which does not exist on the class. Declare it, or pass a function.',
    );
  });

  it('rejects a lastGood cache without a freshness bound', () => {
    expect(() => {
      class Unbounded {
        @CircuitBreaker({ fallback: { lastGood: {} as never } })
        async call(): Promise<void> {}
      }
      return Unbounded;
    }).toThrow(
      '@CircuitBreaker() on Unbounded.call: option "fallback.lastGood.maxAgeMs" must be a positive number of milliseconds, got undefined.',
    );
  });

  it('an unknown breaker under strict fails app.init()', async () => {
    @Injectable()
    class Typo {
      @CircuitBreaker('paymnets')
      async pay(): Promise<void> {}
    }
    await expect(start({ strict: true, breakers: { payments: {} } }, [Typo])).rejects.toThrow(
      'Circuit breaker "paymnets" used by @CircuitBreaker() on Typo.pay is not defined, and CircuitBreakerModule is strict.',
    );
  });

  it('options for one name in two decorators fail app.init() naming both', async () => {
    @Injectable()
    class Twice {
      @CircuitBreaker({ name: 'shared', timeoutMs: 100 })
      async a(): Promise<void> {}
      @CircuitBreaker({ name: 'shared', timeoutMs: 200 })
      async b(): Promise<void> {}
    }
    await expect(start({}, [Twice])).rejects.toThrow(
      'Circuit breaker "shared" has options set in two places: @CircuitBreaker() on Twice.a and @CircuitBreaker() on Twice.b.',
    );
  });

  it('options in a decorator and in forRoot({ breakers }) fail app.init()', async () => {
    @Injectable()
    class Both {
      @CircuitBreaker({ name: 'payments', timeoutMs: 100 })
      async pay(): Promise<void> {}
    }
    await expect(start({ breakers: { payments: {} } }, [Both])).rejects.toThrow(
      'Circuit breaker "payments" has options set in two places: CircuitBreakerModule.forRoot({ breakers }) and @CircuitBreaker() on Both.pay.',
    );
  });

  it('a decorator that defines a breaker and a forFeature() that names it start together, sharing one breaker', async () => {
    @Injectable()
    class Payments {
      constructor(@InjectCircuitBreaker('payments') readonly injected: Breaker) {}
      @CircuitBreaker({ name: 'payments', timeoutMs: 250 })
      async charge(): Promise<string> {
        return 'charged';
      }
    }
    @Module({
      imports: [CircuitBreakerModule.forFeature(['payments'])],
      providers: [Payments],
      exports: [Payments],
    })
    class PaymentsModule {}
    const app = await startApp([CircuitBreakerModule.forRoot(), PaymentsModule]);
    const payments = app.get(Payments);
    expect(payments.injected.config.timeoutMs).toBe(250);
    expect(await payments.charge()).toBe('charged');
    expect(payments.injected.snapshot().totals.successes).toBe(1);
  });

  it('a per-key breaker without a key, or a key on a plain breaker, fails app.init()', async () => {
    @Injectable()
    class NoKey {
      @CircuitBreaker('hosts')
      async call(): Promise<void> {}
    }
    await expect(start({ breakers: { hosts: { perKey: {} } } }, [NoKey])).rejects.toThrow(
      'Circuit breaker "hosts" is per-key (perKey), but @CircuitBreaker() on NoKey.call gives no key. Add key: (...args) => target, so that each call goes to its target\'s breaker.',
    );
    @Injectable()
    class StrayKey {
      @CircuitBreaker({ name: 'plain', key: (host: string) => host })
      async call(_host: string): Promise<void> {}
    }
    await expect(start({ breakers: { plain: {} } }, [StrayKey])).rejects.toThrow(
      '@CircuitBreaker() on StrayKey.call gives a key, but circuit breaker "plain" is not per-key. Configure perKey: { maxKeys } on it, or remove the key.',
    );
  });

  it('a bad breaker option in a decorator fails app.init() naming the breaker and option', async () => {
    @Injectable()
    class BadOption {
      @CircuitBreaker({ minimumThroughput: 0 })
      async call(): Promise<void> {}
    }
    await expect(start({}, [BadOption])).rejects.toThrow(
      'Circuit breaker "BadOption.call" in @CircuitBreaker() on BadOption.call: option "minimumThroughput" must be an integer >= 1, got 0.',
    );
  });
});

describe('@CircuitBreaker() classification', () => {
  it('runs a custom classifier once per call, also for methods with a fallback', async () => {
    const seen: unknown[] = [];
    @Injectable()
    class Counted {
      @CircuitBreaker({
        fallback: () => 'fallback',
        classify: (error) => {
          seen.push(error);
          return undefined;
        },
        classifyResult: (value) => {
          seen.push(value);
          return undefined;
        },
      })
      async call(fail: boolean): Promise<string> {
        if (fail) throw down();
        return 'value';
      }
    }
    const app = await start({}, [Counted]);
    const counted = app.get(Counted);
    expect(await counted.call(false)).toBe('value');
    expect(await counted.call(true)).toBe('fallback');
    expect(seen).toHaveLength(2);
  });
});

describe('@CircuitBreaker() fallbacks for answers the breaker counts as failed', () => {
  /** A fetch Response: resolved, yet a 503 or a 429 is the dependency failing or refusing. */
  const answer = (status: number) => new Response(null, { status });
  const served = (error: unknown) => ({ servedFor: (error as Response).status });
  const fresh = { lastGood: { maxAgeMs: 60_000 } };

  // One class per shape; each has a method-name fallback, a function fallback and lastGood.
  @Injectable()
  class PromiseUpstream {
    status = 200;
    @CircuitBreaker({ name: 'promise.method', fallback: 'byMethod' })
    async method(): Promise<Response | object> {
      return answer(this.status);
    }
    @CircuitBreaker({ name: 'promise.function', fallback: served })
    async function(): Promise<Response | object> {
      return answer(this.status);
    }
    @CircuitBreaker({ name: 'promise.lastGood', fallback: fresh })
    async lastGood(id: string): Promise<Response> {
      return answer(id === 'never-good' ? 503 : this.status);
    }
    byMethod(error: unknown): object {
      return served(error);
    }
  }

  @Injectable()
  class ObservableUpstream {
    status = 200;
    @CircuitBreaker({ name: 'observable.method', fallback: 'byMethod' })
    method(): Observable<Response | object> {
      return defer(() => of(answer(this.status)));
    }
    @CircuitBreaker({ name: 'observable.function', fallback: served })
    function(): Observable<Response | object> {
      return defer(() => of(answer(this.status)));
    }
    @CircuitBreaker({ name: 'observable.lastGood', fallback: fresh })
    lastGood(id: string): Observable<Response> {
      return defer(() => of(answer(id === 'never-good' ? 503 : this.status)));
    }
    byMethod(error: unknown): object {
      return served(error);
    }
  }

  @Injectable()
  class SyncUpstream {
    status = 200;
    @CircuitBreaker({ name: 'sync.method', fallback: 'byMethod' })
    method(): Response | object {
      return answer(this.status);
    }
    @CircuitBreaker({ name: 'sync.function', fallback: served })
    function(): Response | object {
      return answer(this.status);
    }
    @CircuitBreaker({ name: 'sync.lastGood', fallback: fresh })
    lastGood(id: string): Response {
      return answer(id === 'never-good' ? 503 : this.status);
    }
    byMethod(error: unknown): object {
      return served(error);
    }
  }

  type Upstream = {
    status: number;
    method(): unknown;
    function(): unknown;
    lastGood(id: string): unknown;
  };
  const shapes = [
    {
      shape: 'Promise',
      type: PromiseUpstream,
      settle: (result: unknown) => result as Promise<unknown>,
    },
    {
      shape: 'Observable',
      type: ObservableUpstream,
      settle: (result: unknown) => firstValueFrom(result as Observable<unknown>),
    },
    { shape: 'sync', type: SyncUpstream, settle: async (result: unknown) => result },
  ];
  const prefix = (shape: string) => shape.toLowerCase();

  describe.each(shapes)('a $shape method', ({ shape, type, settle }) => {
    async function setUp() {
      const app = await start({}, [type]);
      const upstream = app.get<Upstream>(type as never);
      const registry = app.get(CircuitBreakerRegistry);
      const fallbacks = (method: string) =>
        registry.get(`${prefix(shape)}.${method}`).snapshot().totals.fallbacks;
      return {
        upstream,
        fallbacks,
        registry,
        call: (method: 'method' | 'function') => settle(upstream[method]()),
        lastGood: (id: string) => settle(upstream.lastGood(id)),
      };
    }

    it.each(['method', 'function'] as const)(
      'serves a %s fallback for a resolved 503 or 429, given the response, and counts it once',
      async (method) => {
        const { upstream, fallbacks, call } = await setUp();
        upstream.status = 503;
        expect(await call(method)).toEqual({ servedFor: 503 });
        upstream.status = 429;
        expect(await call(method)).toEqual({ servedFor: 429 });
        expect(fallbacks(method)).toBe(2);
      },
    );

    it.each(['method', 'function'] as const)(
      'lets a 200 or a 400 response through untouched (%s fallback)',
      async (method) => {
        const { upstream, fallbacks, call } = await setUp();
        expect(((await call(method)) as Response).status).toBe(200);
        upstream.status = 400;
        expect(((await call(method)) as Response).status).toBe(400);
        expect(fallbacks(method)).toBe(0);
      },
    );

    it.each(['method', 'function'] as const)(
      'counts a %s fallback served for a rejection once, under its own source',
      async (method) => {
        const { upstream, fallbacks, call, registry } = await setUp();
        const breaker = registry.get(`${prefix(shape)}.${method}`);
        const sources: string[] = [];
        breaker.on('fallback', (event) => sources.push(event.source));
        breaker.isolate();
        upstream.status = 200;
        expect(await call(method)).toEqual({ servedFor: undefined });
        expect(fallbacks(method)).toBe(1);
        expect(sources).toEqual([method]);
      },
    );

    it('serves the last good answer for a resolved 503, and the 503 itself when there is none', async () => {
      const { upstream, fallbacks, lastGood } = await setUp();
      const good = (await lastGood('p1')) as Response;
      expect(good.status).toBe(200);
      upstream.status = 503;
      expect(await lastGood('p1')).toBe(good);
      // Nothing to serve: the caller gets what the call produced, as without a fallback.
      const never = (await lastGood('never-good')) as Response;
      expect(never.status).toBe(503);
      expect(fallbacks('lastGood')).toBe(1);
    });
  });
});

describe('@CircuitBreaker() with a bulkhead queue', () => {
  // The queue's wait may not exceed the breaker's deadline (2 s by default).
  const bulkhead = { maxConcurrent: 1, maxQueue: 1, queueTimeoutMs: 1_500 };
  const gate = () => {
    let open!: (value: string) => void;
    const promise = new Promise<string>((resolve) => (open = resolve));
    return { promise, open };
  };

  @Injectable()
  class Upstream {
    readonly gates: { promise: Promise<string>; open(value: string): void }[] = [];
    started: string[] = [];

    @CircuitBreaker({ name: 'queued.fallback', bulkhead, fallback: 'busy' })
    async withFallback(id: string): Promise<string> {
      return this.work(id);
    }

    @CircuitBreaker({ name: 'queued.plain', bulkhead })
    async withoutFallback(id: string): Promise<string> {
      return this.work(id);
    }

    @CircuitBreaker({
      name: 'queued.keyed',
      bulkhead,
      perKey: { maxKeys: 10 },
      fallback: 'busy',
      key: (id: string) => id,
    })
    async keyed(id: string): Promise<string> {
      return this.work(id);
    }

    busy(error: unknown, id: string): string {
      return `busy ${id}: ${(error as CallRejectedError).reason}`;
    }

    private work(id: string): Promise<string> {
      this.started.push(id);
      const g = gate();
      this.gates.push(g);
      return g.promise;
    }
  }

  const settledNow = async (promise: Promise<unknown>) => {
    let settled = false;
    void promise.then(
      () => (settled = true),
      () => (settled = true),
    );
    await new Promise((resolve) => setImmediate(resolve));
    return settled;
  };

  it.each([
    ['withFallback', 'queued.fallback'],
    ['withoutFallback', 'queued.plain'],
    ['keyed', 'queued.keyed[k]'],
  ] as const)(
    '%s: a second concurrent call waits for the slot, whether or not there is a fallback',
    async (method, breakerName) => {
      const app = await start({}, [Upstream]);
      const upstream = app.get(Upstream);
      const registry = app.get(CircuitBreakerRegistry);
      const first = upstream[method]('k');
      const second = upstream[method]('k');
      expect(await settledNow(second)).toBe(false);
      expect(upstream.started).toEqual(['k']);
      const breaker =
        method === 'keyed' ? registry.get('queued.keyed').forKey('k') : registry.get(breakerName);
      expect(breaker.snapshot().bulkhead).toMatchObject({ active: 1, queued: 1 });
      upstream.gates[0]!.open('one');
      expect(await first).toBe('one');
      await settledNow(second);
      expect(upstream.started).toEqual(['k', 'k']);
      upstream.gates[1]!.open('two');
      expect(await second).toBe('two');
      expect(breaker.snapshot().totals).toMatchObject({
        successes: 2,
        rejected: { total: 0 },
        fallbacks: 0,
      });
    },
  );

  it('a call past the queue gets the fallback at once (bulkhead-full); the queued one still waits its turn', async () => {
    const app = await start({}, [Upstream]);
    const upstream = app.get(Upstream);
    const first = upstream.withFallback('a');
    const second = upstream.withFallback('b');
    expect(await upstream.withFallback('c')).toBe('busy c: bulkhead-full');
    upstream.gates[0]!.open('one');
    await first;
    await settledNow(second);
    upstream.gates[1]!.open('two');
    expect(await second).toBe('two');
    expect(upstream.started).toEqual(['a', 'b']);
    expect(app.get(CircuitBreakerRegistry).get('queued.fallback').snapshot().totals).toMatchObject({
      successes: 2,
      rejected: { 'bulkhead-full': 1 },
      fallbacks: 1,
    });
  });
});
