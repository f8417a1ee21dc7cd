import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sha256Utf16 } from '../../lib/core/ports/sha256.js';

const reference = (text: string) => createHash('sha256').update(text, 'utf16le').digest('hex');

describe('sha256Utf16', () => {
  it('matches the FIPS 180-4 test vector and Node on the empty string', () => {
    expect(sha256Utf16('')).toBe(
      'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    );
    expect(sha256Utf16('abc')).toBe(reference('abc'));
  });

  it('agrees with node:crypto on any UTF-16 string, lone surrogates and block boundaries included', () => {
    const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit));
    fc.assert(
      fc.property(fc.string({ unit: codeUnit, maxLength: 300 }), (text) => {
        expect(sha256Utf16(text)).toBe(reference(text));
      }),
      { seed: 20261202, numRuns: 2_000 },
    );
    // Around the padding boundaries: 55, 56 and 64 bytes are 27.5, 28 and 32 code units.
    for (let units = 20; units <= 70; units++)
      expect(sha256Utf16('x'.repeat(units))).toBe(reference('x'.repeat(units)));
  });
});
