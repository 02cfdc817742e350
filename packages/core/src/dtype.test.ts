import { describe, expect, it } from 'vitest';
import { type DType, dtypeInfo, dtypeOfTypedArray, dtypes, hasDType, PolError, UnknownDTypeError } from './index.js';

// Float16Array is a global from Node.js 24 (V8 13.6) and in current browsers; Node.js 20 and 22 lack it.
const Float16Ctor = (globalThis as { Float16Array?: unknown }).Float16Array;
const hasFloat16 = Float16Ctor !== undefined;

// Every dtype this runtime supports, with its facts: float16 is one of them on a runtime with
// Float16Array, tested like any other.
const expected: readonly [DType, number, unknown, boolean, boolean][] = [
  ...(hasFloat16 ? [['float16', 2, Float16Ctor, true, false] as [DType, number, unknown, boolean, boolean]] : []),
  ['float32', 4, Float32Array, true, false],
  ['float64', 8, Float64Array, true, false],
  ['int8', 1, Int8Array, false, false],
  ['int16', 2, Int16Array, false, false],
  ['int32', 4, Int32Array, false, false],
  ['int64', 8, BigInt64Array, false, true],
  ['uint8', 1, Uint8Array, false, false],
  ['uint16', 2, Uint16Array, false, false],
  ['uint32', 4, Uint32Array, false, false],
  ['uint64', 8, BigUint64Array, false, true],
];

describe('dtypes', () => {
  it('lists every supported dtype once, float16 only where Float16Array exists', () => {
    const base = ['float32', 'float64', 'int8', 'int16', 'int32', 'int64', 'uint8', 'uint16', 'uint32', 'uint64'];
    expect([...dtypes].sort()).toEqual((hasFloat16 ? [...base, 'float16'] : base).sort());
    expect(new Set(dtypes).size).toBe(dtypes.length);
    // The table the tests below run over holds every one of them, in the same order.
    expect(expected.map(([name]) => name)).toEqual([...dtypes]);
  });

  it('is frozen', () => {
    expect(Object.isFrozen(dtypes)).toBe(true);
  });
});

describe('dtypeInfo', () => {
  it.each(expected)('%s: %i bytes, its TypedArray, float %s, bigint %s', (name, bytes, ctor, float, bigint) => {
    const info = dtypeInfo(name);
    expect(info.name).toBe(name);
    expect(info.byteSize).toBe(bytes);
    expect(info.alignment).toBe(bytes);
    expect(info.TypedArray).toBe(ctor);
    expect(info.float).toBe(float);
    expect(info.bigint).toBe(bigint);
    expect(Object.isFrozen(info)).toBe(true);
  });

  it('makes a working TypedArray of the dtype, by length and over a buffer', () => {
    const { TypedArray } = dtypeInfo('int16');
    expect(new TypedArray(3)).toEqual(new Int16Array(3));
    const buffer = new ArrayBuffer(16);
    const view = new TypedArray(buffer, 4, 2);
    expect(view.byteOffset).toBe(4);
    expect(view.length).toBe(2);
  });

  it('refuses an unknown dtype with UnknownDTypeError listing the valid ones', () => {
    expect(() => dtypeInfo('complex64' as DType)).toThrow(UnknownDTypeError);
    // The message lists exactly the dtypes this runtime supports, in their stable order (float16
    // first where the runtime has Float16Array).
    const valid = expected.map(([name]) => `'${name}'`).join(', ');
    expect(() => dtypeInfo('complex64' as DType)).toThrow(`Unknown dtype 'complex64'. Use one of: ${valid}.`);
    try {
      dtypeInfo('f32' as DType);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(PolError);
      expect((error as PolError).code).toBe('POL_UNKNOWN_DTYPE');
      expect((error as PolError).name).toBe('UnknownDTypeError');
    }
  });

  it('refuses names that are not strings, and inherited property names', () => {
    for (const bad of [undefined, null, 4, {}, 'toString', 'constructor', '__proto__', 'Float32']) {
      expect(() => dtypeInfo(bad as DType)).toThrow(UnknownDTypeError);
    }
    expect(() => dtypeInfo(4 as unknown as DType)).toThrow(/Unknown dtype 4\./);
  });

  it('refuses float16 where the runtime has no Float16Array, saying why and what to do (supports it elsewhere)', () => {
    if (hasFloat16) {
      expect(dtypeInfo('float16').byteSize).toBe(2);
    } else {
      expect(() => dtypeInfo('float16')).toThrow(UnknownDTypeError);
      expect(() => dtypeInfo('float16')).toThrow(/needs Float16Array, which this runtime does not have\. Use 'float32'/);
    }
  });
});

describe('hasDType', () => {
  it('is true exactly for supported dtypes', () => {
    for (const name of dtypes) expect(hasDType(name)).toBe(true);
    expect(hasDType('float16')).toBe(hasFloat16);
    for (const bad of ['complex64', 'Float32', '', 'toString', '__proto__', 3, null, undefined, Float32Array]) {
      expect(hasDType(bad)).toBe(false);
    }
  });
});

describe('dtypeOfTypedArray', () => {
  it.each(expected)('%s for its TypedArray', (name, _bytes, ctor) => {
    const TypedArray = ctor as new (n: number) => unknown;
    expect(dtypeOfTypedArray(new TypedArray(2))).toBe(name);
  });

  it('is undefined for what Pol does not describe', () => {
    for (const x of [
      new Uint8ClampedArray(2),
      new DataView(new ArrayBuffer(4)),
      new ArrayBuffer(4),
      [1, 2],
      { dtype: 'float32', dims: [2] },
      'float32',
      3,
      null,
      undefined,
    ]) {
      expect(dtypeOfTypedArray(x)).toBeUndefined();
    }
  });

  it('recognizes a subclass (as Node.js Buffer is of Uint8Array) by its element type', () => {
    class Pixels extends Uint8Array {}
    class Weights extends Float32Array {}
    expect(dtypeOfTypedArray(new Pixels(4))).toBe('uint8');
    expect(dtypeOfTypedArray(new Weights(4))).toBe('float32');
  });

  it('is not fooled by a reassigned constructor property', () => {
    const x = new Int8Array(4);
    Object.defineProperty(x, 'constructor', { value: Float64Array });
    expect(dtypeOfTypedArray(x)).toBe('int8');
  });
});
