import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  commit,
  familyKey,
  familyOf,
  hostFamily,
  materializeInto,
  noSavepoint,
  rollback,
  rollbackKey,
  savepoint,
  savepointKey,
  spaceKey,
} from './backend.js';
import {
  alloc,
  CaptureViolation,
  capturing,
  type DType,
  hostArray,
  InvalidArgumentError,
  InvalidShapeError,
  isSpace,
  NotAnArrayError,
  outputs,
  type PolArray,
  PolError,
  Similar,
  scratchspace,
  Undef,
  UnknownDTypeError,
} from './index.js';
import { deferred, fakeFamily, InjectedFailure } from './test-support/fixtures.js';

describe('Similar', () => {
  it('around a TypedArray: a host space making fresh host arrays of any dtype and dims', () => {
    const x = new Float32Array([1, 2, 3, 4]);
    const space = Similar(x);
    expect(isSpace(space)).toBe(true);
    expect(space[spaceKey]).toBe('host');
    const y = alloc(space, 'int32', [2, 2]);
    expect(y.dtype).toBe('int32');
    expect(y.dims).toEqual([2, 2]);
    expect(y.data).toBeInstanceOf(Int32Array);
    expect(y.data.buffer).not.toBe(x.buffer);
    expect(familyOf(y)).toBe(hostFamily);
    expect([...x]).toEqual([1, 2, 3, 4]);
  });

  it('around a host array, and around a TypedArray subclass (a Node.js Buffer is one)', () => {
    expect(alloc(Similar(hostArray(new Int8Array(6), [2, 3])), 'float64', 1).data).toBeInstanceOf(Float64Array);
    class Bytes extends Uint8Array {}
    expect(String(Similar(new Bytes(3)))).toBe('Similar(uint8[3] on host)');
  });

  it('each alloc is a fresh array', () => {
    const space = Similar(new Float32Array(0));
    const a = alloc(space, 'float32', 2);
    const b = alloc(space, 'float32', 2);
    expect(a).not.toBe(b);
    expect(a.data).not.toBe(b.data);
  });

  it('prints the exemplar it is around', () => {
    expect(String(Similar(new Float32Array(8)))).toBe('Similar(float32[8] on host)');
    expect(String(Similar(hostArray(new Int16Array(6), [3, 2])))).toBe('Similar(int16[3, 2] on host)');
  });

  it('dispatches on the exemplar’s family, passing the exemplar and never reading its data', () => {
    const fake = fakeFamily();
    const x = fake.array('float32', [4]);
    Object.defineProperty(x, 'data', {
      get() {
        throw new Error('the exemplar’s data was read');
      },
    });
    const space = Similar(x);
    expect(String(space)).toBe('Similar(fake float32[4])');
    const y = alloc(space, 'uint8', 2, 2);
    expect(fake.allocated).toEqual([y]);
    expect(y.dims).toEqual([2, 2]);
  });

  it('validates dtype and dims on its own alloc method too, before asking the family', () => {
    const fake = fakeFamily();
    const space = Similar(fake.array('float32', [1]));
    expect(() => space.alloc('float32', [-1])).toThrow(InvalidShapeError);
    expect(() => space.alloc('complex64' as DType, [1])).toThrow(UnknownDTypeError);
    expect(fake.allocated).toEqual([]);
  });

  it('refuses a non-array exemplar with NotAnArrayError saying what to do', () => {
    for (const bad of [
      [1, 2, 3],
      { dtype: 'float32', dims: [2] },
      { dtype: 'float32', dims: [2], [familyKey]: null },
      3,
      null,
      undefined,
      'float32',
      new Uint8ClampedArray(2),
    ]) {
      expect(() => Similar(bad as unknown as Float32Array)).toThrow(NotAnArrayError);
    }
    expect(() => Similar([1, 2] as unknown as Float32Array)).toThrow(
      /Similar\(x\) needs an exemplar array \(a TypedArray, a HostArray, a GpuArray\), got an array of length 2\. To allocate host arrays without one, use Similar\(new Float32Array\(0\)\)\./,
    );
    expect(() => Similar({} as unknown as Float32Array)).toThrow(/got a plain object/);
    expect(() => Similar(7 as unknown as Float32Array)).toThrow(/got 7/);
    try {
      Similar(Undef('float32', 2) as unknown as Float32Array);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(PolError);
      expect((error as PolError).code).toBe('POL_NOT_AN_ARRAY');
      expect((error as PolError).name).toBe('NotAnArrayError');
    }
  });
});

describe('capturing', () => {
  it('is false for everything that cannot capture', () => {
    const fake = fakeFamily();
    for (const x of [
      new Float32Array(1),
      new BigInt64Array(1),
      hostArray(new Int8Array(2)),
      alloc(Similar(new Float32Array(0)), 'float32', 1),
      fake.array('float32', [1]), // a family that captures, but is not capturing now
      [1, 2],
      {},
      3,
      null,
      undefined,
    ]) {
      expect(capturing(x)).toBe(false);
    }
  });

  it('asks the array’s family, so a backend answers for its arrays', () => {
    const fake = fakeFamily();
    const x = fake.array('float32', [4]);
    fake.capturing = true;
    expect(capturing(x)).toBe(true);
    expect(capturing(new Float32Array(4))).toBe(false);
    fake.capturing = false;
    expect(capturing(x)).toBe(false);
  });
});

describe('CaptureViolation from Similar under capture', () => {
  it('every alloc form throws instead of allocating, and nothing is allocated', () => {
    const fake = fakeFamily();
    const space = Similar(fake.array('float32', [8]));
    fake.capturing = true;
    expect(() => alloc(space, 'float32', 3, 4)).toThrow(CaptureViolation);
    expect(() => alloc(space, Undef('int8', 2))).toThrow(CaptureViolation);
    expect(() => alloc(space, { y: Undef('float32', 2) })).toThrow(CaptureViolation);
    expect(fake.allocated).toEqual([]);
    fake.capturing = false;
    expect(alloc(space, 'float32', 1).dims).toEqual([1]);
  });

  it('says what was refused, from which space, why, and that an arena is the fix', () => {
    const fake = fakeFamily();
    const space = Similar(fake.array('float32', [8]));
    fake.capturing = true;
    try {
      alloc(space, 'float32', 3, 4);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(CaptureViolation);
      const { message, code, name } = error as CaptureViolation;
      expect(code).toBe('POL_CAPTURE_VIOLATION');
      expect(name).toBe('CaptureViolation');
      expect(message).toMatch(
        /^A new float32\[3, 4\] array was refused: the device of Similar\(fake float32\[8\]\) is recording a capture, /,
      );
      expect(message).toMatch(/replay would bind it after it is gone\./);
      expect(message).toMatch(
        /Pass an arena \(or a frame on one\) made before capture\(\), warmed up by running the step eagerly on it and sized from its watermark/,
      );
      expect((error as CaptureViolation).attempted).toBe('A new float32[3, 4] array');
    }
  });

  it('a frame on a capturing Similar opens, but refuses to allocate', () => {
    const fake = fakeFamily();
    const space = Similar(fake.array('float32', [8]));
    fake.capturing = true;
    scratchspace(space, (frame) => {
      expect(() => alloc(frame, 'float32', 2)).toThrow(CaptureViolation);
      expect(() => alloc('float32', 2)).toThrow(CaptureViolation);
    });
    expect(fake.allocated).toEqual([]);
    expect(fake.released).toEqual([]);
  });

  it('outputs materialized into a capturing Similar throw it too', () => {
    const fake = fakeFamily();
    const x = fake.array('float32', [8]);
    const kernel = (_o: { y: unknown }, _x: unknown): void => {};
    outputs.define(kernel, () => ({ y: Undef('float32', 8) }));
    fake.capturing = true;
    expect(() => outputs(Similar(x), kernel, x)).toThrow(CaptureViolation);
    expect(fake.allocated).toEqual([]);
  });
});

describe('Similar over a family with release: savepoints, commit, rollback', () => {
  const setup = () => {
    const fake = fakeFamily();
    const space = Similar(fake.array('float32', [1]));
    return { fake, space };
  };

  it('has a savepoint only then: a host Similar keeps nothing', () => {
    expect(savepoint(Similar(new Float32Array(1)))).toBe(noSavepoint);
    expect(Similar(new Float32Array(1))[savepointKey]).toBeUndefined();
    const { space } = setup();
    expect(savepoint(space)).not.toBe(noSavepoint);
    expect(String(space)).toBe('Similar(fake float32[1])');
  });

  it('an unframed spec failing part-way releases the arrays it had made, once, and rethrows', () => {
    const { fake, space } = setup();
    fake.failOnFirstDim = 3;
    expect(() => alloc(space, { a: Undef('float32', 2), b: { c: Undef('int8', 4) }, d: Undef('float32', 3) })).toThrow(
      InjectedFailure,
    );
    expect(fake.allocated).toHaveLength(2);
    expect(fake.released).toEqual([fake.allocated]);
    // The space is as before: a later spec succeeds and keeps its arrays.
    fake.failOnFirstDim = undefined;
    const { y } = alloc(space, { y: Undef('float32', 3) });
    expect(fake.released).toHaveLength(1);
    expect(y.dims).toEqual([3]);
  });

  it('a spec that fails on its first array releases nothing (there is nothing to release)', () => {
    const { fake, space } = setup();
    fake.failOnFirstDim = 2;
    expect(() => alloc(space, { a: Undef('float32', 2) })).toThrow(InjectedFailure);
    expect(fake.released).toEqual([]);
  });

  it('a succeeded spec is committed and forgotten: a later rollback never releases it', () => {
    const { fake, space } = setup();
    const { a } = alloc(space, { a: Undef('float32', 2) });
    alloc(space, 'float32', 5); // unguarded: nothing open, nothing kept
    const token = savepoint(space);
    rollback(space, token, new Error('later work failed'));
    expect(fake.released).toEqual([]);
    expect(fake.allocated[0]).toBe(a);
  });

  it('nested tokens: an inner commit hands its arrays to the outer one, whose rollback releases them all', () => {
    const { fake, space } = setup();
    const outer = savepoint(space);
    const a = alloc(space, 'float32', 2);
    const inner = savepoint(space);
    const b = alloc(space, 'float32', 3);
    commit(space, inner);
    const c = alloc(space, 'float32', 4);
    expect(fake.released).toEqual([]);
    rollback(space, outer, new Error('the outer work failed'));
    expect(fake.released).toEqual([[a, b, c]]);
  });

  it('nested tokens: an inner rollback releases only its own arrays; the outer commit keeps the rest', () => {
    const { fake, space } = setup();
    const outer = savepoint(space);
    const a = alloc(space, 'float32', 2);
    const inner = savepoint(space);
    const b = alloc(space, 'float32', 3);
    rollback(space, inner, new Error('inner failed'));
    expect(fake.released).toEqual([[b]]);
    commit(space, outer);
    expect(fake.released).toEqual([[b]]);
    expect(fake.allocated).toEqual([a, b]);
  });

  it('a failing nested spec inside an outer savepoint releases its own part; the outer commits what succeeded', () => {
    const { fake, space } = setup();
    const outer = savepoint(space);
    const first = alloc(space, { x: Undef('float32', 2), y: Undef('float32', 2) });
    fake.failOnFirstDim = 9;
    expect(() => alloc(space, { p: Undef('float32', 4), q: Undef('float32', 9) })).toThrow(InjectedFailure);
    expect(fake.released).toHaveLength(1);
    expect(fake.released[0]).toHaveLength(1);
    expect(fake.released[0]?.[0]?.dims).toEqual([4]);
    commit(space, outer);
    expect(fake.released).toHaveLength(1);
    expect(fake.released.flat()).not.toContain(first.x);
    expect(fake.released.flat()).not.toContain(first.y);
  });

  it('a failing nested spec inside an outer savepoint that then fails too: each array released once', () => {
    const { fake, space } = setup();
    const outer = savepoint(space);
    const first = alloc(space, { x: Undef('float32', 2) });
    fake.failOnFirstDim = 9;
    expect(() => alloc(space, { p: Undef('float32', 4), q: Undef('float32', 9) })).toThrow(InjectedFailure);
    rollback(space, outer, new Error('outer failed'));
    expect(fake.released).toHaveLength(2);
    expect(fake.released[1]).toEqual([first.x]);
    const all = fake.released.flat();
    expect(new Set(all).size).toBe(all.length);
  });

  it('ending a token twice, or another space’s token, is refused with InvalidArgumentError and changes nothing', () => {
    const { fake, space } = setup();
    const other = Similar(fake.array('float32', [1]));
    const outer = savepoint(space);
    const a = alloc(space, 'float32', 2);
    const done = savepoint(space);
    alloc(space, 'float32', 3);
    commit(space, done);
    // rollback after commit: refused, the committed arrays stay alive
    expect(() => space[rollbackKey]?.(done)).toThrow(InvalidArgumentError);
    expect(() => space[rollbackKey]?.(done)).toThrow(
      /^Cannot roll back this savepoint: it is not open on Similar\(fake float32\[1\]\) \(it was committed or rolled back already, or another space took it\), so nothing was changed\. End each savepoint exactly once, with commit or rollback, on the space that took it\.$/,
    );
    expect(() => commit(space, done)).toThrow(/^Cannot commit this savepoint: it is not open on/);
    expect(() => commit(other, outer)).toThrow(InvalidArgumentError);
    expect(() => commit(space, 42)).toThrow(InvalidArgumentError);
    expect(fake.released).toEqual([]);
    // Through the rollback helper the refusal rides on the first error instead of replacing it.
    const failure = new InjectedFailure('the work failed');
    rollback(space, done, failure);
    expect((failure as { suppressed?: unknown }).suppressed).toBeInstanceOf(InvalidArgumentError);
    expect(fake.released).toEqual([]);
    // The outer token is untouched by every refusal: it still covers both arrays.
    rollback(space, outer, new Error('outer failed'));
    expect(fake.released).toHaveLength(1);
    expect(fake.released[0]?.[0]).toBe(a);
    expect(fake.released[0]).toHaveLength(2);
    expect(() => space[rollbackKey]?.(outer)).toThrow(InvalidArgumentError);
  });

  it('tokens may end out of order: later tokens stay open and nest in the one before', () => {
    const { fake, space } = setup();
    const t0 = savepoint(space);
    const a = alloc(space, 'float32', 1);
    const t1 = savepoint(space);
    const b = alloc(space, 'float32', 2);
    const t2 = savepoint(space);
    const c = alloc(space, 'float32', 3);
    commit(space, t1); // t1's b goes to t0; t2 stays open and now nests in t0
    const d = alloc(space, 'float32', 4); // innermost open: t2
    rollback(space, t2, new Error('t2 failed'));
    expect(fake.released).toEqual([[c, d]]);
    rollback(space, t0, new Error('t0 failed'));
    expect(fake.released).toEqual([
      [c, d],
      [a, b],
    ]);
  });

  it('a rollback of an outer token leaves an inner one still open, and its arrays alive', () => {
    const { fake, space } = setup();
    const t0 = savepoint(space);
    const a = alloc(space, 'float32', 1);
    const t1 = savepoint(space);
    const b = alloc(space, 'float32', 2);
    rollback(space, t0, new Error('t0 failed'));
    expect(fake.released).toEqual([[a]]);
    commit(space, t1); // nothing encloses it now: b is the caller's
    expect(fake.released).toEqual([[a]]);
    expect(fake.allocated).toEqual([a, b]);
  });

  it('an async verb holds its token across the kernel’s await: a resolution commits, a rejection releases', async () => {
    const { fake, space } = setup();
    const call = async (fail: boolean): Promise<unknown> => {
      const token = savepoint(space);
      const out: Record<string, unknown> = {};
      materializeInto(space, { y: Undef('float32', 2), z: Undef('float32', 3) }, out);
      try {
        const gate = deferred();
        queueMicrotask(() => gate.resolve());
        await gate.promise;
        alloc(space, 'float32', 7); // the kernel allocates from the same space after an await
        if (fail) throw new InjectedFailure('the kernel failed');
      } catch (error) {
        rollback(space, token, error);
        throw error;
      }
      commit(space, token);
      return out;
    };
    await call(false);
    expect(fake.released).toEqual([]);
    await expect(call(true)).rejects.toThrow(InjectedFailure);
    expect(fake.released).toHaveLength(1);
    expect(fake.released[0]?.map((array) => array.dims[0])).toEqual([2, 3, 7]);
  });

  it('two concurrent async calls on one space object nest by the order they started (the documented limit)', async () => {
    const { fake, space } = setup();
    const first = savepoint(space);
    const a = alloc(space, 'float32', 1);
    const gate = deferred();
    const second = (async () => {
      const token = savepoint(space);
      const b = alloc(space, 'float32', 2);
      await gate.promise;
      commit(space, token);
      return b;
    })();
    gate.resolve();
    const b = await second;
    // The second started while the first was open, so it nested in it: the first's failure releases both.
    rollback(space, first, new Error('the first failed'));
    expect(fake.released).toEqual([[a, b]]);
  });

  it('frames on it release their own arrays, once: a failing spec in a frame, then the frame’s close', () => {
    const { fake, space } = setup();
    const outer = savepoint(space);
    let kept: unknown;
    scratchspace(space, (frame) => {
      expect(frame.parent).toBe(space);
      kept = alloc(frame, 'float32', 2);
      fake.failOnFirstDim = 9;
      expect(() => alloc(frame, { p: Undef('float32', 4), q: Undef('float32', 9) })).toThrow(InjectedFailure);
      expect(fake.released).toHaveLength(1);
      expect(fake.released[0]?.[0]?.dims).toEqual([4]);
    });
    expect(fake.released).toHaveLength(2);
    expect(fake.released[1]).toEqual([kept]);
    // The frame's arrays were never the outer savepoint's: its rollback releases nothing more.
    rollback(space, outer, new Error('outer failed'));
    expect(fake.released).toHaveLength(2);
  });

  it('a verb over a frame on it: a token on the frame commits through to nothing and releases nothing twice', () => {
    const { fake, space } = setup();
    scratchspace(space, (frame) => {
      const token = savepoint(frame);
      alloc(frame, 'float32', 2);
      commit(frame, token);
      const failed = savepoint(frame);
      alloc(frame, 'float32', 3);
      rollback(frame, failed, new Error('failed'));
      expect(fake.released).toHaveLength(1);
      expect(fake.released[0]?.[0]?.dims).toEqual([3]);
    });
    expect(fake.released).toHaveLength(2);
    expect(fake.released[1]?.map((array) => array.dims[0])).toEqual([2]);
  });
});

describe('Similar savepoints: random sequences (model)', () => {
  type Op =
    | { readonly k: 'take' }
    | { readonly k: 'alloc' }
    | { readonly k: 'commit'; readonly pick: number }
    | { readonly k: 'rollback'; readonly pick: number }
    | { readonly k: 'spec'; readonly fails: boolean };
  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.constant({ k: 'take' as const }),
    fc.constant({ k: 'alloc' as const }),
    fc.nat({ max: 7 }).map((pick) => ({ k: 'commit' as const, pick })),
    fc.nat({ max: 7 }).map((pick) => ({ k: 'rollback' as const, pick })),
    fc.boolean().map((fails) => ({ k: 'spec' as const, fails })),
  );

  it('releases exactly the arrays a rollback owns, each at most once, and never an unguarded or committed-out one', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        const fake = fakeFamily();
        const space = Similar(fake.array('float32', [1]));
        // The model: each array's owner (the token it would be released by), or null once it is the caller's.
        const owner = new Map<PolArray, unknown>();
        const open: unknown[] = [];
        const ended: unknown[] = [];
        const expected: PolArray[][] = [];
        const innermost = (): unknown => (open.length === 0 ? null : open[open.length - 1]);
        for (const o of ops) {
          if (o.k === 'take') open.push(savepoint(space));
          else if (o.k === 'alloc') owner.set(alloc(space, 'float32', 2) as PolArray, innermost());
          else if (o.k === 'spec') {
            const before = fake.allocated.length;
            fake.failOnFirstDim = o.fails ? 9 : undefined;
            const spec = { a: Undef('float32', 3), b: Undef('float32', o.fails ? 9 : 3) };
            if (o.fails) {
              expect(() => alloc(space, spec)).toThrow(InjectedFailure);
              expected.push(fake.allocated.slice(before));
            } else {
              for (const array of Object.values(alloc(space, spec))) owner.set(array as PolArray, innermost());
            }
            fake.failOnFirstDim = undefined;
          } else if (open.length === 0 || o.pick >= open.length) {
            // A token not open (ended, or none): refused, nothing released.
            const stale = ended.length === 0 ? 'not a token' : ended[o.pick % ended.length];
            const released = fake.released.length;
            if (o.k === 'commit') expect(() => commit(space, stale)).toThrow(InvalidArgumentError);
            else expect(() => space[rollbackKey]?.(stale)).toThrow(InvalidArgumentError);
            expect(fake.released).toHaveLength(released);
          } else {
            const at = open.length - 1 - o.pick;
            const token = open[at];
            open.splice(at, 1);
            ended.push(token);
            const mine = [...owner].filter(([, t]) => t === token).map(([array]) => array);
            if (o.k === 'commit') {
              commit(space, token);
              const enclosing = at > 0 ? open[at - 1] : null;
              for (const array of mine) owner.set(array, enclosing);
            } else {
              rollback(space, token, new Error('failed'));
              if (mine.length > 0) expected.push(mine);
              for (const array of mine) owner.delete(array);
            }
          }
        }
        const sort = (arrays: readonly PolArray[]) =>
          [...arrays].sort((x, y) => fake.allocated.indexOf(x) - fake.allocated.indexOf(y));
        expect(fake.released.map(sort)).toEqual(expected.map(sort));
        const all = fake.released.flat();
        expect(new Set(all).size).toBe(all.length);
      }),
      { numRuns: 300 },
    );
  });
});
