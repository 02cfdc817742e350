import { describe, expectTypeOf, it } from 'vitest';
import {
  alloc,
  type HostArray,
  hostArray,
  type Materialize,
  materialize,
  Similar,
  type Space,
  type Spec,
  scratchspace,
  Undef,
  withspace,
} from './index.js';

const host = Similar(new Float32Array(0));
declare const custom: Space<'host'>;

describe('alloc result types, explicit forms', () => {
  it('an Undef gives the space’s array of its dtype', () => {
    expectTypeOf(alloc(host, Undef('float32', 2))).toEqualTypeOf<HostArray<'float32'>>();
    expectTypeOf(alloc(custom, Undef(new BigInt64Array(1)))).toEqualTypeOf<HostArray<'int64'>>();
  });

  it('a dtype and dims, as an array (empty for a scalar) or as rest arguments', () => {
    expectTypeOf(alloc(host, 'int8', [2, 3])).toEqualTypeOf<HostArray<'int8'>>();
    expectTypeOf(alloc(host, 'uint16', 2, 3)).toEqualTypeOf<HostArray<'uint16'>>();
    expectTypeOf(alloc(host, 'float64', [])).toEqualTypeOf<HostArray<'float64'>>();
    expectTypeOf(alloc(host, 'float32', 4).data).toEqualTypeOf<Float32Array>();
    expectTypeOf(alloc(host, 'uint64', 4).data).toEqualTypeOf<BigUint64Array>();
  });

  it('a frame gives the same arrays as its space', () => {
    scratchspace(host, (frame) => {
      expectTypeOf(alloc(frame, 'int32', 2)).toEqualTypeOf<HostArray<'int32'>>();
    });
  });

  it('a spec: Undefs become arrays, nested specs map, pass-through arrays keep their own type', () => {
    const mine = new Float32Array(3);
    const theirs = hostArray(new Int16Array(4));
    const out = alloc(host, {
      w: Undef('float32', 3, 3),
      layers: { k: Undef('int8', 2), h: theirs, deeper: { m: Undef('uint32', 1) } },
      y: mine,
    });
    expectTypeOf(out.w).toEqualTypeOf<HostArray<'float32'>>();
    expectTypeOf(out.layers.k).toEqualTypeOf<HostArray<'int8'>>();
    expectTypeOf(out.layers.h).toEqualTypeOf<HostArray<'int16'>>();
    expectTypeOf(out.layers.deeper.m).toEqualTypeOf<HostArray<'uint32'>>();
    expectTypeOf(out.y).toEqualTypeOf<Float32Array<ArrayBuffer>>();
    expectTypeOf(materialize(host, { a: Undef('int16', 1) }).a).toEqualTypeOf<HostArray<'int16'>>();
  });
});

describe('alloc result types, specs holding JavaScript arrays', () => {
  it('a tuple of Undefs and specs gives a tuple of the materialized elements', () => {
    const out = alloc(host, {
      layers: [{ w: Undef('float32', 2, 3) }, { w: Undef('float64', 3) }],
      pair: [Undef('int8', 1), Undef('uint8', 1)],
    });
    expectTypeOf(out.layers).toEqualTypeOf<[{ w: HostArray<'float32'> }, { w: HostArray<'float64'> }]>();
    expectTypeOf(out.pair).toEqualTypeOf<[HostArray<'int8'>, HostArray<'uint8'>]>();
    expectTypeOf(out.layers[1].w).toEqualTypeOf<HostArray<'float64'>>();
  });

  it('an array of unknown length gives an array', () => {
    const layers: { w: Undef<'float32'> }[] = [1, 2, 3].map((n) => ({ w: Undef('float32', n) }));
    expectTypeOf(alloc(host, { layers }).layers).toEqualTypeOf<{ w: HostArray<'float32'> }[]>();
    const readonlyLayers: readonly Undef<'int32'>[] = [Undef('int32', 1)];
    expectTypeOf(alloc(host, { readonlyLayers }).readonlyLayers).toEqualTypeOf<HostArray<'int32'>[]>();
  });

  it('data arrays inside lists keep their own type, and lists nest', () => {
    const mine = hostArray(new Int16Array(2));
    const out = alloc(host, { grid: [[Undef('float32', 1), mine], []] });
    expectTypeOf(out.grid).toEqualTypeOf<[[HostArray<'float32'>, HostArray<'int16'>], []]>();
  });
});

describe('alloc result types, ambient forms', () => {
  it('each form has an ambient spelling with the same array type', () => {
    withspace(host, () => {
      expectTypeOf(alloc(Undef('float32', 2))).toEqualTypeOf<HostArray<'float32'>>();
      expectTypeOf(alloc('int8', [2])).toEqualTypeOf<HostArray<'int8'>>();
      expectTypeOf(alloc('int8', 2, 2)).toEqualTypeOf<HostArray<'int8'>>();
      expectTypeOf(alloc('float64', [])).toEqualTypeOf<HostArray<'float64'>>();
      const mine = hostArray(new Uint8Array(1));
      const out = alloc({ a: Undef('uint8', 2), n: { mine } });
      expectTypeOf(out.a).toEqualTypeOf<HostArray<'uint8'>>();
      expectTypeOf(out.n.mine).toEqualTypeOf<HostArray<'uint8'>>();
    });
  });
});

describe('Materialize', () => {
  it('maps a spec type for a space kind', () => {
    type S = { a: Undef<'float32'>; g: { b: Undef<'int8'>; c: Float64Array }; readonly r: Undef<'uint8'> };
    expectTypeOf<Materialize<S, 'host'>>().toEqualTypeOf<{
      a: HostArray<'float32'>;
      g: { b: HostArray<'int8'>; c: Float64Array };
      r: HostArray<'uint8'>;
    }>();
    expectTypeOf<Materialize<Undef<'int32'>, 'host'>>().toEqualTypeOf<HostArray<'int32'>>();
  });

  it('maps tuples to tuples and arrays to arrays, readonly ones too', () => {
    type S = { t: readonly [Undef<'float32'>, { b: Undef<'int8'> }]; a: readonly Undef<'uint8'>[]; m: Undef<'int16'>[] };
    expectTypeOf<Materialize<S, 'host'>>().toEqualTypeOf<{
      t: [HostArray<'float32'>, { b: HostArray<'int8'> }];
      a: HostArray<'uint8'>[];
      m: HostArray<'int16'>[];
    }>();
  });

  it('a spec typed only as Spec materializes to indexable groups and lists of arrays', () => {
    const out = {} as Materialize<Spec, 'host'>;
    const value = out.anything;
    expectTypeOf(value).not.toBeAny();
    if (Array.isArray(value)) expectTypeOf(value[0]).not.toBeAny();
  });
});

describe('alloc refuses ill-typed calls', () => {
  it('unknown dtypes, bad dims, bad spec values, Undef look-alikes, non-spaces', () => {
    // @ts-expect-error not a dtype
    alloc(host, 'complex64', 2);
    // @ts-expect-error dims are numbers
    alloc(host, 'float32', '3');
    // @ts-expect-error a spec value must be an Undef, an array or a spec
    alloc(host, { a: 5 });
    // @ts-expect-error a JS array holds spec values, and a number is not one
    alloc(host, { a: [1, 2] });
    // @ts-expect-error nor is a string, inside a nested list
    alloc(host, { a: [[Undef('int8', 1), 'zeros']] });
    // @ts-expect-error an object that merely looks like an Undef is not one
    alloc(host, { a: { dtype: 'float32', dims: [2], length: 2, byteLength: 8 } });
    // @ts-expect-error not a space
    alloc({}, 'float32', 2);
    // @ts-expect-error a dtype needs its dims ([] for a scalar): the call is refused at run time too
    alloc(host, 'float32');
    const spec: Spec = { a: Undef('float32', 1) };
    expectTypeOf(alloc(host, spec)).toEqualTypeOf<Materialize<Spec, 'host'>>();
  });
});
