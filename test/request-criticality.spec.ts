import { Logger, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { describe, expect, it, vi } from 'vitest';
import { Criticality, type CriticalityOptions } from '../lib/index.js';
import { criticalityReader } from '../lib/request-criticality.js';

class Reports {
  @Criticality('sheddable')
  export() {}
  plain() {}
}

/** An HTTP ExecutionContext of `Reports[method]` with these request headers. */
function httpContext(method: 'export' | 'plain', headers: Record<string, string> = {}) {
  return {
    getType: () => 'http',
    getHandler: () => Reports.prototype[method],
    getClass: () => Reports,
    switchToHttp: () => ({ getRequest: () => ({ headers }) }),
  } as unknown as ExecutionContext;
}

const read = (options: CriticalityOptions) => criticalityReader(options, new Reflector());

describe("a request's criticality", () => {
  it("is 'critical' when nothing says otherwise", () => {
    expect(read({})(httpContext('plain'))).toBe('critical');
  });

  it("is the route's metadata, when the header says nothing valid", () => {
    const of = read({ criticalityHeader: 'X-Criticality' });
    expect(of(httpContext('export'))).toBe('sheddable');
    expect(of(httpContext('export', { 'x-criticality': 'urgent' }))).toBe('sheddable');
    expect(of(httpContext('plain', { 'x-criticality': '' }))).toBe('critical');
  });

  it("is the header's over the metadata, in any case and around spaces", () => {
    const of = read({ criticalityHeader: 'x-criticality' });
    expect(of(httpContext('export', { 'x-criticality': ' Critical-Plus ' }))).toBe('critical-plus');
    expect(of(httpContext('plain', { 'x-criticality': 'SHEDDABLE-PLUS' }))).toBe('sheddable-plus');
  });

  it("is the function's over the header, unless it answers undefined or throws", () => {
    let answer: unknown = 'sheddable-plus';
    const of = read({
      criticalityHeader: 'x-criticality',
      criticalityOf: () => {
        if (answer instanceof Error) throw answer;
        return answer as never;
      },
    });
    const context = httpContext('export', { 'x-criticality': 'critical-plus' });
    expect(of(context)).toBe('sheddable-plus');
    answer = undefined;
    expect(of(context)).toBe('critical-plus');
    const logged = vi.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    answer = 'CRITICAL';
    expect(of(context)).toBe('critical-plus');
    answer = 'urgent';
    expect(of(context)).toBe('critical-plus');
    answer = new Error('no user');
    expect(of(context)).toBe('critical-plus');
    expect(of(httpContext('export'))).toBe('sheddable');
    // Reported once each, not per request; a wrong answer is never an error to the client.
    expect(logged.mock.calls).toEqual([
      [
        'CircuitBreakerModule: option "criticalityOf" returned "CRITICAL", which is not a criticality; the request\'s criticality was read from the header, the route or the default instead. ' +
          "Did you mean 'critical'? Return 'critical-plus', 'critical', 'sheddable-plus', 'sheddable' or undefined. Later answers of this kind are not reported again.",
      ],
      [
        'CircuitBreakerModule: option "criticalityOf" threw Error: no user; the request\'s criticality was read from the header, the route or the default instead. ' +
          'Make it return a criticality or undefined. Later errors of this function are not reported again.',
      ],
    ]);
    logged.mockRestore();
  });
});
