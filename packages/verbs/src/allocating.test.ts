import {
  ambientspace,
  checkpoints,
  describe,
  type Frame,
  type HostArray,
  hostArray,
  isFrame,
  outputs,
  PolError,
  Similar,
  scratch,
  scratchspace,
  Undef,
  withspace,
} from '@pol/core';
import { rollback, savepoint } from '@pol/core/backend';
import fc from 'fast-check';
import { expect, describe as group, test } from 'vitest';
import { Allocating } from './allocating.js';
import {
  BufferMismatchError,
  DescriptionConflictError,
  NoSpaceError,
  NotAKernelError,
  UndescribedKernelError,
} from './errors.js';
import { shadowSpec } from './shadows.js';
import { caught } from './test-support/caught.js';
import { countingSpace } from './test-support/counting.js';
import { DeviceFull, recordingSimilar, releasingFamily } from './test-support/releasing.js';

type F32 = HostArray<'float32'>;
const f32 = (values: number[], dims?: number[]): F32 => hostArray(Float32Array.from(values), dims);

// A kernel with all three lifetimes, recording what it was called with.
function makeRecorder() {
  const calls: { outs: unknown; x: unknown; options: unknown; ambient: unknown }[] = [];
  const kernel = describe(
    function addScaled(out: { y: F32 }, x: F32, options: { by?: number; saved: F32; tmp: F32 }): void {
      calls.push({ outs: out, x, options, ambient: ambientspace() });
      const by = options.by ?? 1;
      for (let i = 0; i < x.data.length; i++) {
        options.tmp.data[i] = (x.data[i] ?? 0) * by;
        out.y.data[i] = (options.tmp.data[i] ?? 0) + 1;
      }
      options.saved.data[0] = by;
    },
    {
      outputs: (x: F32) => ({ y: Undef(x) }),
      checkpoints: () => ({ saved: Undef('float32', [1]) }),
      scratch: (x: F32) => ({ tmp: Undef(x) }),
    },
  );
  return { kernel, calls, verb: Allocating(kernel) };
}

group('calling conventions', () => {
  test('space first: outputs and checkpoints from the space, scratch from a frame closed on return', () => {
    const { verb, calls } = makeRecorder();
    const space = countingSpace();
    const x = f32([1, 2, 3]);
    const result = verb(space, x, { by: 2 });
    expect(Array.from(result.y.data)).toEqual([3, 5, 7]);
    expect(Array.from(result.saved.data)).toEqual([2]);
    expect(Object.keys(result)).toEqual(['y', 'saved']);
    // y and saved are live; tmp was freed with the frame.
    expect(space.log).toEqual(['float32[3]', 'float32[1]', 'float32[3]']);
    expect(space.live).toBe(2);
    expect(space.openFrames).toEqual([]);
    const call = calls[0];
    expect(call?.outs).toBe(result);
    const frame = call?.ambient as Frame;
    expect(isFrame(frame)).toBe(true);
    expect(frame.isOpen).toBe(false);
    expect(frame.parent).toBe(space);
  });

  test('ambient: the space bound by withspace', () => {
    const { verb } = makeRecorder();
    const space = countingSpace();
    const result = withspace(space, () => verb(f32([1]), { by: 3 }));
    expect(Array.from(result.y.data)).toEqual([4]);
    expect(space.live).toBe(2);
  });

  test('ambient inside a scratchspace block: outputs from the innermost frame, dying with it', () => {
    const { verb } = makeRecorder();
    const space = countingSpace();
    scratchspace(space, () => {
      verb(f32([1, 2]));
      expect(space.live).toBe(2);
    });
    expect(space.live).toBe(0);
  });

  test('unscoped: Similar of the first array input', () => {
    const { verb, calls } = makeRecorder();
    const x = f32([1, 2]);
    const result = verb(x);
    expect(Array.from(result.y.data)).toEqual([2, 3]);
    const frame = calls[0]?.ambient as Frame;
    expect(String(frame.parent)).toBe(String(Similar(x)));
  });

  test('unscoped: the first array may sit inside a plain-object input', () => {
    const sum = Allocating(
      describe((o: { y: F32 }, layer: { w: F32 }, scale: number) => o.y.data.set(layer.w.data.map((v) => v * scale)), {
        outputs: (layer: { w: F32 }) => ({ y: Undef(layer.w) }),
      }),
    );
    expect(Array.from(sum({ w: f32([1, 2]) }, 3).y.data)).toEqual([3, 6]);
  });

  test('a Frame passed as the space: outputs from the frame, scratch from a frame nested in it', () => {
    const { verb } = makeRecorder();
    const space = countingSpace();
    scratchspace(space, (frame) => {
      verb(frame, f32([1]));
      expect(space.live).toBe(2);
    });
    expect(space.live).toBe(0);
  });

  test('inside the kernel the ambient space is the verb frame, so nested verbs allocate from it', () => {
    const inner = makeRecorder();
    const outer = Allocating(
      describe(
        function outer(o: { z: F32 }, x: F32): void {
          const { y } = inner.verb(x);
          o.z.data.set(y.data);
        },
        { outputs: (x: F32) => ({ z: Undef(x) }) },
      ),
    );
    const space = countingSpace();
    const { z } = outer(space, f32([1, 2]));
    expect(Array.from(z.data)).toEqual([2, 3]);
    // z lives; the inner verb's y, saved and tmp died with the outer frame.
    expect(space.log).toHaveLength(4);
    expect(space.live).toBe(1);
  });

  test('describers receive the inputs and the caller options', () => {
    const seen: unknown[][] = [];
    const k = (o: { y: F32 }, _x: F32, n: number, _opts: { k?: number }) => o.y.data.fill(n);
    outputs.define(k, (...args: unknown[]) => {
      seen.push(args);
      return { y: Undef('float32', [2]) };
    });
    const x = f32([0]);
    const opts = { k: 1 };
    Allocating(k)(x, 4, opts);
    Allocating(k)(x, 5);
    expect(seen).toEqual([
      [x, 4, opts],
      [x, 5],
    ]);
  });

  test('verb.kernel is the kernel and the verb takes its name', () => {
    const { verb, kernel } = makeRecorder();
    expect(verb.kernel).toBe(kernel);
    expect(verb.name).toBe('addScaled');
  });

  test('an async kernel is awaited before its frame closes, and the result is a promise', async () => {
    const space = countingSpace();
    let frameDuring: Frame | undefined;
    const slow = Allocating(
      describe(
        async function slow(o: { y: F32 }, x: F32, options: { tmp: F32 }): Promise<void> {
          for (let i = 0; i < 3; i++) await Promise.resolve();
          frameDuring = ambientspace() as Frame;
          expect(frameDuring.isOpen).toBe(true);
          options.tmp.data.set(x.data);
          o.y.data.set(options.tmp.data);
        },
        { outputs: (x: F32) => ({ y: Undef(x) }), scratch: (x: F32) => ({ tmp: Undef(x) }) },
      ),
    );
    const pending = slow(space, f32([4, 5]));
    expect(pending).toBeInstanceOf(Promise);
    expect(space.openFrames).toHaveLength(1);
    const { y } = await pending;
    expect(Array.from(y.data)).toEqual([4, 5]);
    expect(frameDuring?.isOpen).toBe(false);
    expect(space.openFrames).toHaveLength(0);
    expect(space.live).toBe(1);
  });
});

group('the trailing options object', () => {
  test('forwarded as is when the kernel describes no checkpoints or scratch', () => {
    let got: unknown;
    const k = Allocating(
      describe(
        (_o: { y: F32 }, _x: F32, options: { eps: number }) => {
          got = options;
        },
        {
          outputs: (x: F32) => ({ y: Undef(x) }),
        },
      ),
    );
    const options = { eps: 1 };
    k(f32([1]), options);
    expect(got).toBe(options);
  });

  test('copied, never mutated, when described buffers are added to it', () => {
    const { verb, calls } = makeRecorder();
    const options = { by: 2 };
    verb(f32([1]), options);
    expect(options).toEqual({ by: 2 });
    expect(calls[0]?.options).not.toBe(options);
    expect(Object.keys(calls[0]?.options as object)).toEqual(['by', 'saved', 'tmp']);
  });

  test('a plain-object input before the last declared parameter is an input, not options', () => {
    const seen: unknown[] = [];
    const k = Allocating(
      describe((_o: { y: F32 }, params: { a: number }, options?: { b: number }) => void seen.push(params, options), {
        outputs: () => ({ y: Undef('float32', [1]) }),
      }),
    );
    const params = { a: 1 };
    const x = f32([0]);
    withspace(Similar(x), () => k(params));
    withspace(Similar(x), () => k(params, { b: 2 }));
    expect(seen).toEqual([params, undefined, params, { b: 2 }]);
  });

  test('an omitted optional input stays undefined and the options land in the options slot', () => {
    const seen: unknown[][] = [];
    const k = Allocating(
      describe(
        function biased(o: { y: F32 }, x: F32, bias: F32 | undefined, options: { tmp: F32 }) {
          seen.push([bias, options.tmp.dims]);
          o.y.data.set(x.data);
        },
        { outputs: (x: F32) => ({ y: Undef(x) }), scratch: (x: F32) => ({ tmp: Undef(x) }) },
      ),
    );
    const x = f32([1, 2]);
    k(x, undefined);
    k(x, undefined, {});
    expect(seen).toEqual([
      [undefined, [2]],
      [undefined, [2]],
    ]);
  });

  test('a kernel whose options parameter has a default still receives the options', () => {
    let got: unknown;
    const k = Allocating(
      describe(
        function withDefault(o: { y: F32 }, x: F32, options: { tmp?: F32; by?: number } = {}) {
          got = options;
          o.y.data.set(x.data);
        },
        { outputs: (x: F32) => ({ y: Undef(x) }), scratch: (x: F32) => ({ tmp: Undef(x) }) },
      ),
    );
    k(f32([1]), { by: 3 });
    expect(got).toMatchObject({ by: 3 });
    expect((got as { tmp: F32 }).tmp.dims).toEqual([1]);
    k(f32([1]));
    expect((got as { tmp: F32 }).tmp.dims).toEqual([1]);
  });

  test('no options and no checkpoints or scratch: the kernel gets only its inputs', () => {
    let count = -1;
    const kernel = (...args: unknown[]) => {
      count = args.length;
    };
    outputs.define(kernel, () => ({ y: Undef('float32', [1]) }));
    const k = Allocating(kernel);
    k(Similar(new Float32Array(0)), f32([1]), 2);
    expect(count).toBe(3);
  });
});

group("caller's own buffers", () => {
  test('an output passed under its name is used as is, and not materialized', () => {
    const { verb, calls } = makeRecorder();
    const space = countingSpace();
    const y = f32([0, 0]);
    const result = verb(space, f32([1, 2]), { y });
    expect(result.y).toBe(y);
    const outs = calls[0]?.outs as { y: F32 };
    expect(outs.y).toBe(y);
    expect(Array.from(y.data)).toEqual([2, 3]);
    expect(space.log).toEqual(['float32[1]', 'float32[2]']);
  });

  test('aliasing in place: the input itself as the output', () => {
    const { verb } = makeRecorder();
    const x = f32([1, 2]);
    expect(verb(x, { y: x }).y).toBe(x);
    expect(Array.from(x.data)).toEqual([2, 3]);
  });

  test('checkpoints and scratch passed under their names are used as is', () => {
    const { verb, calls } = makeRecorder();
    const space = countingSpace();
    const saved = f32([0]);
    const tmp = f32([0, 0]);
    const result = verb(space, f32([1, 2]), { saved, tmp });
    expect(result.saved).toBe(saved);
    const options = calls[0]?.options as { tmp: F32 };
    expect(options.tmp).toBe(tmp);
    expect(Array.from(tmp.data)).toEqual([1, 2]);
    expect(space.log).toEqual(['float32[2]']);
  });

  test('a bare TypedArray of the described length is an acceptable buffer', () => {
    const copy = Allocating(
      describe((o: { y: Float32Array }, x: F32) => o.y.set(x.data), { outputs: (x: F32) => ({ y: Undef(x) }) }),
    );
    const y = new Float32Array(2);
    expect(copy(f32([1, 2]), { y }).y).toBe(y);
    expect(Array.from(y)).toEqual([1, 2]);
  });

  test('undefined under a described name means "materialize it"', () => {
    const { verb } = makeRecorder();
    expect(verb(f32([1]), { y: undefined }).y.dims).toEqual([1]);
  });

  const nested = describe(
    function nested(o: { g: { a: F32; b: F32 } }, x: F32) {
      o.g.a.data.set(x.data);
      o.g.b.data.set(x.data);
    },
    { outputs: (x: F32) => ({ g: { a: Undef(x), b: Undef(x) } }) },
  );

  test('a complete group is passed through by identity', () => {
    const g = { a: f32([0]), b: f32([0]) };
    const space = countingSpace();
    expect(Allocating(nested)(space, f32([5]), { g }).g).toBe(g);
    expect(space.log).toEqual([]);
  });

  test('a partial group is completed: the given leaves by identity, the rest materialized', () => {
    const a = f32([0]);
    const space = countingSpace();
    const { g } = Allocating(nested)(space, f32([5]), { g: { a } as never });
    expect(g.a).toBe(a);
    expect(Array.from(g.b.data)).toEqual([5]);
    expect(space.log).toEqual(['float32[1]']);
  });
});

group('bad input is refused with a typed error and nothing allocated', () => {
  const refuses = (fn: () => unknown, type: new (...args: never[]) => PolError, code: string, ...fragments: string[]) => {
    const error = caught(() => fn());
    expect(error).toBeInstanceOf(type);
    expect(error).toBeInstanceOf(PolError);
    expect((error as PolError).code).toBe(code);
    for (const fragment of fragments) expect((error as Error).message).toContain(fragment);
    return error as PolError;
  };

  test('a caller buffer of the wrong dtype names the name, what was expected and what it got', () => {
    const { verb } = makeRecorder();
    const space = countingSpace();
    const y = hostArray(new Float64Array(2));
    const error = refuses(
      () => verb(space, f32([1, 2]), { y: y as never }),
      BufferMismatchError,
      'POL_BUFFER_MISMATCH',
      "'y'",
      'float32[2]',
      'float64[2]',
      'leave',
    ) as BufferMismatchError;
    expect([error.path, error.expected, error.got]).toEqual(['y', 'float32[2]', 'float64[2]']);
    expect(space.log).toEqual([]);
    expect(space.openFrames).toEqual([]);
  });

  test('a caller buffer of the wrong dims, for a checkpoint or scratch as for an output', () => {
    const { verb } = makeRecorder();
    const space = countingSpace();
    refuses(
      () => verb(space, f32([1, 2]), { tmp: f32([1, 2, 3]) }),
      BufferMismatchError,
      'POL_BUFFER_MISMATCH',
      "'tmp'",
      'float32[3]',
    );
    refuses(
      () => verb(space, f32([1, 2]), { saved: f32([1, 2], [1, 2]) }),
      BufferMismatchError,
      'POL_BUFFER_MISMATCH',
      'float32[1, 2]',
    );
    expect(space.log).toEqual([]);
  });

  test('a caller buffer that is not an array', () => {
    const { verb } = makeRecorder();
    refuses(() => verb(f32([1]), { y: [1] as never }), BufferMismatchError, 'POL_BUFFER_MISMATCH', 'an array of length 1');
  });

  test('a misspelt name inside a described group', () => {
    const nested = describe((o: { g: { a: F32 } }, x: F32) => o.g.a.data.set(x.data), {
      outputs: (x: F32) => ({ g: { a: Undef(x) } }),
    });
    const error = refuses(
      () => Allocating(nested)(f32([1]), { g: { a: f32([0]), c: f32([0]) } as never }),
      BufferMismatchError,
      'POL_BUFFER_MISMATCH',
      "'g.c'",
    ) as BufferMismatchError;
    expect(error.path).toBe('g.c');
    refuses(
      () => Allocating(nested)(f32([1]), { g: f32([0]) as never }),
      BufferMismatchError,
      'POL_BUFFER_MISMATCH',
      'a group { a }',
    );
  });

  test('a name described under two lifetimes', () => {
    const k = describe((_o: { y: F32 }, _x: F32, _opts: { y: F32 }) => {}, {
      outputs: (x: F32) => ({ y: Undef(x) }),
      scratch: (x: F32) => ({ y: Undef(x) }),
    });
    const space = countingSpace();
    refuses(
      () => Allocating(k)(space, f32([1])),
      DescriptionConflictError,
      'POL_DESCRIPTION_CONFLICT',
      "'y'",
      'outputs',
      'scratch',
    );
    expect(space.log).toEqual([]);
  });

  test('no space, no ambient space and no array input', () => {
    const k = Allocating(
      describe((_o: { y: F32 }, n: number, s: string) => [n, s], { outputs: (n: number) => ({ y: Undef('float32', [n]) }) }),
    );
    refuses(() => k(1, 'a'), NoSpaceError, 'POL_NO_SPACE', 'withspace', 'space first');
  });

  test('Allocating(notAFunction)', () => {
    for (const bad of [undefined, null, 42, 'softmax', {}, [() => {}]]) {
      refuses(() => Allocating(bad as never), NotAKernelError, 'POL_NOT_A_KERNEL', 'kernel function');
    }
  });

  test('a describer that throws: its error, nothing allocated, no frame left open', () => {
    for (const lifetime of ['outputs', 'checkpoints', 'scratch'] as const) {
      const k = (o: { y: F32 }, x: F32) => o.y.data.set(x.data);
      outputs.define(k, (x: F32) => ({ y: Undef(x) }));
      const registry = { outputs, checkpoints, scratch }[lifetime];
      registry.define(k, () => {
        throw new RangeError(`bad ${lifetime}`);
      });
      const space = countingSpace();
      expect(() => Allocating(k)(space, f32([1]))).toThrow(`bad ${lifetime}`);
      expect(space.log).toEqual([]);
      expect(space.openFrames).toEqual([]);
    }
  });

  test('a kernel that throws: its error, the frame closed, outputs and checkpoints rolled back', () => {
    const k = describe(
      (_o: { y: F32 }, _x: F32, _opts: { saved: F32; tmp: F32 }) => {
        throw new TypeError('kernel failed');
      },
      {
        outputs: (x: F32) => ({ y: Undef(x) }),
        checkpoints: (x: F32) => ({ saved: Undef(x) }),
        scratch: (x: F32) => ({ tmp: Undef(x) }),
      },
    );
    const space = countingSpace();
    expect(() => Allocating(k)(space, f32([1]))).toThrow('kernel failed');
    expect(space.log).toHaveLength(3);
    expect(space.live).toBe(0);
    expect(space.openFrames).toEqual([]);
  });

  test('an async kernel that rejects: the frame closes and the outputs are rolled back', async () => {
    const k = describe(
      async (_o: { y: F32 }, _x: F32, _opts: { tmp: F32 }) => {
        await Promise.resolve();
        throw new TypeError('async kernel failed');
      },
      { outputs: (x: F32) => ({ y: Undef(x) }), scratch: (x: F32) => ({ tmp: Undef(x) }) },
    );
    const space = countingSpace();
    await expect(Allocating(k)(space, f32([1]))).rejects.toThrow('async kernel failed');
    expect(space.live).toBe(0);
    expect(space.openFrames).toEqual([]);
  });

  test('a space that runs out part-way: rolled back, nothing left allocated', () => {
    const { verb } = makeRecorder();
    for (const failAfter of [0, 1, 2]) {
      const space = countingSpace();
      space.failAfter = failAfter;
      expect(() => verb(space, f32([1]))).toThrow('counting space full');
      expect(space.live).toBe(0);
      expect(space.openFrames).toEqual([]);
    }
  });
});

group('a kernel with no descriptions', () => {
  test('is refused with a typed error naming the verb, before anything is allocated or opened', () => {
    const space = countingSpace();
    const sgd = Allocating(function sgd(_o: object, p: F32, g: F32, options: { lr: number }) {
      for (let i = 0; i < p.data.length; i++) p.data[i] = (p.data[i] ?? 0) - options.lr * (g.data[i] ?? 0);
    });
    const p = f32([1, 2]);
    const error = caught(() => sgd(space, p, f32([10, 10]), { lr: 0.1 }));
    expect(error).toBeInstanceOf(UndescribedKernelError);
    expect((error as UndescribedKernelError).code).toBe('POL_UNDESCRIBED_KERNEL');
    expect((error as UndescribedKernelError).verb).toBe('sgd');
    expect((error as Error).message).toContain('Allocating(sgd): the kernel has no describers');
    expect(Array.from(p.data)).toEqual([1, 2]);
    expect(space.log).toEqual([]);
    expect(space.openFrames).toEqual([]);
  });

  test('an explicitly empty description is a description: the verb runs and returns {}', () => {
    let ran = 0;
    const touch = Allocating(describe((_o: object, _x: F32) => void ran++, { outputs: () => ({}) }));
    expect(touch(f32([1]))).toEqual({});
    expect(ran).toBe(1);
  });
});

group('shadow outputs', () => {
  const backward = describe(
    function backward(grads: { dx: F32 }, dy: F32) {
      for (let i = 0; i < dy.data.length; i++) grads.dx.data[i] = (grads.dx.data[i] ?? 0) + 2 * (dy.data[i] ?? 0);
    },
    { outputs: (dy: F32) => ({ dx: shadowSpec(dy) }) },
  );

  test('are zeroed when materialized, even from a space whose memory is not', () => {
    const space = countingSpace(Number.NaN);
    const { dx } = Allocating(backward)(space, f32([1, 2]));
    expect(Array.from(dx.data)).toEqual([2, 4]);
  });

  test("are accumulated into, not zeroed, when they are the caller's", () => {
    const dx = f32([1, 1]);
    Allocating(backward)(f32([1, 2]), { dx });
    expect(Array.from(dx.data)).toEqual([3, 5]);
  });
});

group('properties', () => {
  // A kernel describing `count` float32 outputs o0, o1, ... of the given dims, filling each with its index.
  const kernelFor = (dims: number[][]) => {
    const k = (o: Record<string, F32>, _x: F32) => {
      for (let i = 0; i < dims.length; i++) o[`o${i}`]?.data.fill(i);
    };
    outputs.define(k, () => Object.fromEntries(dims.map((d, i) => [`o${i}`, Undef('float32', d)])));
    return Allocating(k);
  };
  const dimsArb = fc.array(fc.array(fc.integer({ min: 0, max: 5 }), { maxLength: 3 }), { minLength: 1, maxLength: 4 });
  const conventionArb = fc.constantFrom('space-first', 'ambient', 'unscoped');

  test('outputs have the described dims for random sizes, in every calling convention', () => {
    fc.assert(
      fc.property(dimsArb, conventionArb, (dims, convention) => {
        const verb = kernelFor(dims);
        const x = f32([0]);
        const space = countingSpace();
        const call = () =>
          (verb as unknown as (...a: unknown[]) => Record<string, F32>)(...(convention === 'space-first' ? [space, x] : [x]));
        const result = convention === 'ambient' ? withspace(space, call) : call();
        expect(Object.keys(result)).toEqual(dims.map((_, i) => `o${i}`));
        for (const [i, d] of dims.entries()) {
          expect(result[`o${i}`]?.dims).toEqual(d);
          expect(Array.from(result[`o${i}`]?.data ?? []).every((v) => v === i)).toBe(true);
        }
        expect(space.live).toBe(convention === 'unscoped' ? 0 : dims.length);
      }),
    );
  });

  test('caller-supplied buffers are passed through by identity; only the rest are materialized', () => {
    fc.assert(
      fc.property(
        dimsArb.chain((dims) =>
          fc.tuple(fc.constant(dims), fc.array(fc.boolean(), { minLength: dims.length, maxLength: dims.length })),
        ),
        ([dims, supplied]) => {
          const verb = kernelFor(dims) as unknown as (...a: unknown[]) => Record<string, F32>;
          const mine: Record<string, F32> = {};
          for (const [i, d] of dims.entries()) {
            if (supplied[i]) mine[`o${i}`] = hostArray(new Float32Array(d.reduce((a, b) => a * b, 1)), d);
          }
          const space = countingSpace();
          const result = verb(space, f32([0]), mine);
          for (const [i] of dims.entries()) {
            const name = `o${i}`;
            if (supplied[i]) expect(result[name]).toBe(mine[name]);
            else expect(result[name]).not.toBe(undefined);
          }
          expect(space.live).toBe(supplied.filter((s) => !s).length);
        },
      ),
    );
  });

  test('a kernel described after Allocating(f) is refused until then, and works from the next call on', () => {
    const k = (o: { y?: F32 }, x: F32) => o.y?.data.set(x.data);
    const verb = Allocating(k);
    expect(() => verb(f32([1]))).toThrow(UndescribedKernelError);
    outputs.define(k, (x: F32) => ({ y: Undef(x) }));
    expect(Array.from((verb(f32([2])) as { y?: F32 }).y?.data ?? [])).toEqual([2]);
  });
});

group('over Similar of memory the GC cannot free (a family with release): commit and rollback', () => {
  type Arr = HostArray<'float32'>;
  const twoOutputs = (fail?: 'throw' | 'reject') =>
    Allocating(
      describe(
        fail === 'reject'
          ? async (o: { a: Arr; b: Arr }, x: Arr) => {
              await Promise.resolve();
              o.a.data.set(x.data);
              throw new Error('the kernel rejected');
            }
          : (o: { a: Arr; b: Arr }, x: Arr) => {
              o.a.data.set(x.data);
              o.b.data.fill(1);
              if (fail === 'throw') throw new Error('the kernel threw');
            },
        { outputs: (x: Arr) => ({ a: Undef(x), b: Undef('float32', [3]) }) },
      ),
    );

  test('an unframed verb whose second output fails to allocate releases the first, and runs nothing', () => {
    const device = releasingFamily();
    device.failOnFirstDim = 3;
    const x = device.array([1, 2]);
    expect(() => twoOutputs()(x)).toThrow(DeviceFull);
    expect(device.made).toHaveLength(1);
    expect(device.released).toEqual([device.made]);
  });

  test('a kernel that throws: both outputs released, once', () => {
    const device = releasingFamily();
    const x = device.array([1, 2]);
    expect(() => twoOutputs('throw')(x)).toThrow('the kernel threw');
    expect(device.made).toHaveLength(2);
    expect(device.released).toEqual([device.made]);
  });

  test('success commits the savepoint once the kernel returned: nothing released, and no token left open', () => {
    const device = releasingFamily();
    const x = device.array([1, 2]);
    const { space, ended } = recordingSimilar(x);
    const { a, b } = twoOutputs()(space, x);
    expect(Array.from(a.data)).toEqual([1, 2]);
    expect(Array.from(b.data)).toEqual([1, 1, 1]);
    expect(ended.taken).toHaveLength(1);
    expect(ended.committed).toEqual(ended.taken);
    expect(ended.rolledBack).toEqual([]);
    expect(device.released).toEqual([]);
  });

  test('committed into an enclosing savepoint on the same space, whose rollback then releases the outputs', () => {
    const device = releasingFamily();
    const x = device.array([1, 2]);
    const space = Similar(x);
    const outer = savepoint(space);
    const { a, b } = twoOutputs()(space, x);
    expect(device.released).toEqual([]);
    rollback(space, outer, new Error('the enclosing work failed'));
    expect(device.released).toEqual([[a, b]]);
  });

  test('an async kernel: the token is held while it awaits, committed on resolution', async () => {
    const device = releasingFamily();
    const x = device.array([1, 2]);
    const { space, ended } = recordingSimilar(x);
    const verb = Allocating(
      describe(
        async (o: { a: Arr }, x: Arr) => {
          await Promise.resolve();
          o.a.data.set(x.data);
        },
        { outputs: (x: Arr) => ({ a: Undef(x) }) },
      ),
    );
    const pending = verb(space, x);
    expect(ended.taken).toHaveLength(1);
    expect(ended.committed).toEqual([]);
    const { a } = await pending;
    expect(Array.from(a.data)).toEqual([1, 2]);
    expect(ended.committed).toEqual(ended.taken);
    expect(device.released).toEqual([]);
  });

  test('an async kernel that rejects: rolled back, never committed, both outputs released', async () => {
    const device = releasingFamily();
    const x = device.array([1, 2]);
    const { space, ended } = recordingSimilar(x);
    await expect(twoOutputs('reject')(space, x)).rejects.toThrow('the kernel rejected');
    expect(ended.committed).toEqual([]);
    expect(ended.rolledBack).toEqual(ended.taken);
    expect(device.released).toEqual([device.made]);
  });
});
