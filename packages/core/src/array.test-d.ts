import { describe, expectTypeOf, it } from 'vitest';
import { makeHostArray } from './backend.js';
import {
  type AnyArray,
  type ArrayOf,
  type DType,
  type DTypeOf,
  type HostArray,
  hostArray,
  isArray,
  type Kind,
  type PolArray,
  shapeOf,
} from './index.js';

describe('array types', () => {
  it('DTypeOf reads the dtype of TypedArrays and Pol arrays', () => {
    expectTypeOf<DTypeOf<Float32Array>>().toEqualTypeOf<'float32'>();
    expectTypeOf<DTypeOf<Float64Array>>().toEqualTypeOf<'float64'>();
    expectTypeOf<DTypeOf<Int8Array>>().toEqualTypeOf<'int8'>();
    expectTypeOf<DTypeOf<Uint32Array>>().toEqualTypeOf<'uint32'>();
    expectTypeOf<DTypeOf<BigInt64Array>>().toEqualTypeOf<'int64'>();
    expectTypeOf<DTypeOf<BigUint64Array>>().toEqualTypeOf<'uint64'>();
    expectTypeOf<DTypeOf<HostArray<'int8'>>>().toEqualTypeOf<'int8'>();
    expectTypeOf<DTypeOf<PolArray<'uint16'>>>().toEqualTypeOf<'uint16'>();
    expectTypeOf<DTypeOf<PolArray>>().toEqualTypeOf<DType>();
  });

  it('ArrayOf and Kind: the host kind hands out host arrays', () => {
    expectTypeOf<Kind>().toEqualTypeOf<'host'>();
    expectTypeOf<ArrayOf<'host', 'float32'>>().toEqualTypeOf<HostArray<'float32'>>();
  });

  it('hostArray and makeHostArray keep the dtype of their data', () => {
    expectTypeOf(hostArray(new Float32Array(2))).toEqualTypeOf<HostArray<'float32'>>();
    expectTypeOf(hostArray(new BigInt64Array(2), [2])).toEqualTypeOf<HostArray<'int64'>>();
    expectTypeOf(hostArray(new Int8Array(2)).data).toEqualTypeOf<Int8Array>();
    expectTypeOf(makeHostArray('uint8', [1], new Uint8Array(1))).toEqualTypeOf<HostArray<'uint8'>>();
    // @ts-expect-error data must match the dtype
    makeHostArray('uint8', [1], new Float32Array(1));
    // @ts-expect-error a plain JS array is not a TypedArray
    hostArray([1, 2]);
    // @ts-expect-error a Uint8ClampedArray is not described by Pol
    hostArray(new Uint8ClampedArray(2));
  });

  it('a host array is read-only in its fields', () => {
    const a = hostArray(new Float32Array(2));
    // @ts-expect-error dims are read-only
    a.dims = [1];
    // @ts-expect-error dims are a readonly array
    a.dims[0] = 1;
  });

  it('isArray narrows to AnyArray; shapeOf answers dtype and dims', () => {
    const x: unknown = new Float32Array(1);
    if (isArray(x)) expectTypeOf(x).toEqualTypeOf<AnyArray>();
    expectTypeOf(shapeOf(new Float32Array(1))).toEqualTypeOf<{ readonly dtype: DType; readonly dims: readonly number[] }>();
  });
});
