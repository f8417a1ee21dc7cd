import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toHttpResponse } from '../lib/circuit-breaker-http.mapping.js';
import { toErrorPayload } from '../lib/circuit-breaker-transport.mapping.js';
import { CallRejectedError } from '../lib/core/index.js';

const SEED = 25_0004;

describe('Retry-After as announced', () => {
  it('property: the header is whole delta-seconds in [0, 86400] for any number, absent for NaN; the payload says the same in ms', () => {
    fc.assert(
      fc.property(fc.oneof(fc.double(), fc.integer(), fc.constantFrom(1e297, -0)), (ms) => {
        const rejection = new CallRejectedError('payments', 'open', 'open', ms);
        const header = toHttpResponse(rejection)!.headers['Retry-After'];
        const payload = toErrorPayload(rejection)!.retryAfterMs;
        if (Number.isNaN(ms)) {
          expect([header, payload]).toEqual([undefined, undefined]);
          return;
        }
        expect(header).toMatch(/^\d+$/);
        // Whole milliseconds first (a wait of 0.4 ms is 1 ms), then seconds, both rounded up.
        const announced = Math.min(86_400_000, Math.max(0, Math.ceil(ms)));
        expect(payload).toBe(announced);
        expect(Number(header)).toBe(Math.ceil(announced / 1000));
        expect(Number(header)).toBeLessThanOrEqual(86_400);
      }),
      { seed: SEED, numRuns: 2_000 },
    );
  });
});
