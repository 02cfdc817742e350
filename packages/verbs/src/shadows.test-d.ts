import type { Arena } from '@pol/arena';
import type { HostArray, Undef } from '@pol/core';
import { expectTypeOf, describe as group, test } from 'vitest';
import { Shadows, shadowSpec, walkShadows, zeroShadows } from './shadows.js';

type F32 = HostArray<'float32'>;
declare const arena: Arena<'host'>;
interface Layer {
  w: F32;
  b: F32;
}
declare const params: { layer1: Layer; layer2: { w: F32; b: HostArray<'float64'> } };

group('Shadows', () => {
  test('mirror the structure of the primals, dtype for dtype', () => {
    expectTypeOf(Shadows(arena, params)).toEqualTypeOf<{
      layer1: { w: F32; b: F32 };
      layer2: { w: F32; b: HostArray<'float64'> };
    }>();
    expectTypeOf(Shadows(params).layer2.b).toEqualTypeOf<HostArray<'float64'>>();
    expectTypeOf(Shadows(arena, new Int32Array(2))).toEqualTypeOf<HostArray<'int32'>>();
  });

  test('shadowSpec gives Undefs with the same structure', () => {
    expectTypeOf(shadowSpec(params)).toEqualTypeOf<{
      layer1: { w: Undef<'float32'>; b: Undef<'float32'> };
      layer2: { w: Undef<'float32'>; b: Undef<'float64'> };
    }>();
  });

  test('non-array leaves do not compile', () => {
    // @ts-expect-error: a number is not a primal
    Shadows(arena, { w: params.layer1.w, lr: 0.1 });
    // @ts-expect-error: a string is not a primal
    shadowSpec({ name: 'w' });
    // @ts-expect-error: a number is not a shadow
    zeroShadows({ g: 1 });
  });

  test('walkShadows types the pairs from the structures', () => {
    const grads = Shadows(arena, params);
    walkShadows(params, grads, (p, g, path) => {
      expectTypeOf(p).toEqualTypeOf<F32 | HostArray<'float64'>>();
      expectTypeOf(g).toEqualTypeOf<F32 | HostArray<'float64'>>();
      expectTypeOf(path).toEqualTypeOf<string>();
    });
    zeroShadows(grads);
  });
});

group('structures with JavaScript arrays', () => {
  const layers = [
    { w: {} as F32, b: {} as F32 },
    { w: {} as F32, b: {} as HostArray<'float64'> },
  ] as const;

  test('a tuple of layers gives a tuple of shadows; an array gives an array', () => {
    const grads = Shadows(arena, { layers });
    expectTypeOf(grads.layers[1].b).toEqualTypeOf<HostArray<'float64'>>();
    expectTypeOf(grads.layers).toEqualTypeOf<[{ w: F32; b: F32 }, { w: F32; b: HostArray<'float64'> }]>();
    const many: Layer[] = [];
    expectTypeOf(Shadows(arena, many)).toEqualTypeOf<{ w: F32; b: F32 }[]>();
    expectTypeOf(shadowSpec({ layers }).layers[0].w).toEqualTypeOf<Undef<'float32'>>();
  });

  test('walkShadows and zeroShadows take them; non-array leaves inside lists do not compile', () => {
    walkShadows({ layers }, Shadows(arena, { layers }), (p) => {
      expectTypeOf(p).toEqualTypeOf<F32 | HostArray<'float64'>>();
    });
    zeroShadows([{} as F32]);
    // @ts-expect-error: a number in a list is not a primal
    Shadows(arena, { layers: [{} as F32, 1] });
  });
});
