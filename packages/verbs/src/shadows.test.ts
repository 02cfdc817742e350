import { Arena, StaleArrayError } from '@pol/arena';
import {
  alloc,
  describe,
  type HostArray,
  hostArray,
  InvalidArgumentError,
  InvalidSpecError,
  NotASpaceError,
  type PolArray,
  PolError,
  Similar,
  type Space,
  scratchspace,
  withspace,
  ZeroUnsupportedError,
} from '@pol/core';
import { type ArrayFamily, familyKey, spaceKey } from '@pol/core/backend';
import fc from 'fast-check';
import { expect, describe as group, test } from 'vitest';
import { Allocating } from './allocating.js';
import { KindMismatchError, NoSpaceError, NotAPrimalError, ShadowMismatchError } from './errors.js';
import { Shadows, shadowSpec, walkShadows, zeroShadows } from './shadows.js';
import { leaves, type Tree, treeArb } from './test-support/arbitraries.js';
import { caught } from './test-support/caught.js';
import { countingSpace } from './test-support/counting.js';
import { DeviceFull, recordingSimilar, releasingFamily } from './test-support/releasing.js';

type F32 = HostArray<'float32'>;
const f32 = (values: number[], dims?: number[]): F32 => hostArray(Float32Array.from(values), dims);
const params = () => ({
  layer1: { w: f32([1, 2, 3, 4, 5, 6], [2, 3]), b: f32([1, 2, 3]) },
  layer2: { w: f32([1, 2, 3], [3, 1]), b: f32([1]) },
});
const isZero = (a: HostArray) => Array.from(a.data as ArrayLike<number | bigint>).every((v) => v === 0 || v === 0n);

group('Shadows', () => {
  test('mirrors a nested structure: same names, dtypes and dims, all zero, from the given space', () => {
    const space = countingSpace(Number.NaN);
    const p = params();
    const g = Shadows(space, p);
    expect(Object.keys(g)).toEqual(['layer1', 'layer2']);
    expect(Object.keys(g.layer1)).toEqual(['w', 'b']);
    expect(g.layer1.w.dims).toEqual([2, 3]);
    expect(g.layer2.w.dims).toEqual([3, 1]);
    expect(g.layer1.w.dtype).toBe('float32');
    for (const a of [g.layer1.w, g.layer1.b, g.layer2.w, g.layer2.b]) expect(isZero(a)).toBe(true);
    expect(space.live).toBe(4);
    expect(g.layer1.w).not.toBe(p.layer1.w);
  });

  test('a single array gives a single shadow', () => {
    const g = Shadows(countingSpace(), hostArray(new Int32Array(3)));
    expect([g.dtype, g.dims, isZero(g)]).toEqual(['int32', [3], true]);
  });

  test('a bare TypedArray primal gives a host-array shadow of its dtype and length', () => {
    const g = Shadows(countingSpace(), new Float64Array(2));
    expect([g.dtype, g.dims]).toEqual(['float64', [2]]);
  });

  test('ambient: from the bound space, or unscoped from Similar of the first primal', () => {
    const space = countingSpace();
    withspace(space, () => Shadows(params()));
    expect(space.live).toBe(4);
    scratchspace(space, () => {
      Shadows({ w: f32([1]) });
      expect(space.live).toBe(5);
    });
    expect(space.live).toBe(4);
    expect(Shadows(params()).layer2.b.dims).toEqual([1]);
  });

  test('a non-array leaf is refused with its key path, before anything is allocated', () => {
    const space = countingSpace();
    const error = caught(() => Shadows(space, { layer: { w: f32([1]), lr: 0.1 } } as never));
    expect(error).toBeInstanceOf(NotAPrimalError);
    expect(error).toBeInstanceOf(PolError);
    expect((error as NotAPrimalError).code).toBe('POL_NOT_A_PRIMAL');
    expect((error as NotAPrimalError).path).toBe('layer.lr');
    expect((error as Error).message).toContain("'layer.lr' is 0.1");
    expect(space.log).toEqual([]);
  });

  test('null, holes, non-arrays and cycles are not primals', () => {
    expect(() => Shadows(countingSpace(), { a: null } as never)).toThrow(NotAPrimalError);
    expect(() => Shadows(countingSpace(), { layers: [f32([1]), 3] } as never)).toThrow(
      expect.objectContaining({ code: 'POL_NOT_A_PRIMAL', path: 'layers[1]' }),
    );
    // biome-ignore lint/suspicious/noSparseArray: a hole is what is tested.
    expect(() => Shadows(countingSpace(), [f32([1]), , f32([2])] as never)).toThrow(expect.objectContaining({ path: '[1]' }));
    const cyclic: Record<string, unknown> = { w: f32([1]) };
    cyclic.self = cyclic;
    expect(() => Shadows(countingSpace(), cyclic as never)).toThrow(/refer back/);
  });

  test('a space that is not one, and no space at all', () => {
    expect(() => Shadows({} as never, { w: f32([1]) })).toThrow(NotASpaceError);
    const error = (() => {
      try {
        Shadows({} as never);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(NoSpaceError);
    expect((error as NoSpaceError).code).toBe('POL_NO_SPACE');
  });

  test('a space that runs out part-way rolls back: nothing left allocated', () => {
    const space = countingSpace();
    space.failAfter = 2;
    expect(() => Shadows(space, params())).toThrow('counting space full');
    expect(space.live).toBe(0);
  });

  test('arrays without host data cannot be zeroed: typed error, rolled back', () => {
    // A family of arrays with no host data, as a GPU backend's would be.
    const deviceFamily: ArrayFamily<'host'> = {
      kind: 'host',
      allocSimilar: () => {
        throw new Error('not used');
      },
      describe: () => 'device',
    };
    let live = 0;
    const device: Space<'host'> & { [k: symbol]: unknown } = {
      [spaceKey]: 'host',
      alloc(dtype, dims) {
        live++;
        return { dtype, dims, [familyKey]: deviceFamily } as PolArray as never;
      },
      [Symbol.for('@pol/core/savepoint')]: () => live,
      [Symbol.for('@pol/core/rollback')]: (token: unknown) => {
        live = token as number;
      },
    };
    expect(() => Shadows(device, { w: f32([1]) })).toThrow(ZeroUnsupportedError);
    expect(live).toBe(0);
    const error = (() => {
      try {
        zeroShadows({ w: device.alloc('float32', [1]) } as never);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect((error as ZeroUnsupportedError).code).toBe('POL_ZERO_UNSUPPORTED');
  });

  test('property: shadows mirror any nested structure of random shapes and start at zero', () => {
    fc.assert(
      fc.property(treeArb, (tree) => {
        const space = countingSpace(Number.NaN);
        const shadows = Shadows(space, tree as never) as Tree;
        const want = leaves(tree);
        const got = leaves(shadows);
        expect(got.map(([path, a]) => [path, a.dtype, a.dims])).toEqual(want.map(([path, a]) => [path, a.dtype, a.dims]));
        for (const [, a] of got) expect(isZero(a)).toBe(true);
        for (const [i, [, a]] of got.entries()) expect(a).not.toBe(want[i]?.[1]);
        expect(space.live).toBe(want.length);
      }),
    );
  });
});

group('shadowSpec', () => {
  test('turns primals into a spec of zeroed Undefs with the same structure', () => {
    const spec = shadowSpec(params());
    expect(String(spec.layer1.w)).toBe('zeroed(Undef(float32, [2, 3]))');
    expect(String(spec.layer2.b)).toBe('zeroed(Undef(float32, [1]))');
    expect(spec.layer1.w.zeroed).toBe(true);
  });

  test('is a spec core materializes zeroed too, on memory that is not', () => {
    const a = alloc(countingSpace(Number.NaN), shadowSpec({ w: f32([1, 2]) }));
    expect(a.w.dims).toEqual([2]);
    expect(Array.from(a.w.data)).toEqual([0, 0]);
  });

  test('refuses non-array leaves with their path', () => {
    expect(() => shadowSpec({ a: { b: 'x' } } as never)).toThrow(expect.objectContaining({ path: 'a.b' }));
    expect(() => shadowSpec(undefined as never)).toThrow(NotAPrimalError);
  });

  test('core still refuses what is not a spec (sanity of the boundary)', () => {
    expect(() => alloc(Similar(new Float32Array(0)), { a: 1 } as never)).toThrow(InvalidSpecError);
  });
});

group('zeroShadows', () => {
  test('zeroes every shadow in one call', () => {
    const g = Shadows(params());
    g.layer1.w.data.fill(5);
    g.layer2.b.data.fill(5);
    zeroShadows(g);
    expect(isZero(g.layer1.w) && isZero(g.layer2.b)).toBe(true);
  });

  test('zeroes bigint arrays too', () => {
    const a = hostArray(BigInt64Array.from([1n, 2n]));
    zeroShadows(a);
    expect(Array.from(a.data)).toEqual([0n, 0n]);
  });

  test('checks the whole structure before writing anything', () => {
    const g = { a: f32([1]), b: 'oops' };
    expect(() => zeroShadows(g as never)).toThrow(expect.objectContaining({ code: 'POL_NOT_A_PRIMAL', path: 'b' }));
    expect(Array.from(g.a.data)).toEqual([1]);
  });

  test('property: zeroes every leaf of any structure', () => {
    fc.assert(
      fc.property(treeArb, (tree) => {
        zeroShadows(tree as never);
        for (const [, a] of leaves(tree)) expect(isZero(a)).toBe(true);
      }),
    );
  });
});

group('walkShadows', () => {
  test('an SGD step over parameters and their gradients', () => {
    const p = params();
    const g = Shadows(p);
    g.layer1.w.data.fill(10);
    g.layer2.b.data.fill(-10);
    const paths: string[] = [];
    walkShadows(p, g, (primal, shadow, path) => {
      paths.push(path);
      for (let i = 0; i < primal.data.length; i++) primal.data[i] = (primal.data[i] ?? 0) - 0.1 * (shadow.data[i] ?? 0);
    });
    expect(paths).toEqual(['layer1.w', 'layer1.b', 'layer2.w', 'layer2.b']);
    expect(Array.from(p.layer1.w.data)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(Array.from(p.layer2.b.data)).toEqual([2]);
    expect(Array.from(p.layer1.b.data)).toEqual([1, 2, 3]);
  });

  test('a single pair has the empty path', () => {
    const paths: string[] = [];
    walkShadows(f32([1]), f32([2]), (_p, _g, path) => paths.push(path));
    expect(paths).toEqual(['']);
  });

  const mismatch = (primals: unknown, shadows: unknown, path: string, fragment: string) => {
    let called = 0;
    const error = caught(() => walkShadows(primals as never, shadows as never, () => called++));
    expect(called).toBe(0);
    expect(error).toBeInstanceOf(ShadowMismatchError);
    expect((error as ShadowMismatchError).code).toBe('POL_SHADOW_MISMATCH');
    expect((error as ShadowMismatchError).path).toBe(path);
    expect((error as Error).message).toContain(fragment);
  };

  test('refuses structures that do not pair up, before calling f at all', () => {
    mismatch({ a: f32([1]), b: f32([1]) }, { a: f32([1]) }, 'b', "primals have 'b'");
    mismatch({ a: f32([1]) }, { a: f32([1]), c: f32([1]) }, 'c', "shadows have 'c'");
    mismatch({ a: f32([1]), b: f32([1]) }, { a: f32([1]), b: f32([1, 2]) }, 'b', 'float32[2]');
    mismatch({ a: f32([1]) }, { a: hostArray(Float64Array.from([1])) }, 'a', 'float64[1]');
    mismatch({ a: { w: f32([1]) } }, { a: f32([1]) }, 'a', 'a group { w }');
    mismatch({ a: f32([1]) }, { a: { w: f32([1]) } }, 'a', 'its shadow is a plain object');
  });

  test('refuses primals that are not arrays or groups', () => {
    expect(() => walkShadows({ a: 1 } as never, { a: 1 } as never, () => {})).toThrow(NotAPrimalError);
  });

  test('property: visits every pair of any structure once, in key order, with its path', () => {
    fc.assert(
      fc.property(treeArb, (tree) => {
        const shadows = Shadows(countingSpace(), tree as never) as Tree;
        const seen: [string, unknown, unknown][] = [];
        walkShadows(tree as never, shadows as never, (p, s, path) => seen.push([path, p, s]));
        const want = leaves(tree);
        const got = leaves(shadows);
        expect(seen).toEqual(want.map(([path, p], i) => [path, p, got[i]?.[1]]));
        for (const [i, [, p, s]] of seen.entries()) {
          expect(p).toBe(want[i]?.[1]);
          expect(s).toBe(got[i]?.[1]);
        }
      }),
    );
  });
});

group('checked before anything is written', () => {
  test('zeroShadows({ a: ok, b: arrayWithoutData }) zeroes nothing', () => {
    const a = f32([5, 5]);
    const noData = { dtype: 'float32', dims: [2], [familyKey]: { kind: 'host', describe: () => 'x' } } as unknown as PolArray;
    const error = caught(() => zeroShadows({ a, b: noData } as never));
    expect(error).toBeInstanceOf(ZeroUnsupportedError);
    expect((error as Error).message).toContain("the shadow at 'b'");
    expect(Array.from(a.data)).toEqual([5, 5]);
  });

  test('a stale shadow of a checked arena is refused before the live ones are zeroed', () => {
    const arena = new Arena(new ArrayBuffer(4096), { checked: true });
    const live = Shadows(arena, { w: f32([0, 0]) });
    live.w.data.fill(5);
    let stale: { w: F32 } | undefined;
    scratchspace(arena, (frame) => {
      stale = Shadows(frame, { w: f32([0, 0]) });
    });
    expect(() => zeroShadows({ live, stale } as never)).toThrow(StaleArrayError);
    expect(Array.from(live.w.data)).toEqual([5, 5]);
  });

  test("a family's own checkZero refusal (a released device array) comes before any shadow is zeroed", () => {
    const zeroedArrays: PolArray[] = [];
    const refused = new ZeroUnsupportedError('released device array');
    const family = {
      kind: 'device',
      describe: () => 'float32[2] on a device',
      allocSimilar: () => {
        throw new Error('not used');
      },
      checkZero(array: PolArray) {
        if ((array as unknown as { released: boolean }).released) throw refused;
      },
      zero: (array: PolArray) => void zeroedArrays.push(array),
    };
    const device = (released: boolean) => ({ dtype: 'float32', dims: [2], released, [familyKey]: family }) as unknown as PolArray;
    const ok = device(false);
    const host = f32([5, 5]);
    expect(caught(() => zeroShadows({ ok, host, gone: device(true) } as never))).toBe(refused);
    expect(zeroedArrays).toEqual([]);
    expect(Array.from(host.data)).toEqual([5, 5]);
    zeroShadows({ ok, host } as never);
    expect(zeroedArrays).toEqual([ok]);
    expect(Array.from(host.data)).toEqual([0, 0]);
  });

  test('walkShadows(p, g, 42): a typed error, and nothing walked', () => {
    const p = params();
    const g = Shadows(p);
    for (const bad of [42, undefined, 'f', {}]) {
      expect(() => walkShadows(p, g, bad as never)).toThrow(InvalidArgumentError);
    }
    expect(() => walkShadows(p, g, 42 as never)).toThrow(
      /needs a function f\(primal, shadow, path\), called for each pair of arrays, got 42/,
    );
  });
});

group('structures that hold JavaScript arrays (a model’s layers)', () => {
  const layers = () => [
    { w: f32([1, 2, 3, 4, 5, 6], [2, 3]), b: f32([1, 2, 3]) },
    { w: f32([1, 2, 3], [3, 1]), b: f32([1]) },
  ];

  test('shadows keep the list: same length, same names, same dims, all zero', () => {
    const p = { layers: layers(), scale: f32([2]) };
    const g = Shadows(countingSpace(Number.NaN), p);
    expect(Array.isArray(g.layers)).toBe(true);
    expect(g.layers.map((l) => [l.w.dims, l.b.dims])).toEqual([
      [[2, 3], [3]],
      [[3, 1], [1]],
    ]);
    expect(isZero(g.layers[1]?.w as F32) && isZero(g.scale)).toBe(true);
    expect(String(shadowSpec(p).layers[0]?.w)).toBe('zeroed(Undef(float32, [2, 3]))');
  });

  test('walkShadows names list elements by index, and zeroShadows zeroes them', () => {
    const p = { layers: layers() };
    const g = Shadows(p);
    const paths: string[] = [];
    walkShadows(p, g, (_p, s, path) => {
      paths.push(path);
      s.data.fill(1);
    });
    expect(paths).toEqual(['layers[0].w', 'layers[0].b', 'layers[1].w', 'layers[1].b']);
    zeroShadows(g);
    expect(g.layers.every((l) => isZero(l.w) && isZero(l.b))).toBe(true);
  });

  test('a top-level list, and lists that do not pair up', () => {
    const p = layers();
    const g = Shadows(p);
    expect(g.length).toBe(2);
    mismatchError(p, [g[0]], '', 'a list of 1');
    mismatchError({ layers: p }, { layers: { 0: g[0], 1: g[1] } }, 'layers', 'a list of 2');
  });

  test('paths are kept between walks, and follow a structure that changed', () => {
    const p: Record<string, F32> = { a: f32([1]) };
    const g: Record<string, F32> = { a: f32([0]) };
    const walk = () => {
      const paths: string[] = [];
      walkShadows(p, g, (_p, _s, path) => paths.push(path));
      return paths;
    };
    expect(walk()).toEqual(['a']);
    const first = walk()[0];
    p.b = f32([2]);
    g.b = f32([0]);
    expect(walk()).toEqual(['a', 'b']);
    expect(first).toBe('a');
  });

  test('a shadow spec of a list is a verb output: zeroed, accumulated into when it is yours', () => {
    const backward = Allocating(
      describe(
        function backward(grads: { dlayers: { w: F32 }[] }, ls: { w: F32 }[]) {
          for (const [i, l] of ls.entries()) {
            const d = grads.dlayers[i]?.w.data ?? new Float32Array(0);
            for (let j = 0; j < d.length; j++) d[j] = (d[j] ?? 0) + (l.w.data[j] ?? 0);
          }
        },
        { outputs: (ls: { w: F32 }[]) => ({ dlayers: shadowSpec(ls) }) },
      ),
    );
    const ls = [{ w: f32([1, 2]) }, { w: f32([3]) }];
    const space = countingSpace(Number.NaN);
    const { dlayers } = backward(space, ls);
    expect(dlayers.map((l) => Array.from(l.w.data))).toEqual([[1, 2], [3]]);
    backward(space, ls, { dlayers });
    expect(dlayers.map((l) => Array.from(l.w.data))).toEqual([[2, 4], [6]]);
  });
});

group('Shadows(primals) makes shadows of the primals’ own kind', () => {
  test('an ambient space of another kind is refused before anything is allocated', () => {
    let allocated = 0;
    const device = {
      [spaceKey]: 'gpu',
      alloc() {
        allocated++;
        throw new Error('not used');
      },
    } as unknown as Space;
    const error = caught(() => withspace(device, () => Shadows({ w: f32([1]) })));
    expect(error).toBeInstanceOf(KindMismatchError);
    expect([(error as KindMismatchError).path, (error as KindMismatchError).expected, (error as KindMismatchError).got]).toEqual([
      'w',
      'host',
      'gpu',
    ]);
    expect((error as Error).message).toContain('Shadows(space, primals)');
    expect(allocated).toBe(0);
    // With the space given, the caller says what kind they want.
    expect(() => Shadows(device, { w: f32([1]) })).toThrow('not used');
  });
});

function mismatchError(primals: unknown, shadows: unknown, path: string, fragment: string): void {
  const error = caught(() => walkShadows(primals as never, shadows as never, () => {}));
  expect(error).toBeInstanceOf(ShadowMismatchError);
  expect((error as ShadowMismatchError).path).toBe(path);
  expect((error as Error).message).toContain(fragment);
}

group('Shadows over Similar of memory the GC cannot free (a family with release)', () => {
  test('a failure part-way releases the shadows already made; success commits and keeps them', () => {
    const device = releasingFamily();
    const primals = { w: device.array([1, 2]), b: device.array([1, 2, 3]) };
    device.failOnFirstDim = 3;
    expect(() => Shadows(Similar(primals.w), primals)).toThrow(DeviceFull);
    expect(device.made).toHaveLength(1);
    expect(device.released).toEqual([device.made]);
    device.failOnFirstDim = undefined;
    const { space, ended } = recordingSimilar(primals.w);
    const shadows = Shadows(space, primals) as { w: HostArray; b: HostArray };
    expect(isZero(shadows.w) && isZero(shadows.b)).toBe(true);
    expect(ended.committed).toEqual(ended.taken);
    expect(ended.rolledBack).toEqual([]);
    expect(device.released).toHaveLength(1);
  });
});
