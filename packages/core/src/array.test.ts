import { describe, expect, it } from 'vitest';
import { familyKey, familyOf, hostFamily, makeHostArray, valueText } from './backend.js';
import {
  type HostArray,
  hostArray,
  InvalidShapeError,
  isArray,
  NotAnArrayError,
  type PolError,
  shapeOf,
  Undef,
} from './index.js';
import { fakeFamily } from './test-support/fixtures.js';

describe('hostArray', () => {
  it('wraps a TypedArray with dims [length] by default, aliasing the data', () => {
    const data = new Float32Array([1, 2, 3]);
    const a = hostArray(data);
    expect(a.dtype).toBe('float32');
    expect(a.dims).toEqual([3]);
    expect(a.data).toBe(data);
    a.data[0] = 7;
    expect(data[0]).toBe(7);
  });

  it('takes dims whose product is the length, copied and frozen', () => {
    const dims = [2, 3];
    const a = hostArray(new Int32Array(6), dims);
    expect(a.dims).toEqual([2, 3]);
    dims[0] = 1;
    expect(a.dims).toEqual([2, 3]);
    expect(Object.isFrozen(a.dims)).toBe(true);
  });

  it('wraps a scalar and an empty array', () => {
    expect(hostArray(new Float64Array(1), []).dims).toEqual([]);
    expect(hostArray(new Float64Array(0), [3, 0]).dims).toEqual([3, 0]);
  });

  it('is an array of the host family, and prints itself', () => {
    const a = hostArray(new Uint8Array(4), [2, 2]);
    expect(a[familyKey]).toBe(hostFamily);
    expect(isArray(a)).toBe(true);
    expect(String(a)).toBe('HostArray(uint8[2, 2])');
  });

  it('refuses dims whose product is not the length, with InvalidShapeError', () => {
    expect(() => hostArray(new Float32Array(6), [2, 2])).toThrow(InvalidShapeError);
    expect(() => hostArray(new Float32Array(6), [2, 2])).toThrow(
      /dims \[2, 2\] describe 4 elements, but the TypedArray holds 6\. Pass dims whose product is 6\./,
    );
  });

  it('refuses bad dims with InvalidShapeError', () => {
    expect(() => hostArray(new Float32Array(2), [-2, -1])).toThrow(InvalidShapeError);
    expect(() => hostArray(new Float32Array(2), [2.5])).toThrow(InvalidShapeError);
    expect(() => hostArray(new Float32Array(2), 2 as unknown as number[])).toThrow(InvalidShapeError);
    try {
      hostArray(new Float32Array(2), [3]);
      expect.unreachable();
    } catch (error) {
      expect((error as PolError).code).toBe('POL_INVALID_SHAPE');
    }
  });

  it('refuses what is not a TypedArray Pol describes, with NotAnArrayError saying what to do', () => {
    for (const bad of [[1, 2], new Uint8ClampedArray(2), new DataView(new ArrayBuffer(2)), { length: 2 }, null]) {
      expect(() => hostArray(bad as unknown as Float32Array)).toThrow(NotAnArrayError);
    }
    expect(() => hostArray([1, 2] as unknown as Float32Array)).toThrow(/Float32Array\.from\(values\)/);
  });
});

describe('makeHostArray', () => {
  it('makes a host array from parts, without copying', () => {
    const dims = Object.freeze([2]);
    const data = new BigInt64Array(2);
    const a = makeHostArray('int64', dims, data);
    expect(a.dtype).toBe('int64');
    expect(a.dims).toBe(dims);
    expect(a.data).toBe(data);
    expect(familyOf(a)).toBe(hostFamily);
  });
});

describe('hostFamily', () => {
  it('has kind host and allocates fresh, zeroed arrays with frozen dims', () => {
    expect(hostFamily.kind).toBe('host');
    const exemplar = hostArray(new Float32Array([9, 9]));
    const dims = [2, 3];
    const a = hostFamily.allocSimilar(exemplar, 'uint16', dims);
    expect(a.dtype).toBe('uint16');
    expect(a.dims).toEqual([2, 3]);
    expect(a.dims).not.toBe(dims);
    expect(Object.isFrozen(a.dims)).toBe(true);
    expect(a.data).toBeInstanceOf(Uint16Array);
    expect([...a.data]).toEqual([0, 0, 0, 0, 0, 0]);
    expect(exemplar.data[0]).toBe(9);
  });

  it('describes an exemplar for messages', () => {
    expect(hostFamily.describe(hostArray(new Float32Array(12), [3, 4]))).toBe('float32[3, 4] on host');
  });

  it('checkZero reads the data, so a refusing data getter refuses before anything is written', () => {
    const a = hostArray(Float32Array.of(5, 6));
    hostFamily.checkZero?.(a);
    expect([...a.data]).toEqual([5, 6]);
    const refused = new Error('stale');
    const stale = Object.defineProperty({ dtype: 'float32', dims: [2] }, 'data', {
      get() {
        throw refused;
      },
    }) as unknown as HostArray;
    expect(() => hostFamily.checkZero?.(stale)).toThrow(refused);
  });

  it('cannot capture and has no release (GC memory)', () => {
    expect(hostFamily.capturing).toBeUndefined();
    expect(hostFamily.release).toBeUndefined();
    expect(Object.isFrozen(hostFamily)).toBe(true);
  });
});

describe('isArray and familyOf', () => {
  it('accept TypedArrays Pol describes, host arrays, and arrays of other families', () => {
    const fake = fakeFamily();
    const g = fake.array('float32', [2]);
    expect(isArray(new Float32Array(1))).toBe(true);
    expect(isArray(new BigUint64Array(1))).toBe(true);
    expect(isArray(hostArray(new Int8Array(1)))).toBe(true);
    expect(isArray(g)).toBe(true);
    expect(familyOf(new Float32Array(1))).toBe(hostFamily);
    expect(familyOf(hostArray(new Int8Array(1)))).toBe(hostFamily);
    expect(familyOf(g)).toBe(fake.family);
  });

  it('reject everything else', () => {
    for (const x of [
      [1, 2],
      { dtype: 'float32', dims: [2] },
      new Uint8ClampedArray(1),
      new DataView(new ArrayBuffer(1)),
      Undef('float32', 2),
      'float32',
      3,
      null,
      undefined,
    ]) {
      expect(isArray(x)).toBe(false);
      expect(familyOf(x)).toBeUndefined();
    }
  });

  it('reject an object whose familyKey holds no family object', () => {
    for (const family of [null, 0, 'host', true]) {
      const x = { dtype: 'float32', dims: [1], [familyKey]: family };
      expect(isArray(x)).toBe(false);
      expect(familyOf(x)).toBeUndefined();
    }
  });

  it('use a registry-wide symbol, so two copies of the package agree', () => {
    expect(familyKey).toBe(Symbol.for('@pol/core/family'));
  });
});

describe('shapeOf', () => {
  it('gives a TypedArray dims [length], and a Pol array its own dtype and dims', () => {
    expect(shapeOf(new Int16Array(5))).toEqual({ dtype: 'int16', dims: [5] });
    const a = hostArray(new Float64Array(6), [3, 2]);
    const shape = shapeOf(a);
    expect(shape.dtype).toBe('float64');
    expect(shape.dims).toEqual([3, 2]);
    const fake = fakeFamily();
    expect(shapeOf(fake.array('uint32', [1, 1, 4]))).toMatchObject({ dtype: 'uint32', dims: [1, 1, 4] });
  });
});

describe('valueText', () => {
  it('writes an array as dtype[dims], anything else as describeValue does', () => {
    expect(valueText(hostArray(new Int8Array(6), [2, 3]))).toBe('int8[2, 3]');
    expect(valueText(new BigUint64Array(2))).toBe('uint64[2]');
    expect(valueText([1, 2])).toBe('an array of length 2');
    expect(valueText(undefined)).toBe('undefined');
    expect(valueText({ dtype: 'float32', dims: [2] })).toBe('a plain object');
  });
});
