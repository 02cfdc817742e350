// The call plan: a verb describes each argument shape once and reuses what it described, and
// everything a verb does still holds on the calls that reuse it.
import { Arena, mark, retract } from '@pol/arena';
import { describe, type HostArray, hostArray, PolError, Similar, scratchspace, Undef, withspace } from '@pol/core';
import fc from 'fast-check';
import { expect, describe as group, test } from 'vitest';
import { Allocating } from './allocating.js';
import { DescriberContractError } from './errors.js';
import { shadowSpec } from './shadows.js';
import { caught } from './test-support/caught.js';
import { countingSpace } from './test-support/counting.js';

type F32 = HostArray<'float32'>;
const f32 = (values: number[], dims?: number[]): F32 => hostArray(Float32Array.from(values), dims);

// A kernel that copies x into y (and sets a scratch buffer), counting its describers' calls.
function counted() {
  const calls = { outputs: 0, scratch: 0 };
  const kernel = describe(
    function copy(out: { y: F32 }, x: F32, options: { tmp: F32; lr?: number }) {
      options.tmp.data.set(x.data);
      out.y.data.set(options.tmp.data);
    },
    {
      outputs: (x: F32) => {
        calls.outputs++;
        return { y: Undef(x) };
      },
      scratch: (x: F32) => {
        calls.scratch++;
        return { tmp: Undef(x) };
      },
    },
  );
  return { calls, verb: Allocating(kernel) };
}

group('describing once per argument shape', () => {
  test('later calls with arguments of the same dtypes and dims run no describer', () => {
    const { calls, verb } = counted();
    const space = Similar(new Float32Array(0));
    for (let i = 0; i < 5; i++) expect(Array.from(verb(space, f32([i, i + 1])).y.data)).toEqual([i, i + 1]);
    expect(calls).toEqual({ outputs: 1, scratch: 1 });
  });

  test('a new shape is described once too, and shapes called in turn keep a plan each', () => {
    const { calls, verb } = counted();
    const space = Similar(new Float32Array(0));
    for (let i = 0; i < 4; i++) {
      expect(verb(space, f32([1, 2])).y.dims).toEqual([2]);
      expect(verb(space, f32([1, 2, 3], [3, 1])).y.dims).toEqual([3, 1]);
      expect(
        (verb as unknown as (...a: unknown[]) => { y: HostArray })(space, hostArray(Float64Array.from([1, 2]))).y.dtype,
      ).toBe('float64');
    }
    expect(calls.outputs).toBe(3);
  });

  test('an option no describer reads is not part of the key: fresh options objects, new values, one description', () => {
    const { calls, verb } = counted();
    const x = f32([1, 2]);
    for (let i = 0; i < 5; i++) verb(x, { lr: i / 10 });
    expect(calls.outputs).toBe(1);
  });

  test('an option a describer reads is part of the key, by value: each value is described once', () => {
    let described = 0;
    const zeros = Allocating(
      describe(
        function zeros(out: { y: F32 }, options: { n: number; label?: string }) {
          out.y.data.fill(0);
          void options;
        },
        {
          outputs: (options: { n: number }) => {
            described++;
            return { y: Undef('float32', [options.n]) };
          },
        },
      ),
    );
    const space = Similar(new Float32Array(0));
    expect(zeros(space, { n: 2 }).y.dims).toEqual([2]);
    expect(zeros(space, { n: 3 }).y.dims).toEqual([3]);
    expect(zeros(space, { n: 2, label: 'unread' }).y.dims).toEqual([2]);
    expect(zeros(space, { n: 3, label: 'other' }).y.dims).toEqual([3]);
    expect(described).toBe(2);
  });

  test('a describer that reads a nested option keys on the nested value', () => {
    let described = 0;
    const k = Allocating(
      describe((out: { y: F32 }, _x: F32, _o: { shape: { rows: number; note?: string } }) => out.y.data.fill(1), {
        outputs: (_x: F32, o: { shape: { rows: number } }) => {
          described++;
          return { y: Undef('float32', [o.shape.rows]) };
        },
      }),
    );
    const x = f32([0]);
    expect(k(x, { shape: { rows: 2 } }).y.dims).toEqual([2]);
    expect(k(x, { shape: { rows: 2, note: 'unread' } }).y.dims).toEqual([2]);
    expect(k(x, { shape: { rows: 4 } }).y.dims).toEqual([4]);
    expect(described).toBe(2);
  });

  test('a describer that enumerates its options (a spread) keys on all of them', () => {
    let described = 0;
    const k = Allocating(
      describe((out: { y: F32 }, _x: F32, _o: Record<string, number>) => out.y.data.fill(1), {
        outputs: (x: F32, o: Record<string, number>) => {
          described++;
          return { y: Undef('float32', [Object.keys({ ...o }).length + x.dims.length]) };
        },
      }),
    );
    const x = f32([0]);
    expect(k(x, { a: 1 }).y.dims).toEqual([2]);
    expect(k(x, { a: 1, b: 2 }).y.dims).toEqual([3]);
    expect(k(x, { a: 1 }).y.dims).toEqual([2]);
    expect(k(x, { a: 5 }).y.dims).toEqual([2]);
    expect(described).toBe(3);
  });

  test('a plain-object input is keyed on what the describers read of it', () => {
    let described = 0;
    const k = Allocating(
      describe((out: { y: F32 }, layer: { w: F32; step: number }) => out.y.data.set(layer.w.data), {
        outputs: (layer: { w: F32 }) => {
          described++;
          return { y: Undef(layer.w) };
        },
      }),
    );
    const space = Similar(new Float32Array(0));
    for (let step = 0; step < 3; step++) k(space, { w: f32([1, 2]), step });
    expect(described).toBe(1);
    expect(k(space, { w: f32([1, 2, 3]), step: 0 }).y.dims).toEqual([3]);
    expect(described).toBe(2);
  });

  test('a frozen options object (a proxy may not stand in for its values) is keyed in full and still works', () => {
    let described = 0;
    const k = Allocating(
      describe((out: { y: F32 }, _o: { shape: { n: number } }) => out.y.data.fill(2), {
        outputs: (o: { shape: { n: number } }) => {
          described++;
          return { y: Undef('float32', [o.shape.n]) };
        },
      }),
    );
    const options = Object.freeze({ shape: Object.freeze({ n: 3 }) });
    const space = Similar(new Float32Array(0));
    expect(k(space, options).y.dims).toEqual([3]);
    expect(k(space, options).y.dims).toEqual([3]);
    expect(described).toBe(1);
  });

  test('a describer that passes one of the call’s arrays through is described on every call (it depends on identity)', () => {
    let described = 0;
    const inPlace = Allocating(
      describe((out: { y: F32 }, x: F32) => out.y.data.set(x.data.map((v) => v * 2)), {
        outputs: (x: F32) => {
          described++;
          return { y: x };
        },
      }),
    );
    const a = f32([1]);
    const b = f32([5]);
    expect(inPlace(a).y).toBe(a);
    expect(inPlace(b).y).toBe(b);
    expect(Array.from(b.data)).toEqual([10]);
    expect(described).toBe(2);
  });

  test('property: describing once gives what describing every call gives, for any sequence of shapes and options', () => {
    const shapes = fc.constantFrom<number[]>([1], [2], [2, 3], [3, 2], []);
    const callArb = fc.record({
      dims: shapes,
      n: fc.integer({ min: 0, max: 3 }),
      lr: fc.double({ noNaN: true }),
      first: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(callArb, { minLength: 1, maxLength: 30 }), (calls) => {
        let described = 0;
        const verb = Allocating(
          describe((out: { y: F32; z: F32 }, _x: F32, _o: { n: number; lr: number }) => out.y.data.fill(1), {
            outputs: (x: F32, o: { n: number }) => {
              described++;
              return { y: Undef(x), z: Undef('float32', [o.n]) };
            },
          }),
        );
        const arena = new Arena(new ArrayBuffer(1 << 14));
        const start = mark(arena);
        const keys = new Set<string>();
        for (const c of calls) {
          const x = hostArray(new Float32Array(c.dims.reduce((a: number, b: number) => a * b, 1)), c.dims);
          const options = c.first ? { n: c.n, lr: c.lr } : { lr: c.lr, n: c.n };
          const { y, z } = verb(arena, x, options);
          expect(y.dims).toEqual(c.dims);
          expect(z.dims).toEqual([c.n]);
          keys.add(`${c.dims.join('x')}/${c.n}`);
          retract(arena, start);
        }
        // One description per distinct (dims, n), whatever the rest of the options (up to the plan cache's size).
        expect(described).toBe(keys.size <= 8 ? keys.size : described);
        expect(described).toBeLessThanOrEqual(calls.length);
      }),
    );
  });
});

group('everything a verb does holds on the calls that reuse a plan', () => {
  test('caller buffers by name, checked on every call', () => {
    const { verb } = counted();
    const x = f32([1, 2]);
    const y = f32([0, 0]);
    verb(x);
    expect(verb(x, { y }).y).toBe(y);
    expect(Array.from(y.data)).toEqual([1, 2]);
    expect(() => verb(x, { y: f32([0]) })).toThrow(expect.objectContaining({ code: 'POL_BUFFER_MISMATCH', path: 'y' }));
  });

  test('unscoped calls allocate from Similar of the first array input, fresh results every time', () => {
    const { verb } = counted();
    const x = f32([1, 2]);
    const a = verb(x);
    const b = verb(x);
    expect(a).not.toBe(b);
    expect(a.y).not.toBe(b.y);
    expect(Array.from(a.y.data)).toEqual([1, 2]);
  });

  test('the ambient space, then a frame on it', () => {
    const { verb } = counted();
    const space = countingSpace();
    const x = f32([3]);
    withspace(space, () => verb(x));
    withspace(space, () => verb(x));
    scratchspace(space, () => verb(x));
    expect(space.log).toEqual(['float32[1]', 'float32[1]', 'float32[1]', 'float32[1]', 'float32[1]', 'float32[1]']);
    expect(space.live).toBe(2);
  });

  test('a failure part-way rolls back on a reused plan too, sync and async', async () => {
    let fail = false;
    const k = Allocating(
      describe(
        (out: { y: F32 }, x: F32) => {
          if (fail) throw new Error('kernel failed');
          out.y.data.set(x.data);
        },
        { outputs: (x: F32) => ({ y: Undef(x) }) },
      ),
    );
    const slow = Allocating(
      describe(
        async (out: { y: F32 }, x: F32) => {
          await Promise.resolve();
          if (fail) throw new Error('kernel rejected');
          out.y.data.set(x.data);
        },
        { outputs: (x: F32) => ({ y: Undef(x) }) },
      ),
    );
    const arena = new Arena(new ArrayBuffer(4096));
    const x = f32([1, 2]);
    k(arena, x);
    await slow(arena, x);
    const state = () => ({ offset: arena.offset, watermark: arena.watermark, openFrames: arena.describe().openFrames });
    const before = state();
    fail = true;
    expect(() => k(arena, x)).toThrow('kernel failed');
    await expect(slow(arena, x)).rejects.toThrow('kernel rejected');
    expect(state()).toEqual(before);
  });

  test('shadow outputs are zeroed on every call, caller shadows never', () => {
    const backward = Allocating(
      describe(
        (grads: { dx: F32 }, dy: F32) => {
          for (let i = 0; i < dy.data.length; i++) grads.dx.data[i] = (grads.dx.data[i] ?? 0) + (dy.data[i] ?? 0);
        },
        { outputs: (dy: F32) => ({ dx: shadowSpec(dy) }) },
      ),
    );
    const arena = new Arena(new ArrayBuffer(4096));
    const start = mark(arena);
    const dy = f32([1, 2]);
    for (let i = 0; i < 3; i++) {
      // The same bytes every call, holding the last call's sums: zeroed again before accumulating.
      expect(Array.from(backward(arena, dy).dx.data)).toEqual([1, 2]);
      retract(arena, start);
    }
    const mine = f32([10, 10]);
    backward(arena, dy, { dx: mine });
    backward(arena, dy, { dx: mine });
    expect(Array.from(mine.data)).toEqual([12, 14]);
  });
});

group('the objects a verb hands out', () => {
  test('on an arena in steady state the result (and the kernel’s options) is the same object every call', () => {
    const seen: unknown[] = [];
    const k = Allocating(
      describe(
        function k(out: { y: F32 }, x: F32, options: { tmp: F32 }) {
          seen.push(options);
          out.y.data.set(x.data);
        },
        { outputs: (x: F32) => ({ y: Undef(x) }), scratch: (x: F32) => ({ tmp: Undef(x) }) },
      ),
    );
    const arena = new Arena(new ArrayBuffer(4096));
    const start = mark(arena);
    const x = f32([1, 2]);
    const first = k(arena, x);
    retract(arena, start);
    const second = k(arena, x);
    expect(second).toBe(first);
    expect(seen[1]).toBe(seen[0]);
  });

  test('two arenas in turn: each gets its own result object back, steady, and never the other’s', () => {
    const { verb } = counted();
    const a = new Arena(new ArrayBuffer(4096));
    const b = new Arena(new ArrayBuffer(4096));
    const [ma, mb] = [mark(a), mark(b)];
    const x = f32([1, 2]);
    const fromA = verb(a, x);
    const fromB = verb(b, x);
    for (let i = 0; i < 3; i++) {
      retract(a, ma);
      retract(b, mb);
      expect(verb(a, x)).toBe(fromA);
      expect(verb(b, x)).toBe(fromB);
    }
    expect(fromA).not.toBe(fromB);
    expect(fromA.y).not.toBe(fromB.y);
  });

  test('a result kept from an earlier call never changes: without a retract the next call makes a fresh one', () => {
    const { verb } = counted();
    const arena = new Arena(new ArrayBuffer(4096));
    const x = f32([1, 2]);
    const a = verb(arena, x);
    const ay = a.y;
    const b = verb(arena, f32([3, 4]));
    expect(b).not.toBe(a);
    expect(a.y).toBe(ay);
    expect(Array.from(a.y.data)).toEqual([1, 2]);
    expect(Array.from(b.y.data)).toEqual([3, 4]);
  });

  test('a result whose holder replaced a value is not handed out again', () => {
    const { verb } = counted();
    const arena = new Arena(new ArrayBuffer(4096));
    const start = mark(arena);
    const x = f32([1, 2]);
    const a = verb(arena, x) as { y: F32 };
    const mine = f32([9, 9]);
    a.y = mine;
    retract(arena, start);
    const b = verb(arena, x);
    expect(b).not.toBe(a);
    expect(a.y).toBe(mine);
  });

  test('on Similar, results are always fresh objects, even when every buffer is the caller’s', () => {
    const { verb } = counted();
    const space = Similar(new Float32Array(0));
    const x = f32([1]);
    const y = f32([0]);
    const tmp = f32([0]);
    expect(verb(space, x, { y, tmp })).not.toBe(verb(space, x, { y, tmp }));
  });

  test('the caller’s options object is never the kernel’s, and never written', () => {
    const seen: unknown[] = [];
    const k = Allocating(
      describe(
        function k(out: { y: F32 }, _x: F32, options: { tmp: F32; by: number }) {
          seen.push(options);
          out.y.data.fill(options.by);
        },
        { outputs: (x: F32) => ({ y: Undef(x) }), scratch: (x: F32) => ({ tmp: Undef(x) }) },
      ),
    );
    const arena = new Arena(new ArrayBuffer(4096));
    const start = mark(arena);
    const options = { by: 2 };
    k(arena, f32([0]), options);
    retract(arena, start);
    k(arena, f32([0]), { by: 3 });
    expect(options).toEqual({ by: 2 });
    expect(seen[0]).not.toBe(options);
    expect(seen[1]).not.toBe(seen[0]);
    expect((seen[1] as { by: number }).by).toBe(3);
  });
});

group('the options object a kernel receives', () => {
  // A kernel with scratch (so the verb makes its options object), recording what it received.
  function recording(body: (options: { tmp: F32; depth?: number }, x: F32) => void) {
    const seen: { tmp: F32; depth?: number }[] = [];
    const verb = Allocating(
      describe(
        function k(out: { y: F32 }, x: F32, options: { tmp: F32; depth?: number }) {
          seen.push(options);
          body(options, x);
          out.y.data.set(x.data);
        },
        { outputs: (x: F32) => ({ y: Undef(x) }), scratch: (x: F32) => ({ tmp: Undef(x) }) },
      ),
    );
    return { seen, verb };
  }
  const snapshot = (o: object) => ({ ...o });

  test('a kernel that calls its own verb again: each depth keeps its own object, unchanged by the calls inside it', () => {
    const during: { depth: number; before: object; after: object }[] = [];
    const { seen, verb } = recording((options, x) => {
      const depth = options.depth ?? 0;
      const before = snapshot(options);
      if (depth < 2) verb(x, { depth: depth + 1 }); // ambient: on this call's frame
      during.push({ depth, before, after: snapshot(options) });
    });
    const arena = new Arena(new ArrayBuffer(1 << 14));
    const start = mark(arena);
    const x = f32([1, 2]);
    verb(arena, x);
    retract(arena, start);
    verb(arena, x);
    retract(arena, start);
    expect(seen).toHaveLength(6);
    for (const d of during) expect(d.after).toEqual(d.before);
    // Within one run, three objects with three different scratch buffers.
    expect(new Set(seen.slice(0, 3)).size).toBe(3);
    expect(new Set(seen.slice(0, 3).map((o) => o.tmp)).size).toBe(3);
    // The second run: the same three objects, depth by depth (a steady loop makes none).
    for (let i = 0; i < 3; i++) expect(seen[i + 3]).toBe(seen[i]);
    expect(seen.map((o) => o.depth)).toEqual([undefined, 1, 2, undefined, 1, 2]);
  });

  test('a kernel that keeps its object: later calls with other values never write it', () => {
    const { seen, verb } = recording(() => {});
    const arena = new Arena(new ArrayBuffer(4096));
    const start = mark(arena);
    const x = f32([1]);
    verb(arena, x, { depth: 5 });
    const kept = snapshot(seen[0] as object);
    retract(arena, start);
    verb(arena, x, { depth: 6 });
    verb(arena, x, { depth: 5 }); // no retract: other arrays
    expect(snapshot(seen[0] as object)).toEqual(kept);
    expect(new Set(seen).size).toBe(3);
    expect(seen.map((o) => o.depth)).toEqual([5, 6, 5]);
  });

  test('a kernel that throws: rolled back, its object unchanged, and the next call gets it again', () => {
    let fail = false;
    const { seen, verb } = recording(() => {
      if (fail) throw new Error('kernel failed');
    });
    const arena = new Arena(new ArrayBuffer(4096));
    const start = mark(arena);
    const x = f32([1, 2]);
    const first = verb(arena, x);
    const kept = snapshot(seen[0] as object);
    retract(arena, start);
    fail = true;
    const before = { offset: arena.offset, watermark: arena.watermark };
    expect(() => verb(arena, x)).toThrow('kernel failed');
    expect({ offset: arena.offset, watermark: arena.watermark }).toEqual(before);
    expect(arena.describe().openFrames).toBe(0);
    fail = false;
    expect(verb(arena, x)).toBe(first);
    expect(seen).toHaveLength(3);
    expect(seen[1]).toBe(seen[0]);
    expect(seen[2]).toBe(seen[0]);
    expect(snapshot(seen[0] as object)).toEqual(kept);
  });

  test('on Similar every call gets a fresh object', () => {
    const { seen, verb } = recording(() => {});
    const x = f32([1]);
    verb(x);
    verb(x);
    expect(seen[1]).not.toBe(seen[0]);
    expect(seen[1]?.tmp).not.toBe(seen[0]?.tmp);
  });
});

group('checked mode', () => {
  // A describer that breaks the contract: its answer depends on a counter, not on its arguments.
  const impure = () => {
    let n = 1;
    return describe(
      function grow(out: { y: F32 }, _x: F32) {
        out.y.data.fill(1);
      },
      { outputs: (_x: F32) => ({ y: Undef('float32', [n++]) }) },
    );
  };

  test('Allocating(kernel, { checked: true }) describes again on every call and names the verb, the lifetime and the path', () => {
    const verb = Allocating(impure(), { checked: true });
    const space = countingSpace();
    const x = f32([1]);
    verb(space, x);
    const error = caught(() => verb(space, x));
    expect(error).toBeInstanceOf(DescriberContractError);
    expect(error).toBeInstanceOf(PolError);
    const e = error as DescriberContractError;
    expect([e.code, e.verb, e.lifetime, e.path, e.expected, e.got]).toEqual([
      'POL_DESCRIBER_CONTRACT',
      'grow',
      'outputs',
      'y',
      'Undef(float32[1])',
      'Undef(float32[2])',
    ]);
    expect(e.message).toContain('Allocating(grow): the outputs describer returned Undef(float32[2])');
    expect(space.log).toEqual(['float32[1]']);
    expect(space.openFrames).toEqual([]);
  });

  test('a checked arena (or a frame on one) checks every verb called on it', () => {
    const verb = Allocating(impure());
    const arena = new Arena(new ArrayBuffer(4096), { checked: true });
    const x = f32([1]);
    verb(arena, x);
    const before = { offset: arena.offset, watermark: arena.watermark };
    expect(() => verb(arena, x)).toThrow(DescriberContractError);
    // Again, now that the verb remembers the arena (its record says the arena is checked).
    expect(() => verb(arena, x)).toThrow(DescriberContractError);
    expect(() => scratchspace(arena, (frame) => verb(frame, x))).toThrow(DescriberContractError);
    expect({ offset: arena.offset, watermark: arena.watermark }).toEqual(before);
    expect(arena.describe().openFrames).toBe(0);
  });

  test('unchecked, the plan is the first answer: the contract is the caller’s to keep', () => {
    const verb = Allocating(impure());
    const x = f32([1]);
    expect(verb(x).y.dims).toEqual([1]);
    expect(verb(x).y.dims).toEqual([1]);
  });

  test('a pure describer passes checked mode', () => {
    const { verb } = counted();
    const checked = Allocating(verb.kernel, { checked: true });
    const arena = new Arena(new ArrayBuffer(4096), { checked: true });
    for (let i = 0; i < 3; i++) expect(Array.from(checked(arena, f32([i])).y.data)).toEqual([i]);
  });

  test('bad options of Allocating are refused', () => {
    const { verb } = counted();
    expect(() => Allocating(verb.kernel, { chekced: true } as never)).toThrow(
      expect.objectContaining({ code: 'POL_INVALID_ARGUMENT' }),
    );
    expect(() => Allocating(verb.kernel, { checked: 'yes' } as never)).toThrow(/checked must be true or false/);
  });
});
