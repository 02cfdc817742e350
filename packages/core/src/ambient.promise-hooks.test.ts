// The default ambient store on this runtime, observed from outside: whether Node.js's promise hooks
// are on. With them on (AsyncLocalStorage on async hooks, Node.js 20 and 22), every `await` in the
// process pays for them; `executionAsyncId()` in an `await` continuation is 0 exactly while they
// are off. Vitest runs each test file in its own process, so this file starts with them off, and
// its tests run in order.
import { AsyncLocalStorage, executionAsyncId } from 'node:async_hooks';
import { describe, expect, it } from 'vitest';
import { ambientStore } from './ambient.js';
import { alloc, ambientspace, Similar, scratchspace, withspace } from './index.js';

/** Whether promise hooks are on: an `await` continuation then runs with an async id. */
async function promiseHooksOn(): Promise<boolean> {
  await null;
  return executionAsyncId() !== 0;
}

// Node.js's AsyncLocalStorage built on async hooks (20, 22; 24 with --no-async-context-frame).
const hooksBased = typeof (AsyncLocalStorage.prototype as { _enable?: unknown })._enable === 'function';

describe('the default store and promise hooks', () => {
  it('starts with promise hooks off', async () => {
    expect(await promiseHooksOn()).toBe(false);
  });

  it('is lazy: nothing engaged before the first async callback', () => {
    expect(ambientStore().engaged).toBe(false);
  });

  it('a program that only binds synchronously never switches promise hooks on', async () => {
    const space = Similar(new Float32Array(0));
    for (let i = 0; i < 3; i++) {
      withspace(space, () => {
        alloc('float32', 4);
        scratchspace((frame) => {
          alloc(frame, 'int8', 2);
          expect(ambientspace()).toBe(frame);
        });
      });
      scratchspace(space, (frame) => alloc(frame, 'float64', 1));
      await null;
    }
    expect(await promiseHooksOn()).toBe(false);
    expect(ambientStore().engaged).toBe(false);
  });

  it('the first async callback engages the store, and its binding holds across await', async () => {
    const space = Similar(new Float32Array(0));
    const seen = await withspace(space, async () => {
      await null;
      return ambientspace();
    });
    expect(seen).toBe(space);
    expect(ambientStore().engaged).toBe(true);
    // Where AsyncLocalStorage is built on async hooks, engaging it is what switches them on.
    expect(await promiseHooksOn()).toBe(hooksBased);
  });
});
