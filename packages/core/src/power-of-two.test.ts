import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isPowerOfTwo } from './backend.js';

describe('isPowerOfTwo', () => {
  it('is true for every power of two that is a safe integer, past 2^31 too', () => {
    for (let k = 0; k <= 52; k++) expect(isPowerOfTwo(2 ** k), `2^${k}`).toBe(true);
  });

  it('is false for non-powers, near misses and everything that is not a positive safe integer', () => {
    for (let k = 2; k <= 52; k++) {
      expect(isPowerOfTwo(2 ** k + 1), `2^${k} + 1`).toBe(false);
      expect(isPowerOfTwo(2 ** k - 1), `2^${k} - 1`).toBe(false);
      expect(isPowerOfTwo(3 * 2 ** (k - 1)), `3 × 2^${k - 1}`).toBe(false);
    }
    for (const x of [
      0,
      -1,
      -2,
      -256,
      0.5,
      1.5,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      2 ** 53,
      2 ** 60,
      '4',
      4n,
      null,
      undefined,
    ]) {
      expect(isPowerOfTwo(x), String(x)).toBe(false);
    }
  });

  it('property: agrees with an exact BigInt reference', () => {
    fc.assert(
      fc.property(fc.integer({ min: -10, max: Number.MAX_SAFE_INTEGER }), (n) => {
        const big = BigInt(n);
        const reference = big > 0n && (big & (big - 1n)) === 0n;
        expect(isPowerOfTwo(n)).toBe(reference);
      }),
    );
  });
});
