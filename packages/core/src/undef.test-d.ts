import { describe, expectTypeOf, it } from 'vitest';
import { type HostArray, hostArray, isUndef, Undef, zeroed } from './index.js';

describe('Undef types', () => {
  it('from a dtype and dims', () => {
    expectTypeOf(Undef('float32', [3, 4])).toEqualTypeOf<Undef<'float32'>>();
    expectTypeOf(Undef('int64', 3, 4)).toEqualTypeOf<Undef<'int64'>>();
    expectTypeOf(Undef('uint8')).toEqualTypeOf<Undef<'uint8'>>();
    expectTypeOf(Undef('float32', 2).dims).toEqualTypeOf<readonly number[]>();
    expectTypeOf(Undef('float32', 2).length).toEqualTypeOf<number>();
    expectTypeOf(Undef('float32', 2).byteLength).toEqualTypeOf<number>();
  });

  it('infers the dtype from an exemplar', () => {
    expectTypeOf(Undef(new Float32Array(2))).toEqualTypeOf<Undef<'float32'>>();
    expectTypeOf(Undef(new BigUint64Array(2))).toEqualTypeOf<Undef<'uint64'>>();
    expectTypeOf(Undef(hostArray(new Int8Array(2)))).toEqualTypeOf<Undef<'int8'>>();
    const x = {} as HostArray<'int8'>;
    expectTypeOf(Undef(x)).toEqualTypeOf<Undef<'int8'>>();
  });

  it('an override of the dtype or the dims', () => {
    expectTypeOf(Undef(new Float32Array(2), 'int32')).toEqualTypeOf<Undef<'int32'>>();
    expectTypeOf(Undef(new Float32Array(4), [2, 2])).toEqualTypeOf<Undef<'float32'>>();
  });

  it('refuses ill-typed calls, and look-alike objects', () => {
    // @ts-expect-error not a dtype
    Undef('complex64', 2);
    // @ts-expect-error dims are numbers
    Undef('float32', '2');
    // @ts-expect-error a plain JS array is not an exemplar
    Undef([1, 2, 3]);
    // @ts-expect-error only Undef(...) makes an Undef
    const fake: Undef<'float32'> = { dtype: 'float32', dims: [2], length: 2, byteLength: 8 };
    void fake;
  });

  it('zeroed keeps the Undef’s type, and takes only Undefs', () => {
    expectTypeOf(zeroed(Undef('uint16', 2))).toEqualTypeOf<Undef<'uint16'>>();
    expectTypeOf(Undef('float32', 2).zeroed).toEqualTypeOf<boolean>();
    // @ts-expect-error an array is not an Undef
    zeroed(new Float32Array(2));
  });

  it('isUndef narrows', () => {
    const x: unknown = Undef('int8', 1);
    if (isUndef(x)) expectTypeOf(x).toEqualTypeOf<Undef>();
  });
});
