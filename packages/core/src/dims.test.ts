import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { frozenDims, internDim, internDims, sameDims } from './backend.js';
import { internLimit } from './dims.js';
import { InvalidShapeError } from './index.js';

describe('frozenDims', () => {
  it('returns already-frozen dims as they are', () => {
    const dims = Object.freeze([2, 3]);
    expect(frozenDims(dims)).toBe(dims);
  });

  it('copies and freezes dims the caller can still change', () => {
    const dims = [4, 5];
    const frozen = frozenDims(dims);
    dims[0] = 99;
    expect(frozen).toEqual([4, 5]);
    expect(Object.isFrozen(frozen)).toBe(true);
  });

  it('keeps every dim of random shapes', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(1000), { maxLength: 6 }), (dims) => {
        expect(frozenDims(dims)).toEqual(dims);
      }),
    );
  });
});

// Before internDims' tests, the last of which fills the table to its limit.
describe('internDim', () => {
  it('is internDims([n]): the same frozen array, by the recent slot and by the table', () => {
    const eight = internDims([8]);
    expect(internDim(8)).toBe(eight);
    expect(internDim(8)).toBe(eight);
    // 8 + 64 shares 8's recent slot: both keep their own dims as they take turns there.
    expect(internDim(72)).toBe(internDims([72]));
    expect(internDim(8)).toBe(eight);
    expect(internDim(0)).toBe(internDims([0]));
  });

  it('refuses what is no dim with InvalidShapeError, even where an empty recent slot holds -1', () => {
    // -1 is what an empty recent slot holds: it must not answer that slot's (scalar) dims.
    for (const bad of [-1, -65, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53]) {
      expect(() => internDim(bad)).toThrow(InvalidShapeError);
    }
  });

  it('property: agrees with internDims([n]) for every valid n', () => {
    fc.assert(
      fc.property(fc.oneof(fc.nat(200), fc.maxSafeNat()), (n) => {
        expect(internDim(n)).toBe(internDims([n]));
      }),
    );
  });
});

describe('internDims', () => {
  it('returns one frozen array for equal dims, whichever array the caller passes', () => {
    const a = internDims([7, 11, 13]);
    const b = internDims([7, 11, 13]);
    expect(a).toBe(b);
    expect(a).toEqual([7, 11, 13]);
    expect(Object.isFrozen(a)).toBe(true);
  });

  it('keeps a copy, not the caller’s array, so changing the caller’s array changes nothing', () => {
    const mine = [17, 19];
    const interned = internDims(mine);
    expect(interned).not.toBe(mine);
    mine[0] = 1;
    expect(internDims([17, 19])).toBe(interned);
    expect(interned).toEqual([17, 19]);
  });

  it('keeps already-frozen dims as the shared array, without a copy', () => {
    const frozen = Object.freeze([23, 29, 31]);
    expect(internDims(frozen)).toBe(frozen);
    expect(internDims([23, 29, 31])).toBe(frozen);
  });

  it('tells prefixes and scalars apart', () => {
    const scalar = internDims([]);
    const one = internDims([37]);
    const two = internDims([37, 41]);
    expect(scalar).toEqual([]);
    expect(one).toEqual([37]);
    expect(two).toEqual([37, 41]);
    expect(internDims([37])).toBe(one);
    expect(internDims([])).toBe(scalar);
  });

  it('refuses bad dims with InvalidShapeError, and never interns them', () => {
    for (const bad of [[-1], [1.5], [Number.NaN], [Number.POSITIVE_INFINITY], ['3'], [2 ** 53]] as unknown as number[][]) {
      expect(() => internDims(bad)).toThrow(InvalidShapeError);
      expect(() => internDims(bad)).toThrow(InvalidShapeError);
    }
    expect(() => internDims('12' as never)).toThrow(InvalidShapeError);
    // An array-like that walks the table like [43] is still not an array.
    internDims([43]);
    expect(() => internDims({ length: 1, 0: 43 } as never)).toThrow(InvalidShapeError);
  });

  it('property: the result equals the input, is frozen, and is the same array on a repeat', () => {
    fc.assert(
      fc.property(fc.array(fc.nat(64), { maxLength: 5 }), (dims) => {
        const first = internDims(dims);
        expect(first).toEqual(dims);
        expect(Object.isFrozen(first)).toBe(true);
        expect(internDims(dims.slice())).toBe(first);
      }),
    );
  });

  it('past its limit, hands out equal frozen copies instead of growing (identity is a fast path only)', () => {
    // Fill the table with shapes nothing else uses, then check that a new shape still comes back right.
    for (let i = 0; i < internLimit; i++) internDims([1_000_003, i]);
    const late = [1_000_005, 1];
    const a = internDims(late);
    const b = internDims(late);
    expect(a).toEqual(late);
    expect(Object.isFrozen(a)).toBe(true);
    expect(a).not.toBe(b);
    expect(sameDims(a, b)).toBe(true);
    // Shapes interned before the limit are still shared.
    expect(internDims([1_000_003, 0])).toBe(internDims([1_000_003, 0]));
  });
});

describe('sameDims', () => {
  it('compares element by element', () => {
    expect(sameDims([2, 3], [2, 3])).toBe(true);
    expect(sameDims([], [])).toBe(true);
    expect(sameDims([2, 3], [3, 2])).toBe(false);
    expect(sameDims([2], [2, 1])).toBe(false);
    expect(sameDims([2, 1], [2])).toBe(false);
  });

  it('property: agrees with comparing the dims as text', () => {
    const dims = fc.array(fc.nat(3), { maxLength: 3 });
    fc.assert(
      fc.property(dims, dims, (a, b) => {
        expect(sameDims(a, b)).toBe(a.join(',') === b.join(',') && a.length === b.length);
      }),
    );
  });
});
