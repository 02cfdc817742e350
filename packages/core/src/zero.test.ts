import { describe, expect, it } from 'vitest';
import { type ArrayFamily, familyKey, makeHostArray } from './backend.js';
import {
  alloc,
  type DType,
  dtypeInfo,
  dtypes,
  type HostArray,
  hostArray,
  NotAnArrayError,
  type PolArray,
  Similar,
  ZeroUnsupportedError,
  zeroArray,
} from './index.js';
import { fakeFamily } from './test-support/fixtures.js';

const host = Similar(new Float32Array(0));

function filled<D extends DType>(dtype: D, n: number): HostArray<D> {
  const a = alloc(host, dtype, n);
  const data = a.data as unknown as { fill(v: unknown): void };
  data.fill(dtypeInfo(dtype).bigint ? 7n : 7);
  return a;
}

describe('zeroArray', () => {
  it.each(dtypes.map((d) => [d]))('zeroes a %s host array and returns it', (dtype) => {
    const a = filled(dtype, 5);
    expect(zeroArray(a)).toBe(a);
    const zero = dtypeInfo(dtype).bigint ? 0n : 0;
    expect(Array.from(a.data as ArrayLike<unknown>)).toEqual([zero, zero, zero, zero, zero]);
  });

  it.each(dtypes.map((d) => [d]))('zeroes a bare %s TypedArray', (dtype) => {
    const info = dtypeInfo(dtype);
    const data = new info.TypedArray(3) as unknown as { fill(v: unknown): unknown; [i: number]: unknown; length: number };
    data.fill(info.bigint ? 9n : 9);
    zeroArray(data as never);
    expect(Array.from(data as ArrayLike<unknown>)).toEqual(info.bigint ? [0n, 0n, 0n] : [0, 0, 0]);
  });

  it('zeroes only the array’s own view, not its neighbours in the same buffer (an arena carve)', () => {
    const slab = new ArrayBuffer(64);
    const all = new Float32Array(slab).fill(1);
    const carve = makeHostArray('float32', Object.freeze([4]), new Float32Array(slab, 16, 4));
    zeroArray(carve);
    expect(Array.from(all)).toEqual([1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1]);
  });

  it('zeroes a scalar and an empty array', () => {
    const scalar = filled('float64', 1);
    expect(zeroArray(alloc(host, 'int32', [])).data).toEqual(new Int32Array(1));
    zeroArray(scalar);
    expect(scalar.data[0]).toBe(0);
    expect(zeroArray(alloc(host, 'float32', 0)).data.length).toBe(0);
  });

  it('dispatches to a backend family’s own zero method', () => {
    const zeroed: PolArray[] = [];
    const family: ArrayFamily<'host'> = { ...fakeFamily().family, zero: (a) => void zeroed.push(a) };
    const array = { dtype: 'float32' as const, dims: [2], [familyKey]: family };
    expect(zeroArray(array)).toBe(array);
    expect(zeroed).toEqual([array]);
  });

  it('refuses a family without zero with ZeroUnsupportedError naming the array, the family and the fix, and touches nothing', () => {
    const { family } = fakeFamily();
    const data = Float32Array.of(1, 2);
    const array = { dtype: 'float32' as const, dims: [2], data, [familyKey]: family };
    try {
      zeroArray(array);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ZeroUnsupportedError);
      expect((e as ZeroUnsupportedError).code).toBe('POL_ZERO_UNSUPPORTED');
      const message = (e as Error).message;
      expect(message).toContain('Cannot zero fake float32[2]');
      expect(message).toContain("its family ('host') has no zero(array) method");
      expect(message).toContain('Its backend must implement zero(array)');
    }
    expect(Array.from(data)).toEqual([1, 2]);
  });

  it('refuses what is not an array with NotAnArrayError', () => {
    for (const bad of [[1, 2], {}, null, undefined, 3, new ArrayBuffer(4), new DataView(new ArrayBuffer(4))]) {
      expect(() => zeroArray(bad as never)).toThrow(NotAnArrayError);
    }
    const plain = [1, 2];
    expect(() => zeroArray(plain as never)).toThrow(/array\.fill\(0\)/);
    expect(plain).toEqual([1, 2]);
  });

  it('zeroes hostArray wrappers through the host family', () => {
    const data = Int16Array.of(3, 4, 5, 6);
    zeroArray(hostArray(data, [2, 2]));
    expect(Array.from(data)).toEqual([0, 0, 0, 0]);
  });
});
