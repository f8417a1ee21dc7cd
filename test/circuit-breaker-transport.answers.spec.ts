import type { ArgumentsHost } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { firstValueFrom, isObservable, type Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import {
  CallTimeoutError,
  CircuitBreakerExceptionFilter,
  CallRejectedError,
} from '../lib/index.js';
import { classifyGrpcError } from '../lib/microservices/grpc-status.classifier.js';

/** An ArgumentsHost of `type` whose WebSocket client is `client`: what the filter reads outside HTTP. */
function hostOf(type: string, client: unknown = undefined, rpcContext?: unknown): ArgumentsHost {
  return {
    getType: () => type,
    switchToRpc: () => ({ getContext: () => rpcContext, getData: () => ({}) }),
    switchToWs: () => ({ getClient: () => client, getData: () => ({}), getPattern: () => 'p' }),
    getArgs: () => [],
    getArgByIndex: () => undefined,
  } as unknown as ArgumentsHost;
}

const open = new CallRejectedError('payments', 'open', 'open', 2_000);
const PAYLOAD = {
  status: 'error',
  code: 'CIRCUIT_OPEN',
  message: 'A dependency is unavailable; retry later.',
  retryAfterMs: 2_000,
};

describe('CircuitBreakerExceptionFilter.catch() outside HTTP, for filters that delegate to it', () => {
  const filter = new CircuitBreakerExceptionFilter(new HttpAdapterHost());

  it('returns false for any other error, whatever the transport', () => {
    for (const type of ['http', 'rpc', 'ws', 'graphql', 'kafka-like'])
      expect(filter.catch(new Error('other'), hostOf(type))).toBe(false);
  });

  it('rpc: an Observable that errors with the payload', async () => {
    const answer = filter.catch(open, hostOf('rpc'));
    expect(isObservable(answer)).toBe(true);
    await expect(firstValueFrom(answer as Observable<never>)).rejects.toEqual(PAYLOAD);
  });

  it("rpc over gRPC (the context is the call's Metadata): UNAVAILABLE or DEADLINE_EXCEEDED, the code and the wait in trailing metadata", async () => {
    /** The shape of grpc-js's Metadata, which is not installed here. */
    class Metadata {
      internalRepr = new Map<string, string[]>();
      set(key: string, value: string) {
        this.internalRepr.set(key, [value]);
      }
      getMap() {
        return Object.fromEntries([...this.internalRepr].map(([k, [v]]) => [k, v]));
      }
    }
    const rejected = filter.catch(open, hostOf('rpc', undefined, new Metadata()));
    const error = (await firstValueFrom(rejected as Observable<never>).catch(
      (caught: unknown) => caught,
    )) as { code: number; details: string; metadata: Metadata };
    expect([error.code, error.details, error.metadata.getMap()]).toEqual([
      14,
      PAYLOAD.message,
      { 'circuit-breaker-code': 'CIRCUIT_OPEN', 'retry-after-ms': '2000' },
    ]);
    // What a gRPC client then classifies: the remote breaker says when to retry, so back off (a failure without overload).
    expect([classifyGrpcError(error), classifyGrpcError(error, false)]).toEqual([
      'overload',
      'failure',
    ]);
    expect(classifyGrpcError({ ...error, metadata: new Metadata() })).toBe('failure');
    const timedOut = filter.catch(
      new CallTimeoutError('payments', 50),
      hostOf('rpc', undefined, new Metadata()),
    );
    await expect(firstValueFrom(timedOut as Observable<never>)).rejects.toMatchObject({
      code: 4,
      metadata: { internalRepr: new Map([['circuit-breaker-code', ['CALL_TIMEOUT']]]) },
    });
  });

  it('ws: sends the exception message to a native WebSocket, emits it on a Socket.IO socket', () => {
    const sent: string[] = [];
    const emitted: unknown[] = [];
    const native = { readyState: 1, send: (data: string) => sent.push(data), emit: () => 0 };
    // A Socket.IO socket has send() too (a 'message' event): no readyState tells it from a native WebSocket.
    const socketIo = {
      emit: (event: string, data: unknown) => emitted.push([event, data]),
      send: (data: unknown) => emitted.push(['message', data]),
    };
    expect(filter.catch(open, hostOf('ws', native))).toBe(true);
    expect(filter.catch(new CallTimeoutError('payments', 50), hostOf('ws', socketIo))).toBe(true);
    expect(sent.map((data) => JSON.parse(data) as unknown)).toEqual([
      { event: 'exception', data: PAYLOAD },
    ]);
    expect(emitted).toEqual([
      [
        'exception',
        {
          status: 'error',
          code: 'CALL_TIMEOUT',
          message: 'A dependency did not answer in time; retry later.',
        },
      ],
    ]);
  });

  it("graphql: the field's error, carrying the code in its extensions", () => {
    const answer = filter.catch(open, hostOf('graphql')) as Error & { extensions: unknown };
    expect(answer).toBeInstanceOf(Error);
    expect([answer.message, answer.extensions]).toEqual([
      PAYLOAD.message,
      { code: 'CIRCUIT_OPEN', retryAfterMs: 2_000 },
    ]);
  });

  it("rethrows for a transport it does not know, for that transport's own handling", () => {
    expect(() => filter.catch(open, hostOf('kafka-like'))).toThrow(open);
  });
});

describe('CircuitBreakerExceptionFilter built by hand without an HTTP adapter', () => {
  it('answers every transport but HTTP, and leaves an HTTP request to Nest', async () => {
    const filter = new CircuitBreakerExceptionFilter(undefined, { details: true });
    const rpc = filter.catch(open, hostOf('rpc'));
    await expect(firstValueFrom(rpc as Observable<never>)).rejects.toEqual({
      ...PAYLOAD,
      message: 'Circuit breaker "payments" rejected the call: the circuit is open.',
      breaker: 'payments',
      reason: 'open',
    });
    expect(filter.catch(open, hostOf('graphql'))).toMatchObject({
      message: 'Circuit breaker "payments" rejected the call: the circuit is open.',
      extensions: { code: 'CIRCUIT_OPEN', retryAfterMs: 2_000, breaker: 'payments' },
    });
    expect(() => filter.catch(open, hostOf('http'))).toThrow(open);
    expect(filter.catch(new Error('other'), hostOf('http'))).toBe(false);
  });

  it('is what the subpaths’ deprecated filters are, with their options', async () => {
    const { CircuitBreakerRpcExceptionFilter } = await import('../lib/microservices/index.js');
    const { CircuitBreakerWsExceptionFilter } = await import('../lib/websockets/index.js');
    const { CircuitBreakerGraphQLExceptionFilter } = await import('../lib/graphql/index.js');
    for (const Filter of [
      CircuitBreakerRpcExceptionFilter,
      CircuitBreakerWsExceptionFilter,
      CircuitBreakerGraphQLExceptionFilter,
    ]) {
      const filter = new Filter({ details: true });
      expect(filter).toBeInstanceOf(CircuitBreakerExceptionFilter);
      const rpc = filter.catch(open, hostOf('rpc'));
      await expect(firstValueFrom(rpc as Observable<never>)).rejects.toMatchObject({
        code: 'CIRCUIT_OPEN',
        breaker: 'payments',
      });
    }
  });
});
