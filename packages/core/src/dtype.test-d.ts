import { describe, expectTypeOf, it } from 'vitest';
import {
  type AnyTypedArray,
  type DType,
  type DTypeInfo,
  dtypeInfo,
  dtypeOfTypedArray,
  hasDType,
  type TypedArrayOf,
} from './index.js';

describe('dtype types', () => {
  it('TypedArrayOf maps each dtype to its TypedArray', () => {
    expectTypeOf<TypedArrayOf<'float32'>>().toEqualTypeOf<Float32Array>();
    expectTypeOf<TypedArrayOf<'float64'>>().toEqualTypeOf<Float64Array>();
    expectTypeOf<TypedArrayOf<'int8'>>().toEqualTypeOf<Int8Array>();
    expectTypeOf<TypedArrayOf<'int16'>>().toEqualTypeOf<Int16Array>();
    expectTypeOf<TypedArrayOf<'int32'>>().toEqualTypeOf<Int32Array>();
    expectTypeOf<TypedArrayOf<'int64'>>().toEqualTypeOf<BigInt64Array>();
    expectTypeOf<TypedArrayOf<'uint8'>>().toEqualTypeOf<Uint8Array>();
    expectTypeOf<TypedArrayOf<'uint16'>>().toEqualTypeOf<Uint16Array>();
    expectTypeOf<TypedArrayOf<'uint32'>>().toEqualTypeOf<Uint32Array>();
    expectTypeOf<TypedArrayOf<'uint64'>>().toEqualTypeOf<BigUint64Array>();
  });

  it('dtypeInfo is typed by its dtype', () => {
    const info = dtypeInfo('int16');
    expectTypeOf(info).toEqualTypeOf<DTypeInfo<'int16'>>();
    expectTypeOf(info.name).toEqualTypeOf<'int16'>();
    expectTypeOf(new info.TypedArray(2)).toEqualTypeOf<Int16Array>();
    // @ts-expect-error not a dtype
    dtypeInfo('complex64');
  });

  it('AnyTypedArray excludes what Pol does not describe', () => {
    expectTypeOf<Float32Array>().toExtend<AnyTypedArray>();
    expectTypeOf<BigInt64Array>().toExtend<AnyTypedArray>();
    expectTypeOf<Uint8ClampedArray>().not.toExtend<AnyTypedArray>();
    expectTypeOf<DataView>().not.toExtend<AnyTypedArray>();
  });

  it('hasDType narrows, dtypeOfTypedArray may answer undefined', () => {
    const name: unknown = 'float32';
    if (hasDType(name)) expectTypeOf(name).toEqualTypeOf<DType>();
    expectTypeOf(dtypeOfTypedArray(new Int8Array(1))).toEqualTypeOf<DType | undefined>();
  });
});
