import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type AmbientStore,
  bindAmbient,
  contextStore,
  lazyContextStore,
  openFrameKey,
  scopeFrame,
  setAmbientStore,
  spaceKey,
  syncStore,
} from './backend.js';
import {
  AsyncScopeUnsupportedError,
  alloc,
  ambientIsAsync,
  ambientspace,
  describe as describeKernel,
  type Frame,
  type HostArray,
  InvalidArgumentError,
  isFrame,
  NoAmbientSpaceError,
  NotASpaceError,
  outputs,
  type PolError,
  Similar,
  type Space,
  scratchspace,
  Undef,
  withspace,
} from './index.js';
import {
  boundSpace,
  countingSpace,
  deferred,
  macrotask,
  nodeContextStore,
  nodeContextVariable,
  unhandledRejectionsDuring,
} from './test-support/fixtures.js';

const fallback = Similar(new Float32Array(0));

describe('ambientspace', () => {
  it('throws NoAmbientSpaceError when nothing is bound, saying how to bind one', () => {
    expect(() => ambientspace()).toThrow(NoAmbientSpaceError);
    expect(() => ambientspace()).toThrow(/Wrap the call in withspace\(space, \(\) => \.\.\.\)/);
    expect(() => ambientspace()).toThrow(/use ambientspace\(fallback\) to name a default/);
    try {
      ambientspace();
      expect.unreachable();
    } catch (error) {
      expect((error as PolError).code).toBe('POL_NO_AMBIENT_SPACE');
      expect((error as PolError).name).toBe('NoAmbientSpaceError');
    }
  });

  it('returns the fallback when nothing is bound, and the bound space when one is', () => {
    const space = countingSpace();
    expect(ambientspace(fallback)).toBe(fallback);
    withspace(space, () => {
      expect(ambientspace(fallback)).toBe(space);
      expect(ambientspace()).toBe(space);
    });
  });

  it('refuses a fallback that is not a space with NotASpaceError, bound or not', () => {
    expect(() => ambientspace({} as Space)).toThrow(NotASpaceError);
    expect(() => ambientspace(null as unknown as Space)).toThrow(/ambientspace\(fallback\) needs a space, got null/);
    const space = countingSpace();
    withspace(space, () => {
      expect(() => ambientspace(new Float32Array(1) as unknown as Space)).toThrow(NotASpaceError);
      expect(ambientspace()).toBe(space);
    });
  });

  it('takes a fallback passed as undefined for none (it reads no argument count, which would cost an object a call)', () => {
    expect(() => ambientspace(undefined as unknown as Space)).toThrow(NoAmbientSpaceError);
    const space = countingSpace();
    withspace(space, () => expect(ambientspace(undefined as unknown as Space)).toBe(space));
  });
});

describe('withspace (AsyncLocalStorage, the default on Node.js)', () => {
  it('the default store follows async callbacks', () => {
    expect(ambientIsAsync()).toBe(true);
  });

  it('binds the space for the callback’s extent and returns what it returns', () => {
    const space = countingSpace();
    expect(boundSpace()).toBeUndefined();
    const result = withspace(space, () => {
      expect(ambientspace()).toBe(space);
      return 42;
    });
    expect(result).toBe(42);
    expect(boundSpace()).toBeUndefined();
  });

  it('restores the outer binding after a throw', () => {
    const outer = countingSpace();
    const inner = countingSpace();
    withspace(outer, () => {
      expect(() =>
        withspace(inner, () => {
          throw new Error('boom');
        }),
      ).toThrow('boom');
      expect(ambientspace()).toBe(outer);
    });
    expect(boundSpace()).toBeUndefined();
  });

  it('nests: the innermost binding wins and the outer one comes back', () => {
    const a = countingSpace();
    const b = countingSpace();
    withspace(a, () => {
      withspace(b, () => {
        expect(ambientspace()).toBe(b);
      });
      expect(ambientspace()).toBe(a);
    });
  });

  it('the ambient spellings use the bound space', () => {
    const space = countingSpace();
    withspace(space, () => {
      alloc('float32', 2);
      alloc('int8', [3]);
    });
    expect(space.calls).toEqual([
      { dtype: 'float32', dims: [2] },
      { dtype: 'int8', dims: [3] },
    ]);
  });

  it('keeps the binding across await, and does not leak it to the caller', async () => {
    const space = countingSpace();
    const gate = deferred();
    const seen: (Space | undefined)[] = [];
    const done = withspace(space, async () => {
      seen.push(boundSpace());
      await gate.promise;
      seen.push(boundSpace());
      await macrotask();
      seen.push(boundSpace());
      return 'result';
    });
    expect(boundSpace()).toBeUndefined(); // the caller, while the callback is suspended
    gate.resolve();
    expect(await done).toBe('result');
    expect(seen).toEqual([space, space, space]);
    expect(boundSpace()).toBeUndefined();
  });

  it('nests across await', async () => {
    const a = countingSpace();
    const b = countingSpace();
    await withspace(a, async () => {
      await withspace(b, async () => {
        await macrotask();
        expect(ambientspace()).toBe(b);
      });
      expect(ambientspace()).toBe(a);
      await macrotask();
      expect(ambientspace()).toBe(a);
    });
  });

  it('gives concurrent async tasks each their own space, with interleaved awaits', async () => {
    const a = countingSpace();
    const b = countingSpace();
    const gateA = deferred();
    const gateB = deferred();
    const log: string[] = [];
    const name = (s: Space | undefined): string => (s === a ? 'a' : s === b ? 'b' : 'none');
    const taskA = withspace(a, async () => {
      log.push(`A1:${name(boundSpace())}`);
      await gateA.promise;
      log.push(`A2:${name(boundSpace())}`);
      alloc('float32', 1);
      await gateB.promise;
      log.push(`A3:${name(boundSpace())}`);
    });
    const taskB = withspace(b, async () => {
      log.push(`B1:${name(boundSpace())}`);
      await gateB.promise;
      log.push(`B2:${name(boundSpace())}`);
      alloc('int32', 2);
      await macrotask();
      log.push(`B3:${name(boundSpace())}`);
    });
    gateA.resolve();
    await macrotask();
    gateB.resolve();
    await Promise.all([taskA, taskB]);
    // Interleaved: B suspends before A resumes, B resumes before A's last step.
    expect(log).toEqual(['A1:a', 'B1:b', 'A2:a', 'B2:b', 'A3:a', 'B3:b']);
    expect(a.calls).toEqual([{ dtype: 'float32', dims: [1] }]);
    expect(b.calls).toEqual([{ dtype: 'int32', dims: [2] }]);
  });

  it('refuses a non-space with NotASpaceError, without running the callback or changing the binding', () => {
    const outer = countingSpace();
    let ran = false;
    withspace(outer, () => {
      expect(() =>
        withspace({} as Space, () => {
          ran = true;
        }),
      ).toThrow(NotASpaceError);
      expect(() => withspace(new Float32Array(1) as unknown as Space, () => {})).toThrow(
        /withspace needs a space, got a Float32Array/,
      );
      expect(ambientspace()).toBe(outer);
    });
    expect(ran).toBe(false);
  });

  it('refuses a callback that is not a function with InvalidArgumentError, binding unchanged', () => {
    const space = countingSpace();
    expect(() => withspace(space, 42 as unknown as () => void)).toThrow(InvalidArgumentError);
    expect(() => withspace(space, undefined as unknown as () => void)).toThrow(
      /withspace\(space, f\) needs a callback f, got undefined/,
    );
    expect(boundSpace()).toBeUndefined();
  });
});

describe('bindAmbient (withspace without its argument checks)', () => {
  it('calls f(arg) with the space bound, returns what f returns, and restores the binding after a return and a throw', () => {
    const outer = countingSpace();
    const space = countingSpace();
    withspace(outer, () => {
      expect(bindAmbient(space, (x: number) => (ambientspace() === space ? x * 2 : -1), 21)).toBe(42);
      expect(ambientspace()).toBe(outer);
      expect(() =>
        bindAmbient(space, () => {
          throw new Error('boom');
        }),
      ).toThrow('boom');
      expect(ambientspace()).toBe(outer);
    });
    expect(boundSpace()).toBeUndefined();
  });

  it('keeps the binding across await for an async callback', async () => {
    const space = countingSpace();
    const seen = await bindAmbient(space, async () => {
      await Promise.resolve();
      return ambientspace();
    });
    expect(seen).toBe(space);
    expect(boundSpace()).toBeUndefined();
  });

  it('on a store without async context, refuses an async callback before it runs, binding unchanged', () => {
    const previous = setAmbientStore(syncStore());
    try {
      let ran = false;
      expect(() =>
        bindAmbient(countingSpace(), async () => {
          ran = true;
        }),
      ).toThrow(AsyncScopeUnsupportedError);
      expect(ran).toBe(false);
      expect(boundSpace()).toBeUndefined();
    } finally {
      setAmbientStore(previous);
    }
  });
});

describe('contextStore', () => {
  it('works over a real AsyncLocalStorage', async () => {
    const previous = setAmbientStore(nodeContextStore());
    try {
      const space = countingSpace();
      await withspace(space, async () => {
        await macrotask();
        expect(ambientspace()).toBe(space);
      });
      expect(boundSpace()).toBeUndefined();
    } finally {
      setAmbientStore(previous);
    }
  });

  it('accepts the AsyncContext.Variable spelling (run + get)', () => {
    let current: Space | undefined;
    const variable = {
      run<R>(value: Space, f: () => R): R {
        const saved = current;
        current = value;
        try {
          return f();
        } finally {
          current = saved;
        }
      },
      get: () => current,
    };
    const store = contextStore(variable);
    expect(store.async).toBe(true);
    const space = countingSpace();
    expect(store.run(space, () => store.get())).toBe(space);
    expect(store.get()).toBeUndefined();
  });

  it('refuses an object that is not AsyncLocalStorage-like with InvalidArgumentError', () => {
    const bad = [{}, { run: () => undefined }, { getStore: () => undefined }, null, 3];
    for (const variable of bad) {
      expect(() => contextStore(variable as unknown as Parameters<typeof contextStore>[0])).toThrow(InvalidArgumentError);
    }
    expect(() => contextStore({} as unknown as Parameters<typeof contextStore>[0])).toThrow(/new AsyncLocalStorage\(\)/);
  });
});

describe('setAmbientStore', () => {
  it('swaps the store and returns the previous one', () => {
    const replacement = syncStore();
    const previous = setAmbientStore(replacement);
    try {
      expect(ambientIsAsync()).toBe(false);
    } finally {
      expect(setAmbientStore(previous)).toBe(replacement);
    }
    expect(ambientIsAsync()).toBe(true);
  });

  it('refuses something that is not a store with InvalidArgumentError, keeping the store it had', () => {
    const space = countingSpace();
    for (const bad of [{}, { async: true, run: () => undefined }, { run: () => undefined, get: () => undefined }, null]) {
      expect(() => setAmbientStore(bad as unknown as AmbientStore)).toThrow(InvalidArgumentError);
    }
    expect(() => setAmbientStore({} as AmbientStore)).toThrow(/contextStore\(new AsyncLocalStorage\(\)\) or syncStore\(\)/);
    expect(ambientIsAsync()).toBe(true);
    expect(withspace(space, () => ambientspace())).toBe(space);
  });
});

describe('the fallback store (no async context): syncStore', () => {
  let previous: AmbientStore;
  beforeEach(() => {
    previous = setAmbientStore(syncStore());
  });
  afterEach(() => {
    setAmbientStore(previous);
  });

  it('reports that it cannot follow async callbacks', () => {
    expect(ambientIsAsync()).toBe(false);
    expect(syncStore().async).toBe(false);
  });

  it('binds synchronous callbacks, nests, and restores after return and throw', () => {
    const a = countingSpace();
    const b = countingSpace();
    expect(boundSpace()).toBeUndefined();
    const result = withspace(a, () => {
      expect(ambientspace()).toBe(a);
      withspace(b, () => {
        expect(ambientspace()).toBe(b);
      });
      expect(() =>
        withspace(b, () => {
          throw new Error('boom');
        }),
      ).toThrow('boom');
      expect(ambientspace()).toBe(a);
      alloc('uint8', 4);
      return 'ok';
    });
    expect(result).toBe('ok');
    expect(a.calls).toEqual([{ dtype: 'uint8', dims: [4] }]);
    expect(boundSpace()).toBeUndefined();
  });

  it('refuses an async function before it runs, with AsyncScopeUnsupportedError saying what to do (a rejected promise, as its own failures are)', async () => {
    const outer = countingSpace();
    const space = countingSpace();
    let ran = false;
    let refused: Promise<void> | undefined;
    withspace(outer, () => {
      refused = withspace(space, async () => {
        ran = true;
      });
      expect(ambientspace()).toBe(outer);
    });
    await expect(refused).rejects.toThrow(AsyncScopeUnsupportedError);
    expect(ran).toBe(false);
    try {
      await withspace(space, async () => {
        ran = true;
      });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(AsyncScopeUnsupportedError);
      expect((error as PolError).code).toBe('POL_ASYNC_SCOPE_UNSUPPORTED');
      expect((error as PolError).message).toMatch(/no AsyncLocalStorage or AsyncContext/);
      expect((error as PolError).message).toMatch(/Pass the space \(or frame\) to the async code explicitly/);
    }
    expect(ran).toBe(false);
  });

  it('refuses async methods and async function expressions too', async () => {
    let ran = 0;
    const holder = {
      async method(): Promise<void> {
        ran++;
      },
    };
    await expect(withspace(fallback, holder.method)).rejects.toThrow(AsyncScopeUnsupportedError);
    await expect(
      withspace(fallback, async function named() {
        ran++;
      }),
    ).rejects.toThrow(AsyncScopeUnsupportedError);
    expect(ran).toBe(0);
  });

  it('refuses a plain function that returns a promise, restoring the binding (never leaked into its continuation)', async () => {
    const outer = countingSpace();
    const space = countingSpace();
    const gate = deferred();
    let inside: Space | undefined;
    let continuation: Space | undefined | 'unset' = 'unset';
    withspace(outer, () => {
      expect(() =>
        withspace(space, () => {
          inside = boundSpace();
          return gate.promise.then(() => {
            continuation = boundSpace();
          });
        }),
      ).toThrow(AsyncScopeUnsupportedError);
      expect(ambientspace()).toBe(outer);
    });
    expect(boundSpace()).toBeUndefined();
    gate.resolve();
    await macrotask();
    expect(inside).toBe(space);
    expect(continuation).toBeUndefined();
  });

  it('a refused promise that later rejects is not an unhandled rejection', async () => {
    const seen = await unhandledRejectionsDuring(() => {
      expect(() => withspace(fallback, () => Promise.reject(new Error('late failure')))).toThrow(AsyncScopeUnsupportedError);
    });
    expect(seen).toEqual([]);
  });

  it('scratchspace refuses an async callback before opening a frame or running it', async () => {
    const base = countingSpace();
    let opened = 0;
    const space: Space<'host'> = {
      [spaceKey]: 'host',
      alloc: (dtype, dims) => base.alloc(dtype, dims),
      [openFrameKey]() {
        opened++;
        return scopeFrame(space);
      },
    };
    let ran = false;
    await expect(
      scratchspace(space, async () => {
        ran = true;
      }),
    ).rejects.toThrow(AsyncScopeUnsupportedError);
    let ambient: Promise<void> | undefined;
    withspace(space, () => {
      ambient = scratchspace(async () => {
        ran = true;
      });
      expect(ambientspace()).toBe(space);
    });
    await expect(ambient).rejects.toThrow(AsyncScopeUnsupportedError);
    expect(ran).toBe(false);
    expect(opened).toBe(0);
  });

  it('scratchspace refuses a plain callback returning a promise, and closes the frame it opened', async () => {
    let frameSeen: unknown;
    const seen = await unhandledRejectionsDuring(() => {
      expect(() =>
        scratchspace(fallback, (frame) => {
          frameSeen = frame;
          return Promise.reject(new Error('late'));
        }),
      ).toThrow(AsyncScopeUnsupportedError);
    });
    expect(seen).toEqual([]);
    expect(isFrame(frameSeen) && !frameSeen.isOpen).toBe(true);
    expect(boundSpace()).toBeUndefined();
  });

  it('syncStore works on its own: run binds, get reads, nothing outlives run', () => {
    const store = syncStore();
    const space = countingSpace();
    expect(store.get()).toBeUndefined();
    expect(store.run(space, () => store.get())).toBe(space);
    expect(store.get()).toBeUndefined();
    expect(() => store.run(space, async () => {})).toThrow(AsyncScopeUnsupportedError);
  });
});

describe('lazyContextStore: a synchronous stack until the first async callback', () => {
  let previous: AmbientStore;
  let made: number;
  let store: AmbientStore;
  beforeEach(() => {
    made = 0;
    store = lazyContextStore(() => {
      made++;
      return nodeContextVariable();
    });
    previous = setAmbientStore(store);
  });
  afterEach(() => {
    setAmbientStore(previous);
  });

  it('never makes the context variable for synchronous bindings, however many and however nested', () => {
    const a = countingSpace();
    const b = countingSpace();
    withspace(a, () => {
      withspace(b, () => {
        expect(ambientspace()).toBe(b);
        alloc('float32', 2);
      });
      scratchspace((frame) => {
        expect(ambientspace()).toBe(frame);
        expect(frame.parent).toBe(a);
      });
      expect(ambientspace()).toBe(a);
    });
    expect(boundSpace()).toBeUndefined();
    expect(made).toBe(0);
    expect(store.engaged).toBe(false);
    expect(store.async).toBe(true);
    expect(ambientIsAsync()).toBe(true);
  });

  it('engages on the first async callback, before it runs, and keeps its binding across await', async () => {
    const space = countingSpace();
    const seen: (Space | undefined)[] = [];
    const done = withspace(space, async () => {
      seen.push(boundSpace());
      await macrotask();
      seen.push(boundSpace());
    });
    expect(made).toBe(1);
    expect(store.engaged).toBe(true);
    expect(boundSpace()).toBeUndefined();
    await done;
    expect(seen).toEqual([space, space]);
    withspace(space, () => {});
    await withspace(space, async () => {});
    expect(made).toBe(1);
  });

  it('engages for an async scratchspace callback too (the frame is bound with the callback’s own async-ness)', async () => {
    const space = countingSpace();
    await scratchspace(space, async (frame) => {
      await macrotask();
      expect(ambientspace()).toBe(frame);
    });
    expect(store.engaged).toBe(true);
  });

  it('once engaged, a synchronous binding inside an async one is right, and the async one is right again across its awaits', async () => {
    const outer = countingSpace();
    const inner = countingSpace();
    await withspace(outer, async () => {
      await macrotask();
      withspace(inner, () => {
        expect(ambientspace()).toBe(inner);
      });
      expect(ambientspace()).toBe(outer);
      await macrotask();
      expect(ambientspace()).toBe(outer);
      const nested = withspace(inner, () => Promise.resolve().then(() => boundSpace())); // a plain callback, engaged
      expect(await nested).toBe(inner);
      expect(ambientspace()).toBe(outer);
    });
  });

  it('an async binding made inside a synchronous one made before engagement is the inner one, in and after its awaits', async () => {
    const outer = countingSpace();
    const inner = countingSpace();
    const log: string[] = [];
    const name = (s: Space | undefined) => (s === outer ? 'outer' : s === inner ? 'inner' : 'none');
    let task: Promise<void> | undefined;
    withspace(outer, () => {
      task = withspace(inner, async () => {
        log.push(`sync part: ${name(boundSpace())}`);
        await macrotask();
        log.push(`after await: ${name(boundSpace())}`);
      });
      log.push(`back in outer: ${name(boundSpace())}`);
    });
    log.push(`unbound: ${name(boundSpace())}`);
    await task;
    expect(log).toEqual(['sync part: inner', 'back in outer: outer', 'unbound: none', 'after await: inner']);
  });

  it('before engagement, a plain callback that returns a promise keeps its binding for its synchronous part only: its continuations see no binding, never an outer one', async () => {
    const outer = countingSpace();
    const inner = countingSpace();
    const fallbackSpace = countingSpace();
    const seen: (Space | undefined)[] = [];
    let caught: unknown;
    async function main(): Promise<void> {
      seen.push(boundSpace());
      await macrotask();
      seen.push(boundSpace());
      expect(ambientspace(fallbackSpace)).toBe(fallbackSpace);
      try {
        ambientspace();
      } catch (error) {
        caught = error;
      }
    }
    let done: Promise<void> | undefined;
    withspace(outer, () => {
      done = withspace(inner, () => main());
    });
    await done;
    expect(seen).toEqual([inner, undefined]);
    expect(caught).toBeInstanceOf(NoAmbientSpaceError);
    expect((caught as Error).message).toMatch(
      /declare the callback async \(async \(\) => \.\.\.\): only an async callback keeps its binding across await/,
    );
    expect(store.engaged).toBe(false);
  });

  it('before engagement, scratchspace(space, (frame) => doAsync(frame)) keeps working: the frame closes when the promise settles', async () => {
    const space = countingSpace();
    let frameSeen: Frame | undefined;
    const gate = deferred();
    const done = scratchspace(space, (frame) => {
      frameSeen = frame;
      return (async () => {
        await gate.promise;
        alloc(frame, 'float32', 1);
        return 'ok';
      })();
    });
    expect(frameSeen?.isOpen).toBe(true);
    gate.resolve();
    expect(await done).toBe('ok');
    expect(frameSeen?.isOpen).toBe(false);
    expect(space.calls).toEqual([{ dtype: 'float32', dims: [1] }]);
    expect(store.engaged).toBe(false);
  });

  it('after engagement, a plain callback that returns a promise keeps its binding across await', async () => {
    await withspace(countingSpace(), async () => {}); // engages
    const space = countingSpace();
    const done = withspace(space, () =>
      (async () => {
        await macrotask();
        return boundSpace();
      })(),
    );
    expect(await done).toBe(space);
  });

  it('describing an async kernel engages the store: code may bind a frame with a plain callback that calls the kernel', async () => {
    const syncKernel = (out: { y: HostArray<'float32'> }) => void out;
    outputs.define(syncKernel, () => ({ y: Undef('float32', 1) }));
    describeKernel(function plain(_out: object) {}, { scratch: () => ({}) });
    expect(store.engaged).toBe(false);
    const frames: (Space | undefined)[] = [];
    const asyncKernel = describeKernel(
      async function asyncKernel(_out: object): Promise<void> {
        await macrotask();
        frames.push(boundSpace());
      },
      { outputs: () => ({}) },
    );
    expect(store.engaged).toBe(true);
    const space = countingSpace();
    // A plain callback around the kernel, bound to the frame.
    await scratchspace(space, (frame) => asyncKernel(frame));
    await withspace(space, () => asyncKernel({}));
    expect(frames[0] !== undefined && isFrame(frames[0])).toBe(true);
    expect(frames[1]).toBe(space);
  });

  it('refuses a create that is not a function, and stays unengaged when create makes something unusable', () => {
    expect(() => lazyContextStore(undefined as never)).toThrow(InvalidArgumentError);
    expect(() => lazyContextStore(new AsyncLocalStorageLike() as never)).toThrow(/lazyContextStore\(create\) takes a function/);
    const broken = lazyContextStore(() => ({}) as never);
    const space = countingSpace();
    expect(() => broken.run(space, async () => {})).toThrow(/lazyContextStore\(create\) needs an AsyncLocalStorage-like object/);
    expect(broken.engaged).toBe(false);
    expect(broken.run(space, () => broken.get())).toBe(space);
  });
});

/** Something that is not a function, for the bad-input test above. */
class AsyncLocalStorageLike {}
