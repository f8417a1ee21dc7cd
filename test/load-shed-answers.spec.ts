import type { ArgumentsHost } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { firstValueFrom, type Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import {
  CallRejectedError,
  CircuitBreakerExceptionFilter,
  toErrorPayload,
  toHttpResponse,
} from '../lib/index.js';
import { classifyGraphQLResult } from '../lib/graphql/index.js';
import { classifyRpcError } from '../lib/microservices/index.js';

/** What a concurrency limiter refuses a request with. */
const shed = new CallRejectedError('api', 'closed', 'shed', 1_000);
const PAYLOAD = {
  status: 'error',
  code: 'LOAD_SHED',
  message: 'The service is overloaded; retry later.',
  retryAfterMs: 1_000,
};

describe('the answers to a shed request', () => {
  it('over HTTP: 503, Retry-After and a body that says the service itself is overloaded', () => {
    expect(toHttpResponse(shed)).toEqual({
      status: 503,
      headers: { 'Retry-After': '1' },
      body: {
        statusCode: 503,
        error: 'Service Unavailable',
        code: 'LOAD_SHED',
        message: 'The service is overloaded; retry later.',
      },
    });
    expect(toHttpResponse(shed, { details: true })?.body).toEqual({
      statusCode: 503,
      error: 'Service Unavailable',
      code: 'LOAD_SHED',
      message: shed.message,
      breaker: 'api',
      reason: 'shed',
      retryAfterMs: 1_000,
    });
  });

  it('outside HTTP: the LOAD_SHED payload, and the names only with details', () => {
    expect(toErrorPayload(shed)).toEqual(PAYLOAD);
    expect(toErrorPayload(shed, { details: true })).toEqual({
      ...PAYLOAD,
      message: shed.message,
      breaker: 'api',
      reason: 'shed',
    });
  });

  it('over gRPC: UNAVAILABLE (clients retry it later), the code in trailing metadata', async () => {
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
    const host = {
      getType: () => 'rpc',
      switchToRpc: () => ({ getContext: () => new Metadata(), getData: () => ({}) }),
    } as unknown as ArgumentsHost;
    const answer = new CircuitBreakerExceptionFilter(new HttpAdapterHost()).catch(shed, host);
    const error = (await firstValueFrom(answer as Observable<never>).catch(
      (caught: unknown) => caught,
    )) as { code: number; metadata: Metadata };
    expect([error.code, error.metadata.getMap()]).toEqual([
      14,
      { 'circuit-breaker-code': 'LOAD_SHED', 'retry-after-ms': '1000' },
    ]);
  });

  it("is an overload for the calling service's classifiers when it says when to retry", () => {
    expect(classifyRpcError(PAYLOAD)).toBe('overload');
    expect(classifyRpcError(PAYLOAD, false)).toBe('failure');
    expect(classifyRpcError({ ...PAYLOAD, retryAfterMs: undefined })).toBe('failure');
    const extensions = { code: 'LOAD_SHED', retryAfterMs: 1_000 };
    expect(classifyGraphQLResult({ data: null, errors: [{ message: 'm', extensions }] })).toBe(
      'overload',
    );
    expect(
      classifyGraphQLResult({
        data: null,
        errors: [{ message: 'm', extensions: { code: 'LOAD_SHED' } }],
      }),
    ).toBe('failure');
  });
});
