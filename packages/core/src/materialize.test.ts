import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type ArrayFamily, familyKey, materializeInto, rollbackKey, savepointKey, spaceKey } from './backend.js';
import {
  alloc,
  checkSpec,
  dtypeInfo,
  dtypes,
  type HostArray,
  InvalidSpecError,
  materialize,
  Similar,
  type Space,
  type Spec,
  scratchspace,
  Undef,
  ZeroUnsupportedError,
  zeroed,
} from './index.js';
import { countingSpace, transactionalSpace } from './test-support/fixtures.js';

/** A host space whose memory is never zeroed, like an arena's: every array it hands out is full of 7s. */
function dirtySpace(): Space<'host'> & { readonly made: HostArray[] } {
  const host = Similar(new Float32Array(0));
  const made: HostArray[] = [];
  return {
    [spaceKey]: 'host',
    made,
    alloc(dtype, dims) {
      const array = host.alloc(dtype, dims);
      (array.data as unknown as { fill(v: unknown): void }).fill(dtypeInfo(dtype).bigint ? 7n : 7);
      made.push(array);
      return array;
    },
  };
}

const zeroOf = (dtype: (typeof dtypes)[number]) => (dtypeInfo(dtype).bigint ? 0n : 0);

describe('zeroed descriptions', () => {
  it.each(dtypes.map((d) => [d]))('alloc zeroes a zeroed %s Undef, wherever it sits in the spec', (dtype) => {
    const space = dirtySpace();
    const out = alloc(space, {
      plain: Undef(dtype, 2),
      grad: zeroed(Undef(dtype, 2)),
      nested: { g: zeroed(Undef(dtype, 1)) },
      list: [zeroed(Undef(dtype, 3))],
    });
    const z = zeroOf(dtype);
    expect(Array.from(out.plain.data as ArrayLike<unknown>)).toEqual(dtypeInfo(dtype).bigint ? [7n, 7n] : [7, 7]);
    expect(Array.from(out.grad.data as ArrayLike<unknown>)).toEqual([z, z]);
    expect(Array.from(out.nested.g.data as ArrayLike<unknown>)).toEqual([z]);
    expect(Array.from(out.list[0].data as ArrayLike<unknown>)).toEqual([z, z, z]);
  });

  it('zeroes in the ambient and one-Undef forms, and into frames', () => {
    const space = dirtySpace();
    expect(Array.from(alloc(space, zeroed(Undef('float32', 2))).data)).toEqual([7, 7]); // a leaf alloc: the Undef's dtype and dims only
    scratchspace(space, (frame) => {
      expect(Array.from(alloc(frame, { g: zeroed(Undef('float32', 2)) }).g.data)).toEqual([0, 0]);
      expect(Array.from(alloc({ g: zeroed(Undef('int32', 2)) }).g.data)).toEqual([0, 0]);
    });
  });

  it('a family without zero fails the spec with ZeroUnsupportedError, rolled back', () => {
    const family: ArrayFamily<'host'> = {
      kind: 'host',
      allocSimilar: () => {
        throw new Error('unused');
      },
      describe: (x) => `nozero ${x.dtype}`,
    };
    const inner = transactionalSpace();
    const space: Space<'host'> = {
      [spaceKey]: 'host',
      alloc: (dtype, dims) => Object.assign(inner.alloc(dtype, dims), { [familyKey]: family }) as never,
      [savepointKey]: () => inner[savepointKey]?.(),
      [rollbackKey]: (token) => inner[rollbackKey]?.(token),
    };
    expect(() => alloc(space, { a: Undef('float32', 1), g: zeroed(Undef('float32', 1)) })).toThrow(ZeroUnsupportedError);
    expect(inner.live).toEqual([]);
    expect(inner.rollbacks).toEqual([0]);
  });
});

describe('materializeInto', () => {
  it('writes each name into the object it is given, in the spec’s order', () => {
    const space = countingSpace();
    const into: Record<string, unknown> = { kept: 1 };
    materializeInto(space, { b: Undef('int8', 1), a: Undef('int8', 2), g: [Undef('int8', 3)] }, into);
    expect(Object.keys(into)).toEqual(['kept', 'b', 'a', 'g']);
    expect(space.calls.map((c) => c.dims)).toEqual([[1], [2], [3]]);
  });

  it('uses a supplied array as it is, never allocating or zeroing it', () => {
    const space = dirtySpace();
    const mine = Float32Array.of(1, 2);
    const into: Record<string, unknown> = {};
    materializeInto(space, { y: Undef('float32', 2), g: zeroed(Undef('float32', 2)) }, into, { g: mine, lr: 0.1 });
    expect(into.g).toBe(mine);
    expect(Array.from(mine)).toEqual([1, 2]);
    expect(space.made).toHaveLength(1);
    expect('lr' in into).toBe(false);
  });

  it('uses a supplied group or list that covers everything as the caller’s own object', () => {
    const space = countingSpace();
    const group = { w: new Float32Array(2), b: new Float32Array(1) };
    const list = [new Float32Array(2), { v: new Float32Array(1) }];
    const into: Record<string, unknown> = {};
    materializeInto(
      space,
      { group: { w: Undef('float32', 2), b: Undef('float32', 1) }, list: [Undef('float32', 2), { v: Undef('float32', 1) }] },
      into,
      { group, list },
    );
    expect(into.group).toBe(group);
    expect(into.list).toBe(list);
    expect(space.calls).toEqual([]);
  });

  it('merges a supplied group or list that covers only part, materializing the rest', () => {
    const space = countingSpace();
    const w = new Float32Array(2);
    const first = new Float32Array(1);
    const into: Record<string, unknown> = {};
    const given = { group: { w }, list: [first] };
    materializeInto(
      space,
      { group: { w: Undef('float32', 2), b: Undef('float32', 3) }, list: [Undef('float32', 1), Undef('float32', 4)] },
      into,
      given,
    );
    const group = into.group as Record<string, unknown>;
    const list = into.list as unknown[];
    expect(group).not.toBe(given.group);
    expect(group.w).toBe(w);
    expect((group.b as HostArray).dims).toEqual([3]);
    expect(list).not.toBe(given.list);
    expect(list[0]).toBe(first);
    expect((list[1] as HostArray).dims).toEqual([4]);
    expect(space.calls.map((c) => c.dims)).toEqual([[3], [4]]);
    expect(given).toEqual({ group: { w }, list: [first] }); // the caller's objects are never written to
  });

  it('property: with nothing supplied, equals alloc of the same spec, allocation for allocation', () => {
    const undef = fc.record({ dtype: fc.constantFrom(...dtypes), n: fc.nat({ max: 3 }) }).map(({ dtype, n }) => Undef(dtype, n));
    const { spec } = fc.letrec<{ spec: Record<string, unknown>; value: unknown }>((tie) => ({
      spec: fc.dictionary(fc.stringMatching(/^[a-z]{1,3}$/), tie('value'), { maxKeys: 3 }),
      value: fc.oneof({ depthSize: 'small' }, undef, tie('spec'), fc.array(tie('value'), { maxLength: 3 })),
    }));
    fc.assert(
      fc.property(spec, (s) => {
        const a = countingSpace();
        const b = countingSpace();
        const into: Record<string, unknown> = {};
        materializeInto(a, s as Spec, into);
        alloc(b, s as Spec);
        expect(a.calls).toEqual(b.calls);
      }),
      { numRuns: 100 },
    );
  });
});

const host = Similar(new Float32Array(0));

describe('materialize, checkSpec', () => {
  it('materialize is alloc of a spec', () => {
    const mine = new Float32Array(1);
    const out = materialize(host, { y: Undef('float32', 2), mine });
    expect(out.y.dims).toEqual([2]);
    expect(out.mine).toBe(mine);
  });

  it('materialize refuses a non-spec at the top with an empty path', () => {
    const space = countingSpace();
    try {
      materialize(space, [Undef('int8', 1)] as unknown as Spec);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidSpecError);
      expect((error as InvalidSpecError).path).toBe('');
      expect((error as InvalidSpecError).message).toMatch(
        /a spec must be a plain object of Undefs, arrays and nested specs, got an array of length 1/,
      );
    }
    expect(space.calls).toEqual([]);
  });

  it('checkSpec answers undefined for a good spec, and the first bad path otherwise', () => {
    expect(checkSpec({ a: Undef('int8', 1), b: { c: new Float32Array(1) }, d: {} })).toBeUndefined();
    expect(checkSpec({ a: { b: { c: 'x' } }, d: 1 })).toEqual({
      path: 'a.b.c',
      message:
        "a.b.c is 'x', but a spec value must be an Undef, a data array (a TypedArray or a Pol array), a nested spec, or a JavaScript array of those",
    });
    expect(checkSpec(5)?.path).toBe('');
    expect(checkSpec(null)?.path).toBe('');
  });
});
