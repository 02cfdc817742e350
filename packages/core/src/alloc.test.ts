import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { allocLengthKey, internDim, internDims, isPlainObject, rollbackKey, spaceKey } from './backend.js';
import {
  alloc,
  type DType,
  dtypeInfo,
  dtypes,
  FrameClosedError,
  type HostArray,
  hostArray,
  InvalidArgumentError,
  InvalidShapeError,
  InvalidSpecError,
  isArray,
  isUndef,
  NoAmbientSpaceError,
  NotASpaceError,
  type PolError,
  Similar,
  type Space,
  type Spec,
  scratchspace,
  Undef,
  UnknownDTypeError,
  withspace,
} from './index.js';
import { countingSpace, InjectedFailure, transactionalSpace } from './test-support/fixtures.js';

const host = Similar(new Float32Array(0));

/** Call alloc with arguments its types would refuse: the bad inputs under test. */
const untypedAlloc = alloc as unknown as (...args: unknown[]) => unknown;

describe('alloc(space, ...), the explicit forms', () => {
  it('an Undef', () => {
    const space = countingSpace();
    const a = alloc(space, Undef('int32', [2, 3]));
    expect(a.dtype).toBe('int32');
    expect(a.dims).toEqual([2, 3]);
    expect(a.data).toBeInstanceOf(Int32Array);
    expect(a.data.length).toBe(6);
    expect(space.calls).toEqual([{ dtype: 'int32', dims: [2, 3] }]);
  });

  it('a dtype and a dims array', () => {
    const a = alloc(host, 'float64', [4, 2]);
    expect(a.dtype).toBe('float64');
    expect(a.dims).toEqual([4, 2]);
    expect(a.data).toBeInstanceOf(Float64Array);
    expect(a.data.length).toBe(8);
  });

  it('a dtype and rest dims', () => {
    const space = countingSpace();
    const a = alloc(space, 'uint16', 2, 3, 4);
    expect(a.dims).toEqual([2, 3, 4]);
    expect(a.data).toBeInstanceOf(Uint16Array);
    expect(alloc(space, 'int8', 7).dims).toEqual([7]);
    expect(space.calls.map((c) => c.dims)).toEqual([[2, 3, 4], [7]]);
  });

  it('a scalar is dims []: one element', () => {
    const a = alloc(host, 'float32', []);
    expect(a.dims).toEqual([]);
    expect(a.data.length).toBe(1);
  });

  it('zero-element arrays', () => {
    expect(alloc(host, 'float32', 0).data.length).toBe(0);
    expect(alloc(host, 'int64', [3, 0]).data).toEqual(new BigInt64Array(0));
    expect(alloc(host, Undef('uint8', 0, 9)).dims).toEqual([0, 9]);
  });

  it('a spec: name for name, nested, with arrays passed through untouched', () => {
    const space = countingSpace();
    const mine = new Float32Array(3);
    const theirs = hostArray(new Int8Array(4), [2, 2]);
    const out = alloc(space, {
      w: Undef('float32', 3, 3),
      b: Undef('float32', 3),
      y: mine,
      layers: { first: { k: Undef('int16', 2) }, h: theirs },
      empty: {},
    });
    expect(out.w.dims).toEqual([3, 3]);
    expect(out.w.data).toBeInstanceOf(Float32Array);
    expect(out.b.dims).toEqual([3]);
    expect(out.y).toBe(mine);
    expect(out.layers.h).toBe(theirs);
    expect(out.layers.first.k.dtype).toBe('int16');
    expect(out.empty).toEqual({});
    expect(Object.keys(out)).toEqual(['w', 'b', 'y', 'layers', 'empty']);
    expect(space.calls).toEqual([
      { dtype: 'float32', dims: [3, 3] },
      { dtype: 'float32', dims: [3] },
      { dtype: 'int16', dims: [2] },
    ]);
  });

  it('a spec result is a fresh object, never the spec itself', () => {
    const spec = { a: Undef('int8', 1), group: { b: Undef('int8', 1) } };
    const out = alloc(host, spec);
    expect(out).not.toBe(spec);
    expect(out.group).not.toBe(spec.group);
    expect(isUndef(spec.a)).toBe(true);
  });

  it('a spec that reuses one sub-spec (no cycle) materializes each use apart', () => {
    const shared = { k: Undef('float32', 2) };
    const out = alloc(host, { a: shared, b: shared });
    expect(out.a.k).not.toBe(out.b.k);
  });

  it('accepts a null-prototype spec', () => {
    const spec = Object.assign(Object.create(null) as Record<string, Undef>, { a: Undef('int8', 2) });
    const out = alloc(host, spec as Spec) as Record<string, HostArray>;
    expect(out.a?.dims).toEqual([2]);
  });
});

describe('alloc(...), the ambient forms', () => {
  it('forwards every form to the ambient space', () => {
    const space = countingSpace();
    const mine = new Int32Array(2);
    withspace(space, () => {
      expect(alloc(Undef('float32', 2)).dims).toEqual([2]);
      expect(alloc('float64', [3, 1]).dims).toEqual([3, 1]);
      expect(alloc('int8', 4, 5).dims).toEqual([4, 5]);
      expect(alloc('uint32', 6).dims).toEqual([6]);
      expect(alloc('int16', []).dims).toEqual([]);
      const out = alloc({ a: Undef('uint8', 1), nested: { b: Undef('uint8', 2) }, mine });
      expect(out.nested.b.dims).toEqual([2]);
      expect(out.mine).toBe(mine);
    });
    expect(space.calls).toEqual([
      { dtype: 'float32', dims: [2] },
      { dtype: 'float64', dims: [3, 1] },
      { dtype: 'int8', dims: [4, 5] },
      { dtype: 'uint32', dims: [6] },
      { dtype: 'int16', dims: [] },
      { dtype: 'uint8', dims: [1] },
      { dtype: 'uint8', dims: [2] },
    ]);
  });

  it('throws NoAmbientSpaceError for every form when nothing is bound', () => {
    expect(() => alloc(Undef('float32', 2))).toThrow(NoAmbientSpaceError);
    expect(() => alloc('float32', [2])).toThrow(NoAmbientSpaceError);
    expect(() => alloc('float32', 2, 2)).toThrow(NoAmbientSpaceError);
    expect(() => untypedAlloc('float32')).toThrow(NoAmbientSpaceError);
    expect(() => alloc({ a: Undef('float32', 2) })).toThrow(NoAmbientSpaceError);
  });
});

describe('alloc bad input', () => {
  it('refuses a first argument that is not a space (nor an ambient form) with NotASpaceError', () => {
    for (const bad of [{}, 42, null, undefined, new Float32Array(2), hostArray(new Float32Array(2)), [1, 2]]) {
      expect(() => untypedAlloc(bad, 'float32', 3)).toThrow(NotASpaceError);
    }
    expect(() => untypedAlloc()).toThrow(NotASpaceError);
    // Near misses of a space, which the one-dim form's own test of the space must refuse as isSpace does.
    const almost = [
      { [spaceKey]: 'host' }, // no alloc
      { [spaceKey]: 'host', alloc: 'not a function' },
      { [spaceKey]: 42, alloc: () => hostArray(new Float32Array(3)) }, // a tag that is no kind
      { alloc: () => hostArray(new Float32Array(3)) }, // no tag
    ];
    for (const bad of almost) expect(() => untypedAlloc(bad, 'float32', 3)).toThrow(NotASpaceError);
    expect(() => untypedAlloc({}, Undef('int8', 1))).toThrow(
      /alloc needs a space, got a plain object\. Pass an Arena, a Frame, or Similar\(x\)/,
    );
    try {
      untypedAlloc(42, 'float32', 3);
      expect.unreachable();
    } catch (error) {
      expect((error as PolError).code).toBe('POL_NOT_A_SPACE');
      expect((error as PolError).name).toBe('NotASpaceError');
    }
  });

  it('refuses what is neither an Undef, a dtype, nor a spec with InvalidArgumentError, allocating nothing', () => {
    const space = countingSpace();
    expect(() => untypedAlloc(space)).toThrow(InvalidArgumentError);
    expect(() => untypedAlloc(space, 42)).toThrow(InvalidArgumentError);
    expect(() => untypedAlloc(space, new Map())).toThrow(InvalidArgumentError);
    expect(() => untypedAlloc(space, Undef('int8', 1), 3)).toThrow(/got an Undef followed by more arguments/);
    expect(() => untypedAlloc(space, { a: Undef('int8', 1) }, 3)).toThrow(InvalidArgumentError);
    expect(() => untypedAlloc(space, 42)).toThrow(
      /Write alloc\(space, 'float32', \[3, 4\]\), alloc\(space, Undef\(x\)\) or alloc\(space, \{ y: Undef\(x\) \}\)/,
    );
    expect(space.calls).toEqual([]);
  });

  it('refuses an unknown dtype with UnknownDTypeError, allocating nothing', () => {
    const space = countingSpace();
    expect(() => alloc(space, 'complex64' as DType, 2)).toThrow(UnknownDTypeError);
    expect(() => alloc(space, 'complex64' as DType, [2])).toThrow(/Unknown dtype 'complex64'/);
    expect(() => withspace(space, () => untypedAlloc('complex64'))).toThrow(UnknownDTypeError);
    expect(() => untypedAlloc(space, 'complex64')).toThrow(UnknownDTypeError);
    // The empty string too, which the one-dim form's last-dtype memo must never take for a known one.
    expect(() => alloc(space, '' as DType, 2)).toThrow(UnknownDTypeError);
    expect(space.calls).toEqual([]);
  });

  it('refuses bad dims with InvalidShapeError, allocating nothing', () => {
    const space = countingSpace();
    for (const dims of [[-1], [1.5], [Number.NaN], [Number.POSITIVE_INFINITY], [2 ** 30, 2 ** 30]]) {
      expect(() => alloc(space, 'float32', dims)).toThrow(InvalidShapeError);
      expect(() => alloc(space, 'float32', ...(dims as [number, ...number[]]))).toThrow(InvalidShapeError);
    }
    expect(() => untypedAlloc(space, 'float32', [2], 3)).toThrow(InvalidShapeError);
    expect(() => untypedAlloc(space, 'float32', '3')).toThrow(/dims\[0\] is '3'/);
    expect(space.calls).toEqual([]);
  });

  it('takes an undefined argument for a missing one: a dtype with no dims, or an undefined dim, is refused, never a scalar', () => {
    const space = countingSpace();
    const noDims = /was given no dims, or an undefined one.*a scalar \(one element\) is alloc\(space, 'float32', \[\]\)/;
    expect(() => untypedAlloc(space, 'float32')).toThrow(InvalidShapeError);
    expect(() => untypedAlloc(space, 'float32')).toThrow(noDims);
    expect(() => untypedAlloc(space, 'float32', undefined)).toThrow(noDims);
    expect(() => withspace(space, () => untypedAlloc('float32', undefined))).toThrow(
      /alloc\('float32'\) was given no dims, or an undefined one.*alloc\('float32', \[\]\)/,
    );
    // An undefined dim with a dim after it is a hole in the dims.
    expect(() => untypedAlloc(space, 'float32', undefined, 3)).toThrow(/dims\[0\] is undefined/);
    expect(() => untypedAlloc(space, 'float32', 2, undefined, 3)).toThrow(/dims\[1\] is undefined/);
    expect(space.calls).toEqual([]);
    // Trailing undefined arguments are not there: the call is the one before them.
    expect((untypedAlloc(space, 'float32', 2, undefined) as HostArray).dims).toEqual([2]);
    expect((untypedAlloc(space, 'float32', 2, 3, undefined, undefined) as HostArray).dims).toEqual([2, 3]);
  });

  it('refuses more separate dims than it reads, with InvalidArgumentError, allocating nothing', () => {
    const space = countingSpace();
    const seven: [number, ...number[]] = [1, 1, 1, 1, 1, 1, 1];
    expect(alloc(space, 'float32', ...seven).dims).toEqual(seven);
    expect(() => alloc(space, 'float32', ...seven, 1)).toThrow(InvalidArgumentError);
    expect(() => alloc(space, 'float32', ...seven, 1)).toThrow(
      /at most 7 dims as separate arguments after the space and the dtype/,
    );
    expect(() => alloc(space, 'float32', ...seven, 1, 1, 1)).toThrow(/Pass the dims as one array/);
    withspace(space, () => {
      expect(alloc('float32', ...seven, 1).dims).toEqual([...seven, 1]);
      expect(() => alloc('float32', ...seven, 1, 1)).toThrow(/at most 8 dims as separate arguments after the dtype/);
    });
    expect(alloc(space, 'float32', [...seven, 1, 1, 1]).dims).toHaveLength(10);
    expect(space.calls.map((c) => c.dims.length)).toEqual([7, 8, 10]);
  });

  it('checks the dtype before the dims in the one-number form too', () => {
    const space = countingSpace();
    for (const n of [2, -1, 2 ** 53, Number.NaN]) {
      expect(() => alloc(space, 'complex64' as DType, n)).toThrow(UnknownDTypeError);
      expect(() => withspace(space, () => alloc('complex64' as DType, n))).toThrow(UnknownDTypeError);
    }
    for (const n of [-1, 0.5, 2 ** 53, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => alloc(space, 'float32', n)).toThrow(InvalidShapeError);
    }
    expect(() => alloc(space, 'float64', 2 ** 51)).toThrow(/past Number\.MAX_SAFE_INTEGER bytes/);
    // The boundary: 2^50 elements of 8 bytes is 2^53 bytes, one past the safe range; one element fewer is within it.
    expect(() => alloc(space, 'float64', 2 ** 50)).toThrow(/past Number\.MAX_SAFE_INTEGER bytes/);
    expect(() => withspace(space, () => alloc('int64', 2 ** 50))).toThrow(/past Number\.MAX_SAFE_INTEGER bytes/);
    expect(space.calls).toEqual([]);
  });
  it('refuses a spec with a bad value at layers.w: InvalidSpecError naming the path, nothing allocated', () => {
    const space = countingSpace();
    const spec = { a: Undef('float32', 2), layers: { v: Undef('int8', 1), w: 5, z: Undef('int8', 1) } };
    try {
      alloc(space, spec as unknown as Spec);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidSpecError);
      expect((error as InvalidSpecError).path).toBe('layers.w');
      expect((error as InvalidSpecError).code).toBe('POL_INVALID_SPEC');
      expect((error as InvalidSpecError).message).toMatch(
        /^Cannot materialize: layers\.w is 5, but a spec value must be an Undef, a data array \(a TypedArray or a Pol array\), a nested spec, or a JavaScript array of those\. Describe arrays with Undef\(dtype, dims\)/,
      );
    }
    expect(space.calls).toEqual([]);
  });

  it.each([
    ['a number', 5, /w is 5/],
    ['a string', 'float32', /w is 'float32'/],
    ['null', null, /w is null/],
    ['undefined', undefined, /w is undefined/],
    ['a JS array holding a number (the array is a list of spec values, the number is not one)', [1, 2], /w\[0\] is 1/],
    ['a class instance', new Map(), /w is a Map/],
    ['a function', () => 0, /w is function/],
    ['an Undef look-alike', { dtype: 'float32', dims: [2] }, /w\.dtype is 'float32'/],
    ['a Uint8ClampedArray', new Uint8ClampedArray(1), /w is a Uint8ClampedArray/],
  ])('refuses %s as a spec value', (_what, bad, message) => {
    const space = countingSpace();
    const spec = { first: Undef('int8', 1), w: bad };
    expect(() => alloc(space, spec as unknown as Spec)).toThrow(InvalidSpecError);
    expect(() => alloc(space, spec as unknown as Spec)).toThrow(message);
    expect(() => withspace(space, () => alloc(spec as unknown as Spec))).toThrow(InvalidSpecError);
    expect(space.calls).toEqual([]);
  });

  it('refuses a self-referencing spec, allocating nothing', () => {
    const space = countingSpace();
    const inner: Record<string, unknown> = { k: Undef('int8', 1) };
    const spec: Record<string, unknown> = { a: Undef('int8', 1), inner };
    inner.back = spec;
    try {
      alloc(space, spec as Spec);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidSpecError);
      expect((error as InvalidSpecError).path).toBe('inner.back');
      expect((error as InvalidSpecError).message).toMatch(/the spec refers back to itself at inner\.back/);
    }
    const selfish: Record<string, unknown> = { a: Undef('int8', 1) };
    selfish.me = selfish;
    expect(() => alloc(space, selfish as Spec)).toThrow(/refers back to itself at me/);
    expect(space.calls).toEqual([]);
  });

  it('rolls back a spec that fails part-way on a space with savepoint/rollback', () => {
    const space = transactionalSpace();
    const kept = alloc(space, 'float32', 1);
    space.failAt(3);
    expect(() =>
      alloc(space, { a: Undef('int8', 1), g: { b: Undef('int8', 2), c: Undef('int8', 3) }, d: Undef('int8', 4) }),
    ).toThrow(InjectedFailure);
    expect(space.live).toEqual([kept]);
    expect(space.rollbacks).toEqual([1]);
    // and the space works afterwards
    alloc(space, { a: Undef('int8', 1) });
    expect(space.live).toHaveLength(2);
  });

  it('keeps the allocation error when the rollback fails too, with the rollback error attached', () => {
    const space = transactionalSpace();
    const rollbackError = new Error('rollback failed');
    const failing: Space<'host'> = {
      ...space,
      alloc: space.alloc,
      [rollbackKey]: () => {
        throw rollbackError;
      },
    };
    space.failAt(2);
    try {
      alloc(failing, { a: Undef('int8', 1), b: Undef('int8', 1) });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(InjectedFailure);
      expect((error as { suppressed?: unknown }).suppressed).toBe(rollbackError);
    }
  });

  it('a failure on a space without savepoints propagates as is', () => {
    const failure = new InjectedFailure('device lost');
    let calls = 0;
    const space: Space<'host'> = {
      ...countingSpace(),
      alloc: (dtype, dims) => {
        calls++;
        if (calls === 2) throw failure;
        return host.alloc(dtype, dims);
      },
    };
    expect(() => alloc(space, { a: Undef('int8', 1), b: Undef('int8', 1) })).toThrow(failure);
  });
});

// ---------------------------------------------------------------------------------------------
// Property tests: random nested specs.
// ---------------------------------------------------------------------------------------------

const keyArb = fc.stringMatching(/^[a-y][a-z0-9]{0,3}$/);
const undefArb = fc
  .record({ dtype: fc.constantFrom(...dtypes), dims: fc.array(fc.nat({ max: 4 }), { maxLength: 3 }) })
  .map(({ dtype, dims }) => Undef(dtype, dims));
const arrayArb = fc.oneof(
  fc.nat({ max: 4 }).map((n) => new Float32Array(n)),
  fc.nat({ max: 4 }).map((n) => hostArray(new Int16Array(n * 2), [n, 2])),
  fc.nat({ max: 4 }).map((n) => new BigUint64Array(n)),
);
// Random specs: plain objects and JavaScript arrays (lists) of Undefs, data arrays and more of both.
const { spec: specArb } = fc.letrec<{ spec: Record<string, unknown>; list: unknown[]; value: unknown }>((tie) => ({
  spec: fc.dictionary(keyArb, tie('value'), { maxKeys: 4 }),
  list: fc.array(tie('value'), { maxLength: 4 }),
  value: fc.oneof({ depthSize: 'small' }, undefArb, arrayArb, tie('spec'), tie('list')),
}));

/** The entries of a spec container in materialization order: keys of an object, indices of a list. */
function entriesOf(container: unknown): [string | number, unknown][] {
  if (Array.isArray(container)) return container.map((v, i) => [i, v]);
  return Object.keys(container as object).map((k) => [k, (container as Record<string, unknown>)[k]]);
}

const isContainer = (x: unknown): boolean => Array.isArray(x) || isPlainObject(x);

/** Check that `out` is `spec` materialized: same structure, fresh arrays for Undefs, identical pass-throughs. */
function expectMaterialized(spec: unknown, out: unknown, fresh: Set<unknown>): void {
  expect(Array.isArray(out)).toBe(Array.isArray(spec));
  if (!Array.isArray(spec)) expect(isPlainObject(out)).toBe(true);
  expect(out).not.toBe(spec);
  const got = entriesOf(out);
  expect(got.map(([k]) => k)).toEqual(entriesOf(spec).map(([k]) => k));
  for (const [key, value] of entriesOf(spec)) {
    const result = (out as Record<string | number, unknown>)[key];
    if (isUndef(value)) {
      const array = result as HostArray;
      expect(isArray(array)).toBe(true);
      expect(array.dtype).toBe(value.dtype);
      expect(array.dims).toEqual(value.dims);
      expect(array.data).toBeInstanceOf(dtypeInfo(value.dtype).TypedArray);
      expect(array.data.length).toBe(value.length);
      expect(fresh.has(array)).toBe(false);
      fresh.add(array);
    } else if (isArray(value)) {
      expect(result).toBe(value);
    } else {
      expectMaterialized(value, result, fresh);
    }
  }
}

/** The Undefs of a spec in the order a depth-first walk meets them: the order they must be allocated in. */
function undefsInOrder(spec: unknown): Undef[] {
  const out: Undef[] = [];
  for (const [, value] of entriesOf(spec)) {
    if (isUndef(value)) out.push(value);
    else if (isContainer(value)) out.push(...undefsInOrder(value));
  }
  return out;
}

function countContainers(spec: unknown): number {
  let n = 1;
  for (const [, value] of entriesOf(spec)) if (isContainer(value)) n += countContainers(value);
  return n;
}

type Bad = { readonly kind: 'value'; readonly value: unknown } | { readonly kind: 'cycle' };

/**
 * A copy of `spec` with one bad value put into its `index`-th container (depth first), replacing
 * its first entry or added after its last, and the bad value's path.
 */
function withBad(spec: Record<string, unknown>, index: number, replace: boolean, bad: Bad): { spec: Spec; path: string } {
  let counter = 0;
  let path = '';
  const ancestors: unknown[] = [];
  const join = (prefix: string, key: string | number) =>
    typeof key === 'number' ? `${prefix}[${key}]` : prefix === '' ? key : `${prefix}.${key}`;
  const copy = (from: unknown, prefix: string): unknown => {
    const mine = counter++;
    const list = Array.isArray(from);
    const to = (list ? [] : {}) as Record<string | number, unknown>;
    ancestors.push(to);
    for (const [key, value] of entriesOf(from)) to[key] = isContainer(value) ? copy(value, join(prefix, key)) : value;
    if (mine === index) {
      const keys = entriesOf(to).map(([k]) => k);
      const key = replace && keys[0] !== undefined ? keys[0] : list ? keys.length : 'zz';
      to[key] = bad.kind === 'cycle' ? ancestors[0] : bad.value;
      path = join(prefix, key);
      // A JS array of numbers is a list spec whose first element is the bad value.
      if (bad.kind === 'value' && Array.isArray(bad.value)) path = `${path}[0]`;
    }
    ancestors.pop();
    return to;
  };
  return { spec: copy(spec, '') as Spec, path };
}

const badArb: fc.Arbitrary<Bad> = fc.oneof(
  fc
    .constantFrom<unknown>(5, 'float32', null, undefined, true, [1, 2], new Map(), new Uint8ClampedArray(1), Symbol('s'), 3n)
    .map((value) => ({ kind: 'value', value }) as const),
  fc.constant({ kind: 'cycle' } as const),
);

describe('alloc properties', () => {
  it('property: random calls with separate dims, explicit and ambient, each get the dims they passed, and keep them', () => {
    const call = fc.record({
      ambient: fc.boolean(),
      dims: fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 7 }),
    });
    fc.assert(
      fc.property(fc.array(call, { minLength: 1, maxLength: 12 }), (calls) => {
        const space = countingSpace();
        const made = calls.map(({ ambient, dims }) =>
          ambient
            ? withspace(space, () => (alloc as (...args: unknown[]) => HostArray)('float32', ...dims))
            : (alloc as (...args: unknown[]) => HostArray)(space, 'float32', ...dims),
        );
        made.forEach((a, k) => {
          expect(a.dims).toEqual(calls[k]?.dims);
          expect(Object.isFrozen(a.dims)).toBe(true);
        });
      }),
      { numRuns: 300 },
    );
  });

  it('property: a random nested spec of objects and lists materializes to the same structure, Undefs replaced, arrays passed through', () => {
    fc.assert(
      fc.property(specArb, (spec) => {
        const space = countingSpace();
        const out = alloc(space, spec as Spec);
        expectMaterialized(spec, out, new Set());
      }),
      { numRuns: 300 },
    );
  });

  it('property: Undefs are allocated once each, in the spec’s order (keys, then elements by index, depth first)', () => {
    fc.assert(
      fc.property(specArb, (spec) => {
        const space = countingSpace();
        alloc(space, spec as Spec);
        expect(space.calls).toEqual(undefsInOrder(spec).map((u) => ({ dtype: u.dtype, dims: u.dims.slice() })));
      }),
      { numRuns: 300 },
    );
  });

  it('property: a random spec with one bad value inserted allocates nothing and reports its path', () => {
    fc.assert(
      fc.property(specArb, fc.nat(), fc.boolean(), badArb, (good, pick, replace, bad) => {
        const { spec, path } = withBad(good, pick % countContainers(good), replace, bad);
        const space = countingSpace();
        let caught: unknown;
        try {
          alloc(space, spec);
        } catch (error) {
          caught = error;
        }
        expect(caught).toBeInstanceOf(InvalidSpecError);
        expect((caught as InvalidSpecError).path).toBe(path);
        expect((caught as InvalidSpecError).message).toContain(path);
        expect(space.calls).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it('property: a spec failing at a random allocation on a transactional space leaves it unchanged', () => {
    fc.assert(
      fc.property(specArb, fc.nat(), (spec, pick) => {
        const total = undefsInOrder(spec).length;
        fc.pre(total > 0);
        const space = transactionalSpace();
        alloc(space, 'int8', 1);
        space.failAt((pick % total) + 1);
        expect(() => alloc(space, spec as Spec)).toThrow(InjectedFailure);
        expect(space.live).toHaveLength(1);
        expect(space.rollbacks).toEqual([1]);
      }),
      { numRuns: 200 },
    );
  });
});

describe('materializing into a closed frame', () => {
  it('refuses even an empty spec with FrameClosedError', () => {
    const frame = scratchspace(Similar(new Float32Array(1)));
    frame.close();
    expect(() => alloc(frame, {})).toThrow(FrameClosedError);
  });
});

describe('alloc allocates nothing of its own', () => {
  // A host space that records the dims each alloc hands it.
  function recordingSpace() {
    const space = countingSpace();
    const seen: (readonly number[])[] = [];
    const recording: Space<'host'> = {
      [spaceKey]: 'host',
      alloc(dtype, dims) {
        seen.push(dims);
        return space.alloc(dtype, dims);
      },
    };
    return { recording, seen };
  }

  it('hands the space one shared frozen dims array per length in the one-number form, and the caller’s own dims otherwise', () => {
    const { recording, seen } = recordingSpace();
    alloc(recording, 'float32', 16);
    withspace(recording, () => alloc('int8', 16));
    alloc(recording, 'float32', 17);
    expect(seen[0]).toBe(seen[1]);
    expect(seen[0]).toEqual([16]);
    expect(Object.isFrozen(seen[0])).toBe(true);
    expect(seen[2]).toEqual([17]);
    const mine = [2, 3];
    alloc(recording, 'float32', mine);
    expect(seen[3]).toBe(mine);
    const u = Undef('float32', 5);
    alloc(recording, u);
    expect(seen[4]).toBe(u.dims);
  });

  it('hands the space shared frozen dims for separate dims too, never the array it gathers them in', () => {
    const { recording, seen } = recordingSpace();
    const a = alloc(recording, 'float32', 2, 3);
    const b = withspace(recording, () => alloc('float32', 2, 3));
    alloc(recording, 'int8', 4, 5, 6, 7, 8, 9, 10);
    alloc(recording, 'int8', 1, 1);
    expect(seen[0]).toBe(seen[1]);
    expect(seen[0]).toBe(internDims([2, 3]));
    expect(Object.isFrozen(seen[2])).toBe(true);
    expect(seen.map((d) => [...d])).toEqual([
      [2, 3],
      [2, 3],
      [4, 5, 6, 7, 8, 9, 10],
      [1, 1],
    ]);
    // The calls after them changed neither the earlier dims nor the arrays that hold them.
    expect(a.dims).toEqual([2, 3]);
    expect(b.dims).toEqual([2, 3]);
    expect(() => alloc(recording, 'float32', 2, -1)).toThrow(InvalidShapeError);
    expect(seen).toHaveLength(4);
    expect(alloc(recording, 'float32', 3, 3).dims).toEqual([3, 3]);
  });
});

describe('alloc on a space that carves by length (allocLengthKey)', () => {
  /** A space that records each call of each method, and carves through Similar. */
  function byLengthSpace(): { space: Space<'host'>; calls: string[] } {
    const calls: string[] = [];
    const space: Space<'host'> = {
      [spaceKey]: 'host',
      alloc(dtype, dims) {
        calls.push(`alloc ${dtype} [${dims.join(', ')}]`);
        return host.alloc(dtype, dims);
      },
      [allocLengthKey](dtype, length) {
        calls.push(`length ${dtype} ${length}`);
        return host.alloc(dtype, internDim(length));
      },
    };
    return { space, calls };
  }

  it('calls it for the one-number form, explicit and ambient, and alloc(dtype, dims) for every other form', () => {
    const { space, calls } = byLengthSpace();
    const a = alloc(space, 'float32', 16);
    expect(a.dims).toEqual([16]);
    expect(a.data).toHaveLength(16);
    withspace(space, () => alloc('int8', 3));
    alloc(space, 'float32', [16]);
    alloc(space, 'float32', 2, 3);
    alloc(space, Undef('float32', 4));
    alloc(space, 'float64', []);
    withspace(space, () => alloc('float32', [5]));
    expect(calls).toEqual([
      'length float32 16',
      'length int8 3',
      'alloc float32 [16]',
      'alloc float32 [2, 3]',
      'alloc float32 [4]',
      'alloc float64 []',
      'alloc float32 [5]',
    ]);
  });

  it('checks the length before calling it: what is no length takes the checked path and is refused there', () => {
    const { space, calls } = byLengthSpace();
    for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53]) {
      expect(() => alloc(space, 'float32', bad)).toThrow(InvalidShapeError);
      expect(() => withspace(space, () => alloc('float32', bad))).toThrow(InvalidShapeError);
    }
    expect(calls).toEqual([]);
  });

  it('leaves the dtype to the space, which refuses an unknown one with the error alloc throws elsewhere', () => {
    const { space } = byLengthSpace();
    expect(() => untypedAlloc(space, 'float33', 4)).toThrow(UnknownDTypeError);
    expect(() => untypedAlloc(host, 'float33', 4)).toThrow(UnknownDTypeError);
  });
});
