import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { shapeText } from './backend.js';
import { byteLength, type DType, dtypeInfo, dtypes, elementCount, InvalidShapeError, UnknownDTypeError } from './index.js';

const MAX = BigInt(Number.MAX_SAFE_INTEGER);

/** The reference: the exact element count, or undefined when the dims are not valid. */
function referenceCount(dims: readonly unknown[]): bigint | undefined {
  let count = 1n;
  for (const d of dims) {
    if (typeof d !== 'number' || !Number.isSafeInteger(d) || d < 0) return undefined;
    count *= BigInt(d);
  }
  return count <= MAX ? count : undefined;
}

/** Dims drawn to hit both valid shapes and every kind of bad dim, including huge products. */
const anyDim = fc.oneof(
  { weight: 4, arbitrary: fc.nat({ max: 12 }) },
  { weight: 2, arbitrary: fc.integer({ min: 0, max: 2 ** 30 }) },
  { weight: 1, arbitrary: fc.integer({ min: -5, max: -1 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      0.5,
      1.5,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      Number.NEGATIVE_INFINITY,
      2 ** 53,
      Number.MAX_SAFE_INTEGER,
      1e300,
      -0,
    ),
  },
  { weight: 1, arbitrary: fc.double() },
);
const anyDims = fc.array(anyDim, { maxLength: 6 });

describe('elementCount', () => {
  it('multiplies the dims, 1 for a scalar and 0 for an empty array', () => {
    expect(elementCount([3, 4])).toBe(12);
    expect(elementCount([])).toBe(1);
    expect(elementCount([5])).toBe(5);
    expect(elementCount([3, 0, 7])).toBe(0);
    expect(elementCount(Object.freeze([2, 2, 2]))).toBe(8);
  });

  it.each([
    [[-1], /dims\[0\] is -1 in \[-1\]: every dim must be a non-negative integer/],
    [[2, 1.5], /dims\[1\] is 1\.5 in \[2, 1\.5\]/],
    [[Number.NaN], /dims\[0\] is NaN/],
    [[Number.POSITIVE_INFINITY], /dims\[0\] is Infinity/],
    [[3, '4'], /dims\[1\] is '4'/],
    [[2 ** 53, 0], /dims\[0\] is 9007199254740992.*no larger than Number\.MAX_SAFE_INTEGER/],
  ])('refuses %j with InvalidShapeError saying what to do', (dims, message) => {
    expect(() => elementCount(dims as number[])).toThrow(InvalidShapeError);
    expect(() => elementCount(dims as number[])).toThrow(message);
    expect(() => elementCount(dims as number[])).toThrow(/Round or validate computed sizes/);
  });

  it('refuses a count past Number.MAX_SAFE_INTEGER', () => {
    expect(() => elementCount([2 ** 30, 2 ** 30])).toThrow(/describe more than Number\.MAX_SAFE_INTEGER elements/);
    expect(() => elementCount([Number.MAX_SAFE_INTEGER, 2])).toThrow(InvalidShapeError);
    expect(elementCount([Number.MAX_SAFE_INTEGER, 1])).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('counts zero elements even when the other dims multiply past the safe range (no Infinity × 0)', () => {
    const huge = Array.from({ length: 24 }, () => Number.MAX_SAFE_INTEGER);
    expect(elementCount([...huge, 0])).toBe(0);
    expect(elementCount([0, ...huge])).toBe(0);
  });

  it('refuses dims that are not an array', () => {
    for (const bad of [3, '3', null, undefined, { length: 1, 0: 3 }, new Int32Array([3])]) {
      expect(() => elementCount(bad as unknown as number[])).toThrow(InvalidShapeError);
    }
    expect(() => elementCount(3 as unknown as number[])).toThrow(
      /dims must be an array of non-negative integers, got 3\. Pass dims such as \[3, 4\]/,
    );
  });

  it('refuses holes', () => {
    // biome-ignore lint/suspicious/noSparseArray: a hole is the bad input under test.
    expect(() => elementCount([2, , 3] as number[])).toThrow(/dims\[1\] is undefined/);
  });

  it('property: agrees with an exact BigInt reference, and throws exactly for the bad dims', () => {
    fc.assert(
      fc.property(anyDims, (dims) => {
        const expected = referenceCount(dims);
        if (expected === undefined) {
          expect(() => elementCount(dims)).toThrow(InvalidShapeError);
        } else {
          expect(elementCount(dims)).toBe(Number(expected));
        }
      }),
      { numRuns: 2000 },
    );
  });
});

describe('byteLength', () => {
  it('is element count × element size', () => {
    expect(byteLength('float64', [2, 5])).toBe(80);
    expect(byteLength('int8', [7])).toBe(7);
    expect(byteLength('uint16', [])).toBe(2);
    expect(byteLength('float32', [0, 4])).toBe(0);
  });

  it('refuses a byte size past Number.MAX_SAFE_INTEGER even when the count is safe', () => {
    const count = 2 ** 51; // safe, but 8 bytes each is 2^54
    expect(elementCount([count])).toBe(count);
    expect(() => byteLength('float64', [count])).toThrow(InvalidShapeError);
    expect(() => byteLength('float64', [count])).toThrow(
      /past Number\.MAX_SAFE_INTEGER bytes.*Check the dims for a unit mistake/,
    );
    expect(byteLength('int8', [count])).toBe(count);
  });

  it('checks the dtype first, then the dims', () => {
    expect(() => byteLength('complex64' as DType, [-1])).toThrow(UnknownDTypeError);
    expect(() => byteLength('float32', [-1])).toThrow(InvalidShapeError);
  });

  it('property: agrees with an exact BigInt reference for every dtype', () => {
    fc.assert(
      fc.property(fc.constantFrom(...dtypes), anyDims, (dtype, dims) => {
        const count = referenceCount(dims);
        const bytes = count === undefined ? undefined : count * BigInt(dtypeInfo(dtype).byteSize);
        if (bytes === undefined || bytes > MAX) {
          expect(() => byteLength(dtype, dims)).toThrow(InvalidShapeError);
        } else {
          expect(byteLength(dtype, dims)).toBe(Number(bytes));
        }
      }),
      { numRuns: 2000 },
    );
  });
});

describe('shapeText', () => {
  it('writes dtype[dims], with [] for a scalar', () => {
    expect(shapeText('float32', [2, 3])).toBe('float32[2, 3]');
    expect(shapeText('int64', [5])).toBe('int64[5]');
    expect(shapeText('uint8', [])).toBe('uint8[]');
  });

  it('writes what it was given for dims that are not an array, rather than throwing inside a message', () => {
    expect(shapeText('float32', 4 as never)).toBe('float32[4]');
    expect(shapeText('float32', { length: 2 } as never)).toBe('float32[a plain object]');
  });
});
