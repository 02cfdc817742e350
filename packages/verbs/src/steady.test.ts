// A verb's steady calls: what is kept, for which calls it is found, and that a call that takes
// the short way refuses, rolls back and reuses exactly as the general path does. (reuse.test.ts
// compares random call sequences of a remembering verb with verbs that remember nothing, which
// covers the steady path's results against the general one's.)

import { getHeapCodeStatistics } from 'node:v8';
import { Arena, ArenaFullError, mark, retract } from '@pol/arena';
import {
  AsyncScopeUnsupportedError,
  alloc,
  describe,
  type HostArray,
  hostArray,
  Similar,
  type Space,
  scratchspace,
  Undef,
  withspace,
} from '@pol/core';
import { setAmbientStore, syncStore } from '@pol/core/backend';
import { expect, describe as group, test } from 'vitest';
import { Allocating } from './allocating.js';
import { BufferMismatchError } from './errors.js';
import { initMlp, linear, type Mlp, relu, rowCount, seededRandom, softmax } from './examples/index.js';
import { SteadyCalls } from './steady-calls.js';
import { VerbState } from './verb-state.js';

type F32 = HostArray<'float32'>;

class Refused extends Error {}

const scaleInto = describe(
  function scaleInto(out: { y: F32 }, x: F32, options: { tmp: F32; by?: number }): void {
    if ((x.data[0] ?? 0) < 0) throw new Refused('negative first element');
    for (let i = 0; i < x.data.length; i++) options.tmp.data[i] = (x.data[i] ?? 0) * (options.by ?? 2);
    out.y.data.set(options.tmp.data);
  },
  { outputs: (x: F32) => ({ y: Undef(x) }), scratch: (x: F32) => ({ tmp: Undef(x) }) },
);

const f32 = (...v: number[]): F32 => hostArray(Float32Array.from(v));

// A verb's state and steady calls, driven by hand: split `values` as a call would, find or make
// its plan, and keep a steady call for it on `space`.
function kept(space: Space, values: readonly unknown[]) {
  const state = new VerbState(scaleInto as never, 'scaleInto', false, undefined);
  const calls = new SteadyCalls();
  const args = state.takeArgs();
  values.forEach((v, i) => {
    args.values[i] = v;
  });
  args.count = values.length;
  args.split(state.declared, state.spaces);
  const plan = state.planFor(args);
  calls.keep(state, plan, space, plan.madeFrom(space), args);
  args.release();
  const find = (...call: unknown[]) => {
    const a = state.takeArgs();
    call.forEach((v, i) => {
      a.values[i] = v;
    });
    a.count = call.length;
    const found = calls.find(a, calls.on(a.values[0]));
    const where = found === undefined ? undefined : { start: a.start, inputs: a.inputs, options: a.options };
    a.release();
    return { found, where };
  };
  return { calls, find };
}

group('SteadyCalls', () => {
  test('finds a kept call for the same space and shape, and says where its inputs and options are', () => {
    const arena = new Arena(new ArrayBuffer(1 << 12));
    const x = f32(1, 2, 3);
    const { find } = kept(arena, [arena, x]);
    const same = find(arena, f32(4, 5, 6));
    expect(same.found?.space).toBe(arena);
    expect(same.where).toEqual({ start: 1, inputs: 1, options: undefined });
    expect(find(arena, f32(1, 2)).found).toBeUndefined(); // other dims
    expect(find(arena, x, { by: 3 }).found).toBeUndefined(); // options: another shape of call
    expect(find(new Arena(new ArrayBuffer(1 << 12)), x).found).toBeUndefined(); // another space
    expect(find(x).found).toBeUndefined(); // unscoped, nothing bound
    expect(find().found).toBeUndefined();
  });

  test('a call with options is found with any options object its describers did not read', () => {
    const arena = new Arena(new ArrayBuffer(1 << 12));
    const x = f32(1, 2, 3);
    const { find } = kept(arena, [arena, x, { by: 3 }]);
    const options = { by: 5 };
    expect(find(arena, x, options).where).toEqual({ start: 1, inputs: 1, options });
    expect(find(arena, x).found).toBeUndefined();
  });

  test('an ambient call is found through the bound space', () => {
    const arena = new Arena(new ArrayBuffer(1 << 12));
    const x = f32(1, 2, 3);
    scratchspace(arena, (frame) => {
      const { find } = kept(frame, [x]);
      expect(find(x).where).toEqual({ start: 0, inputs: 1, options: undefined });
      expect(find(frame, x).found).toBeUndefined(); // the frame passed first: another shape of call
      scratchspace(frame, () => {
        expect(find(x).found).toBeUndefined(); // another frame bound
      });
    });
  });

  test(`keeps at most ${SteadyCalls.capacity} calls per space`, () => {
    const arena = new Arena(new ArrayBuffer(1 << 16));
    const calls = new SteadyCalls();
    const state = new VerbState(scaleInto as never, 'scaleInto', false, undefined);
    for (let n = 1; n <= SteadyCalls.capacity + 3; n++) {
      const args = state.takeArgs();
      args.values[0] = arena;
      args.values[1] = hostArray(new Float32Array(n));
      args.count = 2;
      args.split(state.declared, state.spaces);
      const plan = state.planFor(args);
      calls.keep(state, plan, arena, plan.madeFrom(arena), args);
      args.release();
    }
    let found = 0;
    for (let n = 1; n <= SteadyCalls.capacity + 3; n++) {
      const args = state.takeArgs();
      args.values[0] = arena;
      args.values[1] = hostArray(new Float32Array(n));
      args.count = 2;
      if (calls.find(args, calls.on(args.values[0])) !== undefined) found++;
      args.release();
    }
    expect(found).toBe(SteadyCalls.capacity);
  });
});

group('the direct lane', () => {
  test('is found for the space, then one or two inputs of the kept shape, and no options object', () => {
    const arena = new Arena(new ArrayBuffer(1 << 12));
    const x = f32(1, 2, 3);
    const { calls } = kept(arena, [arena, x]);
    const on = calls.on(arena) ?? [];
    expect(SteadyCalls.direct(on, 2, f32(4, 5, 6), undefined)?.space).toBe(arena);
    expect(SteadyCalls.direct(on, 2, f32(4, 5), undefined)).toBeUndefined(); // other dims
    expect(SteadyCalls.direct(on, 3, x, undefined)).toBeUndefined(); // another count
    expect(calls.on(new Arena(new ArrayBuffer(1 << 12)))).toBeUndefined(); // another space
    expect(calls.on(1)).toBeUndefined(); // a primitive first
    // A kept call with an options object never takes the lane (the general steady path checks it).
    const withOptions = kept(arena, [arena, x, { by: 3 }]).calls.on(arena) ?? [];
    expect(SteadyCalls.direct(withOptions, 3, x, { by: 3 })).toBeUndefined();
  });

  test('a kernel that throws there: the error the first call gave, the call rolled back, the next call steady', () => {
    let fail: Error | undefined;
    const verb = Allocating(
      describe(
        function failingInto(o: { y: F32 }, x: F32, options: { tmp: F32 }): void {
          if (fail !== undefined) throw fail;
          options.tmp.data.set(x.data);
          o.y.data.set(options.tmp.data);
        },
        { outputs: (x: F32) => ({ y: Undef(x) }), scratch: (x: F32) => ({ tmp: Undef(x) }) },
      ),
    );
    const arena = new Arena(new ArrayBuffer(1 << 10));
    const start = mark(arena);
    const x = f32(1, 2);
    const first = verb(arena, x);
    retract(arena, start);
    for (const error of [new TypeError('kernel bug'), new Refused('refused')]) {
      fail = error;
      const before = arena.describe();
      expect(() => verb(arena, x)).toThrow(error);
      expect(arena.describe()).toEqual(before);
      fail = undefined;
      expect(verb(arena, x)).toBe(first);
      retract(arena, start);
    }
  });

  test('a kernel that returns a promise there: settled as on the first call, or refused on a store without async context', async () => {
    let returnPromise = false;
    const verb = Allocating(
      describe(
        function maybePromiseInto(o: { y: F32 }, x: F32): unknown {
          o.y.data.set(x.data);
          return returnPromise ? Promise.resolve() : undefined;
        },
        { outputs: (x: F32) => ({ y: Undef(x) }) },
      ),
    );
    const arena = new Arena(new ArrayBuffer(1 << 10));
    const start = mark(arena);
    const x = f32(1, 2);
    const first = verb(arena, x);
    retract(arena, start);
    returnPromise = true;
    // The default store follows the promise: the call settles to the same result, its frame closed.
    await expect(verb(arena, x)).resolves.toBe(first);
    expect(arena.describe().openFrames).toBe(0);
    retract(arena, start);
    const was = setAmbientStore(syncStore());
    try {
      const before = arena.describe();
      expect(() => verb(arena, x)).toThrow(AsyncScopeUnsupportedError);
      expect(arena.describe()).toEqual(before);
    } finally {
      setAmbientStore(was);
    }
    returnPromise = false;
    expect(verb(arena, x)).toBe(first);
  });
});

group('a steady call', () => {
  // The first call keeps the steady call; the ones after take it.
  function steadyVerb() {
    const verb = Allocating(scaleInto);
    const arena = new Arena(new ArrayBuffer(1 << 10), { alignment: 16 });
    const start = mark(arena);
    const x = f32(1, 2, 3, 4);
    const first = verb(arena, x);
    retract(arena, start);
    return { verb, arena, start, x, first };
  }

  test('returns what the first call returned: the same arrays, in the same object, with the kernel run again', () => {
    const { verb, arena, start, x, first } = steadyVerb();
    x.data[0] = 5;
    const again = verb(arena, x);
    expect(again).toBe(first);
    expect(Array.from(again.y.data)).toEqual([10, 4, 6, 8]);
    retract(arena, start);
    expect(verb(arena, x, { by: 3 }).y.data[0]).toBe(15); // with options: the plan's own options object
    retract(arena, start);
    expect(verb(arena, x)).toBe(first); // and back
  });

  test('refuses a caller buffer of the wrong shape before anything is allocated', () => {
    const { verb, arena, x } = steadyVerb();
    const before = arena.describe();
    expect(() => verb(arena, x, { y: f32(1, 2) })).toThrow(BufferMismatchError);
    expect(arena.describe()).toEqual(before);
  });

  test('rolls back when the kernel throws, and the next call is steady again', () => {
    const { verb, arena, start, first } = steadyVerb();
    const before = arena.describe();
    expect(() => verb(arena, f32(-1, 2, 3, 4))).toThrow(Refused);
    expect(arena.describe()).toEqual(before);
    expect(verb(arena, f32(1, 1, 1, 1))).toBe(first);
    retract(arena, start);
  });

  test('refuses a carve past the capacity, changing nothing', () => {
    const { verb, arena, x } = steadyVerb();
    arena.alloc('uint8', [1024 - 16]); // room for y, not for tmp: the frame's carve fails after y's
    const before = arena.describe();
    expect(() => verb(arena, x)).toThrow(ArenaFullError);
    // Everything but the count of views made: y's, at a new place, was made before tmp's carve failed.
    expect({ ...arena.describe(), arraysCreated: 0 }).toEqual({ ...before, arraysCreated: 0 });
  });

  test('on an ambient frame: the same results as passing the frame, and none kept on a checked arena', () => {
    const verb = Allocating(scaleInto);
    const x = f32(1, 2);
    for (const checked of [false, true]) {
      const arena = new Arena(new ArrayBuffer(1 << 10), { checked });
      const seen: unknown[] = [];
      for (let i = 0; i < 3; i++) {
        withspace(arena, () =>
          scratchspace((frame) => {
            const { y } = verb(x);
            expect(y.data.buffer).toBe(arena.slab);
            expect(Array.from(y.data)).toEqual([2, 4]);
            seen.push(verb(frame, x).y);
          }),
        );
      }
      // Unchecked, the same places give the same arrays; checked, every carve is a fresh array.
      expect(new Set(seen).size).toBe(checked ? 3 : 1);
    }
  });

  test('is never kept on a space without savepoints', () => {
    const verb = Allocating(scaleInto);
    const x = f32(1, 2);
    const space = Similar(x);
    const a = verb(space, x);
    const b = verb(space, x);
    expect(a).not.toBe(b);
    expect(a.y).not.toBe(b.y);
  });
});

group('a steady loop of verbs that pass buffers by name', () => {
  // The compiled code V8 holds, counted object by object: growth over a steady loop means code
  // compiled again and again. Checking the caller's buffers against the specs once read them
  // through V8's for-in fast path, which deoptimized whenever the next verb's spec and options
  // stopped sharing a hidden class: about 9 B of new code a call on Node.js 24 and 26. (The code
  // spaces' used sizes are no measure of this: they grow by a whole page when one small
  // compilation opens a fresh one, which read as 240 KiB for the 2 KiB a late on-stack
  // replacement of the loop below compiled.)
  const codeBytes = () => getHeapCodeStatistics().code_and_metadata_size;

  test('the measure sees code being compiled', () => {
    // Functions made here and run hot, kept alive: V8 compiles each, and the count must show it,
    // or the test below could pass while the loop recompiled on every call.
    const before = codeBytes();
    const kept: ((x: number) => number)[] = [];
    let sum = 0;
    for (let i = 0; i < 200; i++) {
      const f = new Function('x', `return x * ${i} + ${i};`) as (x: number) => number;
      for (let j = 0; j < 20_000; j++) sum += f(j);
      kept.push(f);
    }
    expect(kept).toHaveLength(200);
    expect(sum).toBeGreaterThan(0);
    expect(codeBytes() - before).toBeGreaterThan(32 * 1024);
  });

  test('compiles once: the code space does not grow with the calls', () => {
    // Batched inference as the node-workers template writes it: three inner verbs on the outer
    // verb's frame, the last one into the caller's rows by name, from an options object made once.
    const inferInto = describe(
      function inferInto(out: { y: F32 }, params: Mlp, x: F32): void {
        const h = linear(params.layer1, x).y;
        const a = relu(h).y;
        const logits = linear(params.layer2, a).y;
        softmax(logits, intoY(out.y));
      },
      { outputs: (params: Mlp, x: F32) => ({ y: Undef('float32', [rowCount(x), params.layer2.b.dims[0] ?? 0]) }) },
    );
    const infer = Allocating(inferInto);
    const made = new WeakMap<F32, { readonly y: F32 }>();
    const intoY = (y: F32) => {
      let options = made.get(y);
      if (options === undefined) {
        options = { y };
        made.set(y, options);
      }
      return options;
    };
    const arena = new Arena(new ArrayBuffer(1 << 16));
    const params = initMlp(arena, seededRandom(1), 8, 8, 3);
    const x = alloc(arena, 'float32', [1, 8]);
    const y = { y: alloc(arena, 'float32', [1, 3]) };
    const run = (calls: number) => {
      for (let i = 0; i < calls; i++) infer(arena, params, x, y);
    };
    run(50_000);
    const before = codeBytes();
    run(100_000);
    // A few compilations may still finish; the churn was about 900 KiB over these calls.
    expect(codeBytes() - before).toBeLessThan(64 * 1024);
    const sum = Array.from(y.y.data as Float32Array).reduce((p, q) => p + q, 0);
    expect(sum).toBeCloseTo(1, 5);
  });
});
