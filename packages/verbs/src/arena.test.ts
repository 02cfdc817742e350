// Verbs and shadows on @pol/arena: the spaces they are made for.
import { Arena, ArenaFullError, type Mark, mark, retract, watermark } from '@pol/arena';
import { describe, type HostArray, hostArray, Similar, scratchspace, Undef, withspace } from '@pol/core';
import fc from 'fast-check';
import { expect, describe as group, test } from 'vitest';
import { Allocating } from './allocating.js';
import { BufferMismatchError, DescriptionConflictError } from './errors.js';
import { blobs, initMlp, seededRandom, softmax, train, trainStep } from './examples/index.js';
import { Shadows, shadowSpec, zeroShadows } from './shadows.js';

type F32 = HostArray<'float32'>;
const f32 = (values: number[], dims?: number[]): F32 => hostArray(Float32Array.from(values), dims);
const newArena = (bytes = 1 << 16, checked = false) => new Arena(new ArrayBuffer(bytes), { alignment: 64, checked });
const state = (arena: Arena<'host'>) => {
  const d = arena.describe();
  return { offset: d.offset, watermark: d.watermark, openFrames: d.openFrames };
};

group('the quick start on an arena', () => {
  const x = f32([1, 2, 3, 4]);

  test('softmax(arena, x).y: y carved from the arena, tmp carved in a frame that was retracted', () => {
    const arena = newArena();
    const { y } = softmax(arena, x);
    expect(Array.from(y.data, (v) => v.toFixed(4))).toEqual(['0.0321', '0.0871', '0.2369', '0.6439']);
    expect(y.data.buffer).toBe(arena.slab);
    // y occupies [0, 16); tmp was carved at 64 and released when the frame closed.
    expect(state(arena)).toEqual({ offset: 16, watermark: 80, openFrames: 0 });
  });

  test('ambient: withspace(arena, ...) allocates y from the arena; inside a frame y dies with it', () => {
    const arena = newArena();
    const y = withspace(arena, () => softmax(x).y);
    expect(y.data.buffer).toBe(arena.slab);
    expect(arena.offset).toBe(16);
    scratchspace(arena, () => softmax(x));
    expect(arena.offset).toBe(16);
  });

  test('a steady loop returns the same y, carves nothing new, and keeps the watermark', () => {
    const arena = newArena();
    const m = mark(arena);
    const first = softmax(arena, x).y;
    retract(arena, m);
    const created = arena.describe().arraysCreated;
    for (let i = 0; i < 5; i++) {
      expect(softmax(arena, x).y).toBe(first);
      retract(arena, m);
    }
    expect(arena.describe().arraysCreated).toBe(created);
    expect(watermark(arena)).toBe(80);
  });

  test('in checked mode the scratch really dies: a leaked tmp refuses reads after the call', () => {
    let leaked: F32 | undefined;
    const leaky = Allocating(
      describe(
        function leaky(o: { y: F32 }, x: F32, options: { tmp: F32 }) {
          leaked = options.tmp;
          o.y.data.set(x.data);
        },
        { outputs: (x: F32) => ({ y: Undef(x) }), scratch: (x: F32) => ({ tmp: Undef(x) }) },
      ),
    );
    const arena = newArena(1 << 12, true);
    const { y } = leaky(arena, x);
    expect(Array.from(y.data)).toEqual([1, 2, 3, 4]);
    expect(() => leaked?.data).toThrow(expect.objectContaining({ code: 'POL_STALE_ARRAY' }));
  });
});

group('a two-layer perceptron trained on an arena', () => {
  test('the loss falls over 200 steps, exactly as on GC memory (no kernel reads unzeroed memory)', () => {
    const onArena = train(new Arena(new ArrayBuffer(1 << 20)));
    const onHeap = train(Similar(new Float32Array(0)));
    expect(onArena).toHaveLength(200);
    expect(onArena).toEqual(onHeap);
    const first = onArena[0] ?? Number.NaN;
    const last = onArena[199] ?? Number.NaN;
    expect(last).toBeLessThan(first / 4);
    // Mostly downhill: the loss of each 20-step window is below the previous window's.
    const windows = Array.from({ length: 10 }, (_, w) => onArena.slice(20 * w, 20 * w + 20).reduce((a, b) => a + b, 0));
    for (let w = 1; w < 10; w++) expect(windows[w]).toBeLessThan(windows[w - 1] ?? Number.NaN);
  });

  test('after the first step the watermark is constant and each step returns the same buffers', () => {
    const arena = new Arena(new ArrayBuffer(1 << 20));
    const random = seededRandom(5);
    const { x, labels } = blobs(arena, random, 30, 3);
    const params = initMlp(arena, random, 2, 16, 3);
    const grads = Shadows(arena, params);
    const before: Mark = mark(arena);
    const losses: F32[] = [];
    const marks: number[] = [];
    const created: number[] = [];
    for (let step = 0; step < 200; step++) {
      const { loss } = trainStep(arena, params, grads, x, labels, { lr: 0.1 });
      losses.push(loss);
      marks.push(watermark(arena));
      created.push(arena.describe().arraysCreated);
      retract(arena, before);
    }
    expect(new Set(losses.slice(1)).size).toBe(1);
    expect(losses[1]).toBe(losses[0]);
    expect(new Set(marks).size).toBe(1);
    expect(new Set(created.slice(1)).size).toBe(1);
    expect(arena.describe().openFrames).toBe(0);
  });
});

group('refused calls leave the arena exactly as it was', () => {
  const k = describe(
    function k(o: { y: F32 }, x: F32, options: { saved: F32; tmp: F32 }) {
      options.tmp.data.set(x.data);
      o.y.data.set(options.tmp.data);
      options.saved.data.set(x.data);
    },
    {
      outputs: (x: F32) => ({ y: Undef(x) }),
      checkpoints: (x: F32) => ({ saved: Undef(x) }),
      scratch: (x: F32) => ({ tmp: Undef(x) }),
    },
  );
  const verb = Allocating(k);

  // Warm the arena up with one successful call, so the watermark is not just zero.
  const warmArena = () => {
    const arena = newArena(1 << 12);
    verb(arena, f32([9]));
    return arena;
  };

  test('a caller buffer of the wrong dtype or dims', () => {
    const arena = warmArena();
    const before = state(arena);
    expect(() => verb(arena, f32([1, 2]), { y: hostArray(new Float64Array(2)) as never })).toThrow(BufferMismatchError);
    expect(() => verb(arena, f32([1, 2]), { tmp: f32([1]) })).toThrow(BufferMismatchError);
    expect(() => verb(arena, f32([1, 2]), { saved: f32([1, 2], [2, 1]) })).toThrow(BufferMismatchError);
    expect(state(arena)).toEqual(before);
  });

  test('a describer that throws', () => {
    const arena = warmArena();
    const before = state(arena);
    const bad = Allocating(
      describe((_o: { y: F32 }, _x: F32, _opts: { tmp: F32 }) => {}, {
        outputs: (x: F32) => ({ y: Undef(x) }),
        scratch: () => {
          throw new RangeError('scratch describer failed');
        },
      }),
    );
    expect(() => bad(arena, f32([1]))).toThrow('scratch describer failed');
    expect(state(arena)).toEqual(before);
  });

  test('a name described twice', () => {
    const arena = warmArena();
    const before = state(arena);
    const twice = Allocating(
      describe((_o: { y: F32 }, _x: F32, _opts: { y: F32 }) => {}, {
        outputs: (x: F32) => ({ y: Undef(x) }),
        checkpoints: (x: F32) => ({ y: Undef(x) }),
      }),
    );
    expect(() => twice(arena, f32([1]))).toThrow(DescriptionConflictError);
    expect(state(arena)).toEqual(before);
  });

  test('a kernel that throws, or rejects: rolled back, frame closed', async () => {
    const arena = warmArena();
    const before = state(arena);
    const failing = Allocating(
      describe(
        (o: { y: F32 }, _x: F32, _opts: { tmp: F32 }) => {
          o.y.data.fill(1);
          throw new TypeError('kernel failed');
        },
        { outputs: (x: F32) => ({ y: Undef('float32', [x.data.length * 64]) }), scratch: (x: F32) => ({ tmp: Undef(x) }) },
      ),
    );
    expect(() => failing(arena, f32([1]))).toThrow('kernel failed');
    expect(state(arena)).toEqual(before);
    const rejecting = Allocating(
      describe(
        async (_o: { y: F32 }, _x: F32, _opts: { tmp: F32 }) => {
          await Promise.resolve();
          throw new TypeError('kernel rejected');
        },
        { outputs: (x: F32) => ({ y: Undef('float32', [x.data.length * 64]) }), scratch: (x: F32) => ({ tmp: Undef(x) }) },
      ),
    );
    await expect(rejecting(arena, f32([1]))).rejects.toThrow('kernel rejected');
    expect(state(arena)).toEqual(before);
  });

  test('an arena that fills up part-way, in the outputs or in the scratch', () => {
    // 4 KiB, alignment 64, n floats per array: for n = 600, y fits and the checkpoint does not;
    // for n = 400, y and the checkpoint fit and the scratch (carved in the frame) does not.
    for (const [n, where] of [
      [600, 'checkpoint'],
      [400, 'scratch'],
    ] as const) {
      const arena = newArena(1 << 12);
      const before = state(arena);
      let error: unknown;
      try {
        verb(arena, hostArray(new Float32Array(n)));
      } catch (e) {
        error = e;
      }
      expect(error, where).toBeInstanceOf(ArenaFullError);
      expect((error as Error).message, where).toContain(`float32[${n}]`);
      expect((error as Error).message, where).toContain(where === 'scratch' ? '1 open frame' : '0 open frames');
      expect(state(arena), where).toEqual(before);
    }
  });

  test('Shadows of primals that do not fit', () => {
    const arena = warmArena();
    const before = state(arena);
    expect(() => Shadows(arena, { a: f32(new Array(512).fill(0)), b: f32(new Array(512).fill(0)) })).toThrow(ArenaFullError);
    expect(state(arena)).toEqual(before);
  });

  test('property: a random bad caller buffer never changes the arena', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.constantFrom('y', 'saved', 'tmp'),
        fc.integer({ min: 1, max: 8 }),
        fc.boolean(),
        (n, name, m, wrongDtype) => {
          fc.pre(wrongDtype || m !== n);
          const arena = warmArena();
          const before = state(arena);
          const bad = wrongDtype ? hostArray(new Float64Array(m)) : f32(new Array(m).fill(0));
          expect(() => verb(arena, f32(new Array(n).fill(1)), { [name]: bad } as never)).toThrow(BufferMismatchError);
          expect(state(arena)).toEqual(before);
        },
      ),
    );
  });
});

group('one user at a time', () => {
  test('while an async verb holds its frame, a second call on the bare arena is refused and the holder finishes', async () => {
    const arena = newArena();
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow = Allocating(
      describe(
        async function slow(o: { y: F32 }, x: F32, options: { tmp: F32 }) {
          options.tmp.data.set(x.data);
          await gate;
          o.y.data.set(options.tmp.data);
        },
        { outputs: (x: F32) => ({ y: Undef(x) }), scratch: (x: F32) => ({ tmp: Undef(x) }) },
      ),
    );
    const holder = slow(arena, f32([1, 2]));
    expect(() => softmax(arena, f32([1, 2]))).toThrow(expect.objectContaining({ code: 'POL_FRAME_ORDER' }));
    release();
    const { y } = await holder;
    expect(Array.from(y.data)).toEqual([1, 2]);
    expect(arena.describe().openFrames).toBe(0);
  });
});

group('shadows on an arena', () => {
  test('start at zero although arena memory is not zeroed, and zero again in one call', () => {
    const arena = newArena(1 << 12);
    const m = mark(arena);
    const dirty = arena.alloc('float32', [64]);
    dirty.data.fill(7);
    retract(arena, m);
    const params = { w: f32(new Array(16).fill(1), [4, 4]), b: f32([1, 2, 3, 4]) };
    const grads = Shadows(arena, params);
    expect(grads.w.data.buffer).toBe(arena.slab);
    expect(Array.from(grads.w.data).every((v) => v === 0)).toBe(true);
    grads.b.data.fill(3);
    zeroShadows(grads);
    expect(Array.from(grads.b.data)).toEqual([0, 0, 0, 0]);
  });

  test('a backward verb materializes its shadow outputs zeroed on dirty arena memory', () => {
    const arena = newArena(1 << 12);
    const m = mark(arena);
    arena.alloc('float32', [64]).data.fill(Number.NaN);
    retract(arena, m);
    const backward = Allocating(
      describe(
        (g: { dx: F32 }, dy: F32) => {
          for (let i = 0; i < dy.data.length; i++) g.dx.data[i] = (g.dx.data[i] ?? 0) + (dy.data[i] ?? 0);
        },
        { outputs: (dy: F32) => ({ dx: shadowSpec(dy) }) },
      ),
    );
    expect(Array.from(backward(arena, f32([1, 2, 3])).dx.data)).toEqual([1, 2, 3]);
  });
});

group('rollback across the savepoints of nested verbs', () => {
  // A kernel that calls a verb inside its frame (which takes a savepoint of its own) and then
  // fails: the outer call's outputs are rolled back all the same, sync and async.
  const inner = Allocating(describe((o: { y: F32 }, x: F32) => o.y.data.set(x.data), { outputs: (x: F32) => ({ y: Undef(x) }) }));
  const outer = (fail: 'throw' | 'reject') =>
    Allocating(
      describe(
        fail === 'throw'
          ? (o: { y: F32 }, x: F32) => {
              inner(x);
              o.y.data.fill(1);
              throw new Error('outer failed');
            }
          : async (o: { y: F32 }, x: F32) => {
              inner(x);
              await Promise.resolve();
              inner(x);
              o.y.data.fill(1);
              throw new Error('outer rejected');
            },
        { outputs: (x: F32) => ({ y: Undef(x) }) },
      ),
    );

  test('a synchronous throw after an inner verb', () => {
    const arena = new Arena(new ArrayBuffer(1 << 14));
    arena.alloc('float32', [4]);
    const before = [arena.offset, watermark(arena), arena.describe().openFrames];
    expect(() => outer('throw')(arena, f32([1, 2]))).toThrow('outer failed');
    expect([arena.offset, watermark(arena), arena.describe().openFrames]).toEqual(before);
  });

  test('an asynchronous rejection after inner verbs on both sides of an await', async () => {
    const arena = new Arena(new ArrayBuffer(1 << 14));
    arena.alloc('float32', [4]);
    const before = [arena.offset, watermark(arena), arena.describe().openFrames];
    await expect(outer('reject')(arena, f32([1, 2]))).rejects.toThrow('outer rejected');
    expect([arena.offset, watermark(arena), arena.describe().openFrames]).toEqual(before);
  });
});
