import { describe, expectTypeOf, it } from 'vitest';
import {
  alloc,
  capturing,
  type HostArray,
  hostArray,
  type Kind,
  type KindOf,
  type PolArray,
  Similar,
  type Space,
} from './index.js';

describe('Similar types', () => {
  it('a TypedArray or host array exemplar gives a host space', () => {
    expectTypeOf(Similar(new Float32Array())).toEqualTypeOf<Space<'host'>>();
    expectTypeOf(Similar(new BigInt64Array(1))).toEqualTypeOf<Space<'host'>>();
    expectTypeOf(Similar(hostArray(new Int8Array(1)))).toEqualTypeOf<Space<'host'>>();
    expectTypeOf(alloc(Similar(new Float32Array()), 'float32', 2)).toEqualTypeOf<HostArray<'float32'>>();
  });

  it('KindOf finds the kind of an array type', () => {
    expectTypeOf<KindOf<Float32Array>>().toEqualTypeOf<'host'>();
    expectTypeOf<KindOf<Uint16Array>>().toEqualTypeOf<'host'>();
    expectTypeOf<KindOf<HostArray<'int8'>>>().toEqualTypeOf<'host'>();
    expectTypeOf<KindOf<PolArray>>().toEqualTypeOf<Kind>();
  });

  it('refuses what is not an array', () => {
    // @ts-expect-error a plain JS array is not an exemplar
    Similar([1, 2, 3]);
    // @ts-expect-error a number is not an exemplar
    Similar(3);
  });

  it('capturing answers a boolean for anything', () => {
    expectTypeOf(capturing).parameter(0).toEqualTypeOf<unknown>();
    expectTypeOf(capturing(1)).toEqualTypeOf<boolean>();
  });
});
