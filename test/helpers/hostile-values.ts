/* oxlint-disable unicorn/no-thenable -- hostile thenables are what this file generates */
import fc from 'fast-check';

/**
 * Generators of what a misbehaving dependency, client library or caller can
 * throw or return, for the hostile-input property suites: plain junk, frozen
 * objects, Proxies whose every trap throws, revoked Proxies, and errors whose
 * classification-relevant getters throw.
 */

/** The properties the default classification reads. */
const READ_PROPERTIES = [
  'status',
  'statusCode',
  'headers',
  'response',
  'getStatus',
  'retryAfterMs',
  'code',
  'cause',
  'name',
  'getResponse',
] as const;

class TrapError extends Error {}

/** A Proxy whose every trap throws: reading anything of it, even its prototype, fails. */
function trappingProxy(): object {
  const trap = () => {
    throw new TrapError('trap');
  };
  return new Proxy(
    {},
    {
      get: trap,
      has: trap,
      getPrototypeOf: trap,
      ownKeys: trap,
      getOwnPropertyDescriptor: trap,
      defineProperty: trap,
      set: trap,
      apply: trap,
    },
  );
}

function revokedProxy(): object {
  const { proxy, revoke } = Proxy.revocable(new Error('revoked'), {});
  revoke();
  return proxy;
}

/** An Error (or a plain object) whose getters for `properties` throw. */
function throwingGetters(properties: readonly string[], base: 'error' | 'object'): object {
  const target: object = base === 'error' ? new Error('hostile') : {};
  for (const property of properties) {
    Object.defineProperty(target, property, {
      get() {
        throw new TypeError(`${property} getter exploded`);
      },
    });
  }
  return target;
}

/** A value with a readable status but hostile headers or bodies (the Retry-After readers' inputs). */
function hostileResponseShape(status: number, headers: unknown): object {
  return Object.assign(new Error(`HTTP ${status}`), { response: { status, headers } });
}

/**
 * Hostile values are described as plain data and built fresh when a call runs:
 * fast-check inspects what it generates, and a Proxy that traps would break it.
 */
export type ValueSpec =
  | { shape: 'constant'; value: unknown }
  | { shape: 'frozen-error' }
  | { shape: 'frozen-response'; status: number }
  | { shape: 'trapping-proxy' }
  | { shape: 'revoked-proxy' }
  | { shape: 'throwing-getters'; properties: string[]; base: 'error' | 'object' }
  | {
      shape: 'hostile-headers';
      status: number;
      headers: 'trapping-proxy' | 'throwing-get' | 'array' | 'huge' | 'past-date' | 'negative';
    };

export function build(spec: ValueSpec): unknown {
  switch (spec.shape) {
    case 'constant':
      return spec.value;
    case 'frozen-error':
      return Object.freeze(new Error('frozen'));
    case 'frozen-response':
      return Object.freeze({ status: spec.status, headers: Object.freeze({ 'retry-after': '1' }) });
    case 'trapping-proxy':
      return trappingProxy();
    case 'revoked-proxy':
      return revokedProxy();
    case 'throwing-getters':
      return throwingGetters(spec.properties, spec.base);
    case 'hostile-headers':
      return hostileResponseShape(spec.status, hostileHeaders(spec.headers));
  }
}

function hostileHeaders(
  kind: Extract<ValueSpec, { shape: 'hostile-headers' }>['headers'],
): unknown {
  switch (kind) {
    case 'trapping-proxy':
      return trappingProxy();
    case 'throwing-get':
      return {
        get: () => {
          throw new Error('get exploded');
        },
      };
    case 'array':
      return { 'retry-after': ['not', 'a', 'number'] };
    case 'huge':
      return { 'retry-after': '9'.repeat(400) };
    case 'past-date':
      return { 'retry-after': 'Wed, 21 Oct 2015 07:28:00 GMT' };
    case 'negative':
      return { 'retry-after': -5 };
  }
}

const constant = (value: unknown): ValueSpec => ({ shape: 'constant', value });

/** A value a call may reject or throw with. Rejection never reads `then`: the caller must get exactly this value back. */
export const hostileThrown: fc.Arbitrary<ValueSpec> = fc.oneof(
  fc
    .constantFrom(
      null,
      undefined,
      0,
      -1,
      Number.NaN,
      '',
      'boom',
      true,
      10n ** 30n,
      Symbol.for('hostile'),
    )
    .map(constant),
  fc.string({ maxLength: 20 }).map(constant),
  fc.constant<ValueSpec>({ shape: 'frozen-error' }),
  fc.constantFrom(429, 503).map((status): ValueSpec => ({ shape: 'frozen-response', status })),
  fc.constant<ValueSpec>({ shape: 'trapping-proxy' }),
  fc.constant<ValueSpec>({ shape: 'revoked-proxy' }),
  fc
    .tuple(
      fc.subarray([...READ_PROPERTIES], { minLength: 1 }),
      fc.constantFrom('error' as const, 'object' as const),
    )
    .map(([properties, base]): ValueSpec => ({ shape: 'throwing-getters', properties, base })),
  fc
    .tuple(
      fc.constantFrom(400, 404, 408, 429, 500, 503, 599, 600, 99),
      fc.constantFrom(
        'trapping-proxy' as const,
        'throwing-get' as const,
        'array' as const,
        'huge' as const,
        'past-date' as const,
        'negative' as const,
      ),
    )
    .map(([status, headers]): ValueSpec => ({ shape: 'hostile-headers', status, headers })),
);

/** A value a call may resolve with. Those whose `then` cannot be read make the promise reject (as `await` does). */
export const hostileResolved: fc.Arbitrary<ValueSpec> = fc.oneof(
  fc
    .constantFrom(null, undefined, 0, Number.NaN, '', 'ok', 10n ** 30n, Symbol.for('value'))
    .map(constant),
  fc
    .constantFrom(200, 429, 500, 503)
    .map((status): ValueSpec => ({ shape: 'frozen-response', status })),
  fc
    .tuple(
      fc.subarray(['status', 'statusCode', 'headers', 'response', 'getStatus', 'retryAfterMs'], {
        minLength: 1,
      }),
      fc.constantFrom('error' as const, 'object' as const),
    )
    .map(([properties, base]): ValueSpec => ({ shape: 'throwing-getters', properties, base })),
  fc
    .constantFrom(429, 500, 503)
    .map((status): ValueSpec => ({ shape: 'hostile-headers', status, headers: 'trapping-proxy' })),
  fc.constant<ValueSpec>({ shape: 'trapping-proxy' }),
  fc.constant<ValueSpec>({ shape: 'revoked-proxy' }),
);

/** How a protected call behaves. */
export type Behaviour =
  | { kind: 'resolve'; value: ValueSpec }
  | { kind: 'return'; value: ValueSpec }
  | { kind: 'reject'; error: ValueSpec }
  | { kind: 'throw'; error: ValueSpec }
  | { kind: 'thenable-throws'; error: ValueSpec }
  | { kind: 'thenable-settles-twice'; first: 'resolve' | 'reject'; value: ValueSpec }
  | { kind: 'hang' };

export const behaviour: fc.Arbitrary<Behaviour> = fc.oneof(
  hostileResolved.map((value): Behaviour => ({ kind: 'resolve', value })),
  hostileResolved.map((value): Behaviour => ({ kind: 'return', value })),
  hostileThrown.map((error): Behaviour => ({ kind: 'reject', error })),
  hostileThrown.map((error): Behaviour => ({ kind: 'throw', error })),
  hostileThrown.map((error): Behaviour => ({ kind: 'thenable-throws', error })),
  fc
    .tuple(fc.constantFrom('resolve' as const, 'reject' as const), hostileThrown)
    .map(([first, value]): Behaviour => ({ kind: 'thenable-settles-twice', first, value })),
  fc.constant<Behaviour>({ kind: 'hang' }),
);

/** What a call built and handed over, so that the caller's outcome can be compared by identity. */
export interface Performed {
  value?: unknown;
}

/** Runs a behaviour: the body of the function a breaker protects. */
export function perform(b: Behaviour, performed: Performed): unknown {
  switch (b.kind) {
    case 'resolve': {
      const value = (performed.value = build(b.value));
      return Promise.resolve().then(() => value);
    }
    case 'return':
      return (performed.value = build(b.value));
    case 'reject':
      return Promise.reject((performed.value = build(b.error)));
    case 'throw':
      throw (performed.value = build(b.error));
    case 'thenable-throws': {
      const error = (performed.value = build(b.error));
      return {
        then() {
          throw error;
        },
      };
    }
    case 'thenable-settles-twice': {
      const value = (performed.value = build(b.value));
      return {
        then(resolve: (v: unknown) => void, reject: (e: unknown) => void) {
          if (b.first === 'resolve') {
            resolve(value);
            reject(new Error('second settlement'));
          } else {
            reject(value);
            resolve('second settlement');
          }
          resolve('third settlement');
        },
      };
    }
    case 'hang':
      return new Promise(() => undefined);
  }
}

/**
 * The call's own outcome, as the caller must see it when the call ran:
 * `undefined` when only a deadline or an abort can end it.
 */
export function ownOutcome(
  b: Behaviour,
  performed: Performed,
): { resolves: unknown } | { rejects: (e: unknown) => boolean } | undefined {
  const value = performed.value;
  switch (b.kind) {
    case 'resolve':
    case 'return':
      return resolutionOf(value);
    case 'reject':
    case 'throw':
    case 'thenable-throws':
      return { rejects: (e) => Object.is(e, value) };
    case 'thenable-settles-twice':
      return b.first === 'resolve' ? resolutionOf(value) : { rejects: (e) => Object.is(e, value) };
    case 'hang':
      return undefined;
  }
}

/** How a promise resolved with `value` settles: with the value, or with what reading its `then` threw. */
function resolutionOf(
  value: unknown,
): { resolves: unknown } | { rejects: (e: unknown) => boolean } {
  if ((typeof value !== 'object' || value === null) && typeof value !== 'function')
    return { resolves: value };
  let then: unknown;
  try {
    then = (value as { then?: unknown }).then;
  } catch (error) {
    // A revoked Proxy throws a new TypeError on every read: any TypeError will do.
    return {
      rejects: (e) =>
        Object.is(e, error) ||
        (error instanceof TypeError && e instanceof TypeError) ||
        (error instanceof TrapError && e instanceof TrapError),
    };
  }
  return typeof then === 'function' ? { rejects: () => true } : { resolves: value };
}
