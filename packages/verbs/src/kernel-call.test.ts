// How a verb calls its kernel: the arguments it passes at every arity, with and without options,
// and the two ways it binds its frame (core's binder while the store binds synchronously; the
// store's run otherwise, and always for an async kernel), which must not differ in anything a
// kernel can see.
import { AsyncLocalStorage } from 'node:async_hooks';
import { Arena } from '@pol/arena';
import {
  AsyncScopeUnsupportedError,
  ambientspace,
  describe,
  type Frame,
  type HostArray,
  hostArray,
  isFrame,
  type Space,
  Undef,
  withspace,
} from '@pol/core';
import { type AmbientStore, contextStore, lazyContextStore, setAmbientStore, syncStore } from '@pol/core/backend';
import fc from 'fast-check';
import { afterEach, expect, describe as group, test } from 'vitest';
import { Allocating } from './allocating.js';

type F32 = HostArray<'float32'>;
const f32 = (values: number[]): F32 => hostArray(Float32Array.from(values));

let previous: AmbientStore | undefined;
function use(store: AmbientStore): void {
  const was = setAmbientStore(store);
  previous ??= was;
}
afterEach(() => {
  if (previous !== undefined) setAmbientStore(previous);
  previous = undefined;
});

/** A store that binds through run only (no binder), counting its runs. */
function countingStore(): AmbientStore & { runs: number } {
  let current: Space | undefined;
  const store = {
    async: false,
    runs: 0,
    run<A, R>(space: Space, f: (arg: A) => R, arg?: A): R {
      store.runs++;
      const saved = current;
      current = space;
      try {
        return f(arg as A);
      } finally {
        current = saved;
      }
    },
    get: () => current,
  };
  return store;
}

// A kernel declaring `inputs` inputs and then an options parameter, that records every argument it
// receives (the count included) and the ambient space it runs in.
function recorder(inputs: number, withScratch: boolean) {
  const seen: { args: unknown[]; ambient: Space }[] = [];
  const names = Array.from({ length: inputs }, (_, i) => `x${i}`);
  // A kernel's declared parameter count is what the verb reads (kernel.length): build one with it.
  const body = (...args: unknown[]): void => {
    seen.push({ args, ambient: ambientspace() });
  };
  const kernel = new Function(
    'body',
    `return function recorded(out, ${[...names, 'options'].join(', ')}) { return body(...arguments); }`,
  )(body) as (...args: unknown[]) => void;
  const described = describe(kernel as never, {
    outputs: () => ({ y: Undef('float32', [1]) }),
    ...(withScratch ? { scratch: () => ({ tmp: Undef('float32', [1]) }) } : {}),
  });
  return { seen, verb: Allocating(described) as unknown as (...args: unknown[]) => { y: F32 } };
}

group('the kernel call', () => {
  test('receives outs, the inputs and the options in their slot at every arity, on both bindings, first and steady calls (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 7 }),
        fc.integer({ min: 0, max: 7 }),
        fc.boolean(),
        fc.boolean(),
        fc.constantFrom('binder', 'store'),
        fc.constantFrom('space first', 'ambient'),
        (declaredInputs, given, withScratch, passOptions, binding, form) => {
          use(binding === 'binder' ? syncStore() : countingStore());
          const { seen, verb } = recorder(declaredInputs, withScratch);
          const arena = new Arena(new ArrayBuffer(4096));
          const inputs = Array.from({ length: given }, (_, i) => f32([i]));
          const options = { k: 1 };
          // The options object is recognised only when every declared input is given.
          const recognised = passOptions && given >= declaredInputs;
          const args = passOptions ? [...inputs, options] : inputs;
          // Twice: the first call makes the plan, the second is a steady one (its direct lane, for
          // one or two inputs and no options on the binder), and both must pass the same.
          for (let call = 0; call < 2; call++) {
            const { y } = form === 'space first' ? verb(arena, ...args) : withspace(arena, () => verb(...args));
            expect(seen).toHaveLength(call + 1);
            const { args: received, ambient } = seen[call] as { args: unknown[]; ambient: Space };
            expect(isFrame(ambient) && (ambient as Frame).parent).toBe(arena);
            expect(received[0]).toEqual({ y });
            const passedInputs = passOptions && !recognised ? [...inputs, options] : inputs;
            const kernelOptions = withScratch
              ? { ...(recognised ? options : {}), tmp: expect.anything() }
              : recognised
                ? options
                : undefined;
            if (kernelOptions === undefined) {
              expect(received.slice(1)).toEqual(passedInputs);
            } else {
              const slot = Math.max(passedInputs.length + 1, declaredInputs + 1);
              expect(received).toHaveLength(slot + 1);
              expect(received.slice(1, 1 + passedInputs.length)).toEqual(passedInputs);
              for (let i = 1 + passedInputs.length; i < slot; i++) expect(received[i]).toBeUndefined();
              expect(received[slot]).toEqual(kernelOptions);
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  test('binds the frame through the binder while the store has one, and through the store otherwise', () => {
    // A syncStore whose own run is spied on: the binder path must never call it.
    const sync = syncStore();
    const run = sync.run;
    let syncRuns = 0;
    sync.run = (space, f, arg) => {
      syncRuns++;
      return run(space, f, arg);
    };
    use(sync);
    const { seen, verb } = recorder(1, true);
    const arena = new Arena(new ArrayBuffer(4096));
    verb(arena, f32([1]));
    expect(syncRuns).toBe(0);
    const counting = countingStore();
    use(counting);
    verb(arena, f32([1]));
    expect(counting.runs).toBe(1);
    expect(seen.map((s) => (s.ambient as Frame).parent)).toEqual([arena, arena]);
  });

  test('a kernel that calls its own verb again, on its frame, gets the right arguments and frames on every store', () => {
    const stores: (() => AmbientStore)[] = [
      syncStore,
      () => lazyContextStore(() => new AsyncLocalStorage()),
      countingStore,
      () => contextStore(new AsyncLocalStorage()),
    ];
    for (const make of stores) {
      use(make());
      const trace: string[] = [];
      const nested: (space: Space, x: F32, options: { depth: number }) => { y: F32 } = Allocating(
        describe(
          function nestedInto(o: { y: F32 }, x: F32, options: { depth: number; tmp: F32 }): void {
            const frame = ambientspace() as Frame;
            trace.push(`${options.depth}:${x.data[0]}:${frame.parent === outer ? 'arena' : 'frame'}`);
            if (options.depth < 2) {
              const inner = nested(frame, f32([(x.data[0] ?? 0) + 1]), { depth: options.depth + 1 });
              o.y.data[0] = (inner.y.data[0] ?? 0) + 1;
            } else o.y.data[0] = 0;
            expect(ambientspace()).toBe(frame);
          },
          { outputs: (x: F32) => ({ y: Undef(x) }), scratch: (x: F32) => ({ tmp: Undef(x) }) },
        ),
      );
      const outer = new Arena(new ArrayBuffer(4096));
      const { y } = nested(outer, f32([10]), { depth: 0 });
      expect(trace).toEqual(['0:10:arena', '1:11:frame', '2:12:frame']);
      expect(Array.from(y.data)).toEqual([2]);
      expect(outer.describe().openFrames).toBe(0);
    }
  });

  test('an async kernel keeps its frame across await, even on a store made after it was described', async () => {
    let after: Space | undefined;
    const slow = Allocating(
      describe(
        async function slow(o: { y: F32 }, x: F32, options: { tmp: F32 }): Promise<void> {
          await Promise.resolve();
          after = ambientspace();
          options.tmp.data.set(x.data);
          o.y.data.set(options.tmp.data);
        },
        { outputs: (x: F32) => ({ y: Undef(x) }), scratch: (x: F32) => ({ tmp: Undef(x) }) },
      ),
    );
    for (const store of [lazyContextStore(() => new AsyncLocalStorage()), contextStore(new AsyncLocalStorage())]) {
      use(store);
      after = undefined;
      const arena = new Arena(new ArrayBuffer(4096));
      const { y } = await slow(arena, f32([3, 4]));
      expect(Array.from(y.data)).toEqual([3, 4]);
      expect(isFrame(after) && (after as Frame).parent).toBe(arena);
    }
  });

  test('on a store without async context, an async kernel is refused before it runs, and its call rolled back', () => {
    use(syncStore());
    let ran = 0;
    const slow = Allocating(
      describe(
        async function slow(o: { y: F32 }, x: F32): Promise<void> {
          ran++;
          o.y.data.set(x.data);
        },
        { outputs: (x: F32) => ({ y: Undef(x) }) },
      ),
    );
    const arena = new Arena(new ArrayBuffer(4096));
    const { offset, watermark } = arena.describe();
    expect(() => slow(arena, f32([1]))).toThrow(AsyncScopeUnsupportedError);
    expect(ran).toBe(0);
    expect(arena.describe()).toMatchObject({ offset, watermark, openFrames: 0 });
  });

  test('on a store without async context, a kernel that returns a promise is refused and its call rolled back', async () => {
    use(syncStore());
    const eager = Allocating(
      describe(
        (o: { y: F32 }, x: F32) => {
          o.y.data.set(x.data);
          return Promise.reject(new Error('late'));
        },
        { outputs: (x: F32) => ({ y: Undef(x) }) },
      ),
    );
    const arena = new Arena(new ArrayBuffer(4096));
    const { offset, watermark } = arena.describe();
    expect(() => eager(arena, f32([1]))).toThrow(AsyncScopeUnsupportedError);
    expect(arena.describe()).toMatchObject({ offset, watermark, openFrames: 0 });
  });
});
