import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toErrorPayload, CallTimeoutError, CallRejectedError } from '../../lib/index.js';
import { toGraphQLExtensions } from '../../lib/graphql/index.js';
import { classifyGraphQLResult } from '../../lib/graphql/graphql-result.classifier.js';
import { classifyGrpcError } from '../../lib/microservices/grpc-status.classifier.js';
import { classifyRpcError } from '../../lib/microservices/rpc-error.classifier.js';
import { build, hostileResolved, hostileThrown } from '../helpers/hostile-values.js';

/** A grpc-js ServiceError as ClientGrpc errors with it. */
const grpc = (code: number) =>
  Object.assign(new Error(`${code} status`), { code, details: 'from the server', metadata: {} });

describe('classifyGrpcError', () => {
  it('maps every status code as HTTP statuses are classified', () => {
    const names = [
      'OK',
      'CANCELLED',
      'UNKNOWN',
      'INVALID_ARGUMENT',
      'DEADLINE_EXCEEDED',
      'NOT_FOUND',
      'ALREADY_EXISTS',
      'PERMISSION_DENIED',
      'RESOURCE_EXHAUSTED',
      'FAILED_PRECONDITION',
      'ABORTED',
      'OUT_OF_RANGE',
      'UNIMPLEMENTED',
      'INTERNAL',
      'UNAVAILABLE',
      'DATA_LOSS',
      'UNAUTHENTICATED',
    ];
    expect(
      Object.fromEntries(names.map((name, code) => [name, classifyGrpcError(grpc(code))])),
    ).toEqual({
      OK: 'success',
      CANCELLED: 'ignored',
      UNKNOWN: 'failure',
      INVALID_ARGUMENT: 'success',
      DEADLINE_EXCEEDED: 'failure',
      NOT_FOUND: 'success',
      ALREADY_EXISTS: 'success',
      PERMISSION_DENIED: 'success',
      RESOURCE_EXHAUSTED: 'overload',
      FAILED_PRECONDITION: 'success',
      ABORTED: 'success',
      OUT_OF_RANGE: 'success',
      UNIMPLEMENTED: 'failure',
      INTERNAL: 'failure',
      UNAVAILABLE: 'failure',
      DATA_LOSS: 'failure',
      UNAUTHENTICATED: 'success',
    });
    expect(classifyGrpcError(grpc(8), false)).toBe('failure');
  });

  it('reads a numeric code only from errors shaped as grpc-js makes them', () => {
    // A database driver's numeric code (MongoDB's 11000, or a small one) is no gRPC status.
    expect(classifyGrpcError(Object.assign(new Error('dup'), { code: 5 }))).toBe('failure');
    expect(classifyGrpcError({ code: 17, details: 'x' })).toBe('failure');
    expect(classifyGrpcError({ code: 5, details: 'not found' })).toBe('success');
    expect(classifyGrpcError({ statusCode: 404 })).toBe('success');
  });

  it('an UNAVAILABLE with a pause hint is overload, as a 503 with Retry-After is', () => {
    const unavailable = (metadata: object, extra: object = {}) =>
      Object.assign(
        new Error('14 UNAVAILABLE'),
        { code: 14, details: 'shedding', metadata },
        extra,
      );
    const results = [
      classifyGrpcError(unavailable({ 'grpc-retry-pushback-ms': '250' })),
      classifyGrpcError(unavailable({ 'retry-after-ms': '250' })),
      classifyGrpcError(unavailable({ 'retry-after': '1' })),
      classifyGrpcError(unavailable({}, { retryAfterMs: 250 })),
      // gRFC A6: a negative pushback says "do not retry", no pause.
      classifyGrpcError(unavailable({ 'grpc-retry-pushback-ms': '-1' })),
      classifyGrpcError(unavailable({ 'circuit-breaker-code': 'CIRCUIT_OPEN' })),
      classifyGrpcError(unavailable({})),
      classifyGrpcError(unavailable({ 'grpc-retry-pushback-ms': '250' }), false),
      // grpc-js Metadata: read through getMap().
      classifyGrpcError(unavailable({ getMap: () => ({ 'grpc-retry-pushback-ms': '10' }) })),
    ];
    expect(results).toEqual([
      'overload',
      'overload',
      'overload',
      'overload',
      'failure',
      'failure',
      'failure',
      'failure',
      'overload',
    ]);
  });
});

describe('classifyRpcError', () => {
  it('classifies the shapes a ClientProxy errors with', () => {
    expect(classifyRpcError({ status: 'error', message: 'Internal server error' })).toBe('failure');
    expect(classifyRpcError({ statusCode: 400, message: 'bad' })).toBe('success');
    expect(classifyRpcError({ statusCode: 503 })).toBe('failure');
    expect(classifyRpcError({ statusCode: 429 })).toBe('overload');
    expect(classifyRpcError({ statusCode: 429 }, false)).toBe('failure');
    expect(classifyRpcError(Object.assign(new Error('x'), { name: 'TimeoutError' }))).toBe(
      'failure',
    );
    expect(classifyRpcError(new Error('Connection closed'))).toBe('failure');
    expect(classifyRpcError('bad input')).toBe('failure');
    const remoteOpen = { status: 'error', code: 'CIRCUIT_OPEN', message: 'x', retryAfterMs: 5 };
    expect(classifyRpcError(remoteOpen)).toBe('overload');
    expect(classifyRpcError(remoteOpen, false)).toBe('failure');
    expect(classifyRpcError({ status: 'error', code: 'CIRCUIT_OPEN', message: 'x' })).toBe(
      'failure',
    );
    expect(classifyRpcError({ status: 'error', code: 'CALL_TIMEOUT', message: 'x' })).toBe(
      'failure',
    );
  });
});

describe('classifyGraphQLResult', () => {
  const body = (...codes: (string | undefined)[]) => ({
    data: { a: null },
    errors: codes.map((code) => ({
      message: 'x',
      extensions: code === undefined ? {} : { code },
    })),
  });

  it('classifies an HTTP 200 answer by its errors, the worst first', () => {
    expect(classifyGraphQLResult({ data: { a: 1 } })).toBeUndefined();
    expect(classifyGraphQLResult(body())).toBeUndefined();
    expect(classifyGraphQLResult(body('BAD_USER_INPUT', 'UNAUTHENTICATED'))).toBe('success');
    expect(classifyGraphQLResult(body('ORDER_NOT_FOUND'))).toBe('success');
    expect(classifyGraphQLResult(body('BAD_USER_INPUT', 'INTERNAL_SERVER_ERROR'))).toBe('failure');
    expect(classifyGraphQLResult(body(undefined))).toBe('failure');
    expect(classifyGraphQLResult(body('TOO_MANY_REQUESTS', 'BAD_USER_INPUT'))).toBe('overload');
    expect(classifyGraphQLResult(body('RATE_LIMITED'), false)).toBe('failure');
    expect(classifyGraphQLResult(body('CIRCUIT_OPEN'))).toBe('failure');
    expect(
      classifyGraphQLResult({
        errors: [{ extensions: { code: 'CIRCUIT_OPEN', retryAfterMs: 10 } }],
      }),
    ).toBe('overload');
    expect(classifyGraphQLResult(body('CALL_TIMEOUT'))).toBe('failure');
  });

  it('reads an axios response of a 200, and leaves other statuses to the HTTP classification', () => {
    const axios = (status: number, data: unknown) => ({ status, headers: {}, data });
    expect(classifyGraphQLResult(axios(200, body('INTERNAL_SERVER_ERROR')))).toBe('failure');
    expect(classifyGraphQLResult(axios(200, { data: { a: 1 } }))).toBeUndefined();
    expect(classifyGraphQLResult(axios(503, body('BAD_USER_INPUT')))).toBeUndefined();
  });
});

describe('toErrorPayload', () => {
  const open = new CallRejectedError('payments', 'open', 'open', 1_500);
  const timeout = new CallTimeoutError('payments', 2_000);

  it('names nothing internal by default', () => {
    expect(toErrorPayload(open)).toEqual({
      status: 'error',
      code: 'CIRCUIT_OPEN',
      message: 'A dependency is unavailable; retry later.',
      retryAfterMs: 1_500,
    });
    expect(toErrorPayload(new CallRejectedError('p', 'isolated', 'isolated', undefined))).toEqual({
      status: 'error',
      code: 'CIRCUIT_OPEN',
      message: 'A dependency is unavailable; retry later.',
    });
    expect(toErrorPayload(timeout)).toEqual({
      status: 'error',
      code: 'CALL_TIMEOUT',
      message: 'A dependency did not answer in time; retry later.',
    });
    expect(toErrorPayload(new Error('other'))).toBeUndefined();
  });

  it('adds the breaker, the reason and the deadline with details', () => {
    expect(toErrorPayload(open, { details: true })).toEqual({
      status: 'error',
      code: 'CIRCUIT_OPEN',
      message: 'Circuit breaker "payments" rejected the call: the circuit is open.',
      retryAfterMs: 1_500,
      breaker: 'payments',
      reason: 'open',
    });
    expect(toGraphQLExtensions(toErrorPayload(timeout, { details: true })!)).toEqual({
      code: 'CALL_TIMEOUT',
      breaker: 'payments',
      timeoutMs: 2_000,
    });
  });
});

describe('transport classifiers on hostile values (property)', () => {
  it('never throw, and always answer an outcome', () => {
    const outcomes = new Set(['success', 'failure', 'ignored', 'overload']);
    fc.assert(
      fc.property(fc.oneof(hostileThrown, hostileResolved), fc.boolean(), (spec, overload) => {
        for (const classify of [classifyRpcError, classifyGrpcError]) {
          expect(outcomes.has(classify(build(spec), overload))).toBe(true);
        }
        const result = classifyGraphQLResult(build(spec), overload);
        expect(result === undefined || outcomes.has(result)).toBe(true);
        expect(() => toErrorPayload(build(spec))).not.toThrow();
      }),
      { seed: 15_0016, numRuns: 500 },
    );
  });
});
