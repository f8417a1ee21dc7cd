import type { ArgumentsHost } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { firstValueFrom, type Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import {
  CallRejectedError,
  CircuitBreakerExceptionFilter,
  defaultClassifyError,
  defaultClassifyResult,
  retryAfterOf,
  UpstreamHttpError,
  toErrorPayload,
  toHttpResponse,
} from '../lib/index.js';
import { classifyGraphQLResult } from '../lib/graphql/index.js';
import { classifyGrpcError, classifyRpcError } from '../lib/microservices/index.js';

/** What a concurrency limiter refuses a request with. */
const shed = new CallRejectedError('api', 'closed', 'shed', undefined);
const PAYLOAD = {
  status: 'error',
  code: 'LOAD_SHED',
  message: 'The service is overloaded; retry later.',
};

describe('the answers to a shed request', () => {
  it('over HTTP: 503, the LOAD_SHED header, no Retry-After, and a body that says the service itself is overloaded', () => {
    expect(toHttpResponse(shed)).toEqual({
      status: 503,
      headers: { 'circuit-breaker-code': 'LOAD_SHED' },
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
      { 'circuit-breaker-code': 'LOAD_SHED' },
    ]);
  });

  it("is an overload for the calling service's classifiers, which asks for no pause", async () => {
    expect(classifyRpcError(PAYLOAD)).toBe('overload');
    expect(classifyRpcError(PAYLOAD, false)).toBe('failure');
    // A remote breaker's refusal stays a failure unless it says when to retry.
    expect(classifyRpcError({ ...PAYLOAD, code: 'CIRCUIT_OPEN' })).toBe('failure');
    const shedField = { message: 'm', extensions: { code: 'LOAD_SHED' } };
    expect(classifyGraphQLResult({ data: null, errors: [shedField] })).toBe('overload');
    const openField = { message: 'm', extensions: { code: 'CIRCUIT_OPEN' } };
    expect(classifyGraphQLResult({ data: null, errors: [openField] })).toBe('failure');
    // Over HTTP, by the header: a 503 without it (and without Retry-After) is a failure.
    const answer = (headers: Record<string, string>) =>
      UpstreamHttpError.from(new Response('overloaded', { status: 503, headers }));
    const shedAnswer = await answer({ 'circuit-breaker-code': 'LOAD_SHED' });
    expect(shedAnswer.upstreamCode).toBe('LOAD_SHED');
    expect(defaultClassifyError(shedAnswer)).toBe('overload');
    expect(retryAfterOf(shedAnswer, 0)).toBeUndefined();
    expect(defaultClassifyError(await answer({}))).toBe('failure');
    // The response itself, as a classifier of resolved values sees it.
    const response = new Response(null, {
      status: 503,
      headers: { 'circuit-breaker-code': 'LOAD_SHED' },
    });
    expect(defaultClassifyResult(response)).toBe('overload');
    // gRPC, by the trailing metadata a shed call carries.
    const grpcShed = { code: 14, details: 'm', metadata: { 'circuit-breaker-code': 'LOAD_SHED' } };
    expect(classifyGrpcError(grpcShed)).toBe('overload');
    expect(classifyGrpcError({ ...grpcShed, metadata: {} })).toBe('failure');
  });
});
