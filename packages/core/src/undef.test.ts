import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type DType,
  dtypeInfo,
  dtypes,
  hostArray,
  InvalidArgumentError,
  InvalidShapeError,
  isUndef,
  type PolError,
  Undef,
  UnknownDTypeError,
  zeroed,
} from './index.js';
import { fakeFamily } from './test-support/fixtures.js';

describe('Undef from a dtype and dims', () => {
  it('takes the dims as an array', () => {
    const u = Undef('float32', [3, 4]);
    expect(u.dtype).toBe('float32');
    expect(u.dims).toEqual([3, 4]);
    expect(u.length).toBe(12);
    expect(u.byteLength).toBe(48);
  });

  it('takes the dims as rest arguments', () => {
    const u = Undef('int16', 2, 3, 5);
    expect(u.dtype).toBe('int16');
    expect(u.dims).toEqual([2, 3, 5]);
    expect(u.length).toBe(30);
    expect(u.byteLength).toBe(60);
  });

  it('describes a scalar with no dims: dims [], one element', () => {
    const u = Undef('float64');
    expect(u.dims).toEqual([]);
    expect(u.length).toBe(1);
    expect(u.byteLength).toBe(8);
    expect(Undef('float64', []).dims).toEqual([]);
  });

  it('describes zero-element arrays', () => {
    const u = Undef('uint32', 0, 5);
    expect(u.length).toBe(0);
    expect(u.byteLength).toBe(0);
  });

  it('copies and freezes the dims, and cannot be changed', () => {
    const dims = [2, 2];
    const u = Undef('float32', dims);
    dims[0] = 99;
    expect(u.dims).toEqual([2, 2]);
    expect(u.dims).not.toBe(dims);
    expect(Object.isFrozen(u.dims)).toBe(true);
    expect(() => {
      (u.dims as number[])[0] = 5;
    }).toThrow(TypeError);
    expect(() => {
      (u as { dtype: DType }).dtype = 'int8';
    }).toThrow(TypeError);
    expect(u.dtype).toBe('float32');
  });

  it('prints itself', () => {
    expect(String(Undef('float32', 3, 4))).toBe('Undef(float32, [3, 4])');
    expect(String(Undef('int8'))).toBe('Undef(int8, [])');
  });

  it('holds no memory: no data, no buffer', () => {
    const u = Undef('float32', 1024);
    expect('data' in u).toBe(false);
    expect('buffer' in u).toBe(false);
  });
});

describe('Undef from an exemplar array', () => {
  it('keeps a TypedArray exemplar’s dtype and length as dims', () => {
    const u = Undef(new Float64Array(8));
    expect(u.dtype).toBe('float64');
    expect(u.dims).toEqual([8]);
  });

  it('keeps a host array exemplar’s dtype and dims', () => {
    const x = hostArray(new Int8Array(6), [2, 3]);
    const u = Undef(x);
    expect(u.dtype).toBe('int8');
    expect(u.dims).toEqual([2, 3]);
    // A Pol array's dims are frozen, so the Undef shares them rather than copying.
    expect(Object.isFrozen(u.dims)).toBe(true);
  });

  it('overrides the dtype, keeping the dims', () => {
    const u = Undef(hostArray(new Int8Array(6), [2, 3]), 'int32');
    expect(u.dtype).toBe('int32');
    expect(u.dims).toEqual([2, 3]);
    expect(u.byteLength).toBe(24);
  });

  it('overrides the dims, keeping the dtype', () => {
    const u = Undef(new Float32Array(8), [2, 2]);
    expect(u.dtype).toBe('float32');
    expect(u.dims).toEqual([2, 2]);
  });

  it('treats an explicit undefined override as none', () => {
    expect(Undef(new Uint16Array(3), undefined as unknown as DType).dims).toEqual([3]);
  });

  it('accepts an array of any family, never reading its data', () => {
    const fake = fakeFamily();
    const x = fake.array('uint8', [4, 4]);
    Object.defineProperty(x, 'data', {
      get() {
        throw new Error('the exemplar’s data was read');
      },
    });
    const u = Undef(x);
    expect(u.dtype).toBe('uint8');
    expect(u.dims).toEqual([4, 4]);
  });
});

describe('Undef bad input', () => {
  it.each([
    ['a negative dim', [-1], /dims\[0\] is -1/],
    ['a fractional dim', [2, 0.5], /dims\[1\] is 0\.5/],
    ['a NaN dim', [Number.NaN], /dims\[0\] is NaN/],
    ['an infinite dim', [Number.POSITIVE_INFINITY], /dims\[0\] is Infinity/],
    ['a dim past MAX_SAFE_INTEGER', [2 ** 53], /no larger than Number\.MAX_SAFE_INTEGER/],
    ['a byte size past MAX_SAFE_INTEGER', [2 ** 26, 2 ** 26], /past Number\.MAX_SAFE_INTEGER bytes/],
  ])('%s throws InvalidShapeError', (_what, dims, message) => {
    expect(() => Undef('float32', dims)).toThrow(InvalidShapeError);
    expect(() => Undef('float32', dims)).toThrow(message);
    expect(() => Undef('float32', ...dims)).toThrow(InvalidShapeError);
    try {
      Undef('float32', dims);
      expect.unreachable();
    } catch (error) {
      expect((error as PolError).code).toBe('POL_INVALID_SHAPE');
      expect((error as PolError).name).toBe('InvalidShapeError');
    }
  });

  it('a bad dims override of an exemplar throws InvalidShapeError', () => {
    expect(() => Undef(new Float32Array(2), [-2])).toThrow(InvalidShapeError);
  });

  it('an unknown dtype throws UnknownDTypeError, also as an override', () => {
    expect(() => Undef('complex64' as DType, 2)).toThrow(UnknownDTypeError);
    expect(() => Undef(new Float32Array(2), 'bfloat16' as DType)).toThrow(/Unknown dtype 'bfloat16'/);
  });

  it('float16 where the runtime has no Float16Array says why', () => {
    if ((globalThis as { Float16Array?: unknown }).Float16Array === undefined) {
      expect(() => Undef('float16', 2)).toThrow(/needs Float16Array/);
    } else {
      expect(Undef('float16', 2).byteLength).toBe(4);
    }
  });

  it('a first argument that is neither a dtype nor an array throws InvalidArgumentError', () => {
    for (const bad of [3, null, undefined, { dtype: 'float32', dims: [2] }, [1, 2, 3], new Uint8ClampedArray(2)]) {
      expect(() => Undef(bad as unknown as DType)).toThrow(InvalidArgumentError);
    }
    expect(() => Undef([1, 2] as unknown as DType)).toThrow(
      /Undef needs a dtype \(such as 'float32'\) or an exemplar array first, got an array of length 2\. Write Undef\('float32', 3, 4\) or Undef\(x\)/,
    );
  });

  it('an exemplar override that is neither a dtype nor dims throws InvalidArgumentError', () => {
    expect(() => Undef(new Float32Array(2), 3 as unknown as DType)).toThrow(InvalidArgumentError);
    expect(() => Undef(new Float32Array(2), 3 as unknown as DType)).toThrow(
      /takes a dtype \(such as 'float32'\) or a dims array/,
    );
  });

  it('more than one override throws InvalidArgumentError rather than ignoring one', () => {
    const call = Undef as unknown as (...args: unknown[]) => unknown;
    expect(() => call(new Float32Array(4), 'int8', [2, 2])).toThrow(InvalidArgumentError);
    expect(() => call(new Float32Array(4), 'int8', [2, 2])).toThrow(/to change both, write Undef\('float32', \[2, 3\]\)/);
  });
});

describe('isUndef', () => {
  it('is true only for Undefs', () => {
    expect(isUndef(Undef('int8', 2))).toBe(true);
    expect(isUndef(Undef(new Float32Array(1)))).toBe(true);
    for (const x of [{ dtype: 'int8', dims: [2], length: 2, byteLength: 2 }, new Int8Array(2), null, undefined, 'int8', 2]) {
      expect(isUndef(x)).toBe(false);
    }
  });
});

describe('Undef properties', () => {
  it('property: any valid dtype and dims give an Undef with those, its element count and byte size', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...dtypes),
        fc.array(fc.nat({ max: 40 }), { maxLength: 5 }),
        fc.boolean(),
        (dtype, dims, rest) => {
          const u = rest ? Undef(dtype, ...dims) : Undef(dtype, dims);
          const count = dims.reduce((a, b) => a * b, 1);
          expect(u.dtype).toBe(dtype);
          expect(u.dims).toEqual(dims);
          expect(u.length).toBe(count);
          expect(u.byteLength).toBe(count * dtypeInfo(dtype).byteSize);
          expect(Undef(u.dtype, u.dims)).toEqual(u);
        },
      ),
    );
  });

  it('property: an exemplar gives back its dtype and dims', () => {
    fc.assert(
      fc.property(fc.constantFrom(...dtypes), fc.array(fc.nat({ max: 6 }), { maxLength: 4 }), (dtype, dims) => {
        const count = dims.reduce((a, b) => a * b, 1);
        const x = hostArray(new (dtypeInfo(dtype).TypedArray)(count), dims);
        const u = Undef(x);
        expect(u.dtype).toBe(dtype);
        expect(u.dims).toEqual(dims);
      }),
    );
  });
});

describe('Undef in Node’s inspector', () => {
  it('prints its dtype and dims rather than an empty object', () => {
    const inspect = Symbol.for('nodejs.util.inspect.custom');
    const u = Undef('float32', 3, 4) as unknown as Record<symbol, () => string>;
    expect(u[inspect]?.()).toBe('Undef(float32, [3, 4])');
  });
});

describe('zeroed', () => {
  it('describes the same array, marked to start at zero', () => {
    const plain = Undef('float32', 2, 3);
    const z = zeroed(plain);
    expect(isUndef(z)).toBe(true);
    expect(z.zeroed).toBe(true);
    expect(plain.zeroed).toBe(false);
    expect(z.dtype).toBe('float32');
    expect(z.dims).toBe(plain.dims);
    expect(z.length).toBe(6);
    expect(z.byteLength).toBe(24);
    expect(String(z)).toBe('zeroed(Undef(float32, [2, 3]))');
  });

  it('leaves the Undef it was given as it was, and is idempotent', () => {
    const plain = Undef('int64', 4);
    const z = zeroed(plain);
    expect(z).not.toBe(plain);
    expect(plain.zeroed).toBe(false);
    expect(zeroed(z)).toBe(z);
  });

  it('refuses what is not an Undef with InvalidArgumentError', () => {
    for (const bad of [new Float32Array(2), { dtype: 'float32', dims: [2] }, 'float32', undefined, null]) {
      expect(() => zeroed(bad as never)).toThrow(InvalidArgumentError);
    }
    expect(() => zeroed(new Float32Array(2) as never)).toThrow(/zeroed\(undef\) takes an Undef, got a Float32Array/);
  });
});
