import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { passedCount } from './passed.js';

describe('passedCount', () => {
  it('counts up to the last argument that is not undefined', () => {
    expect(passedCount()).toBe(0);
    expect(passedCount(undefined)).toBe(0);
    expect(passedCount(0)).toBe(1);
    expect(passedCount(null, undefined)).toBe(1);
    expect(passedCount(undefined, undefined, '')).toBe(3);
    expect(passedCount(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)).toBe(11);
  });

  it('property: for any eleven values, the index after the last that is not undefined', () => {
    const value = fc.oneof(fc.constant(undefined), fc.integer(), fc.constant(null), fc.string());
    fc.assert(
      fc.property(fc.array(value, { minLength: 11, maxLength: 11 }), (values) => {
        let expected = 0;
        values.forEach((v, i) => {
          if (v !== undefined) expected = i + 1;
        });
        expect((passedCount as (...a: unknown[]) => number)(...values)).toBe(expected);
      }),
    );
  });
});
