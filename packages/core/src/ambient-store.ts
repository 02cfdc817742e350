// What an ambient store is (AmbientStore), and what binds without a callback (AmbientBinder): the
// two interfaces between core's binding functions and the stores behind them.

import type { Space } from './space.js';

/**
 * Where the ambient space lives. Three implementations: `contextStore`, over an async-context
 * variable (AsyncLocalStorage, TC39 AsyncContext), which carries bindings across `await`;
 * `lazyContextStore`, a synchronous stack that engages such a variable only once an async
 * callback is bound (the default wherever there is such a variable: on Node.js 20 and 22
 * AsyncLocalStorage taxes every `await` in the process once it runs); and `syncStore`, a synchronous stack for runtimes with no async
 * context, which refuses async callbacks rather than letting their continuations see a wrong
 * binding.
 *
 * `run(space, f, arg)` calls `f(arg)` with `space` bound and returns what it returns (passing
 * `arg` through saves callers a closure per call: `scratchspace` passes its frame); `get()` reads
 * the innermost binding. A store of your own must call `f(arg)`, not `f()`.
 *
 * @example
 * ```ts
 * import { type AmbientStore, setAmbientStore, syncStore } from '@pol/core/backend';
 * const store: AmbientStore = syncStore();
 * console.log(store.async, store.engaged); // false false: a synchronous stack
 * const previous = setAmbientStore(store);
 * setAmbientStore(previous); // put the runtime's own store back
 * ```
 */
export interface AmbientStore {
  /** Whether bindings of async callbacks survive `await` inside them. */
  readonly async: boolean;
  /**
   * Whether an async-context variable is in use: always for `contextStore`, never for
   * `syncStore`, and for `lazyContextStore` from the first async callback on.
   */
  readonly engaged?: boolean;
  /**
   * Engage the async-context variable now, for a store that engages lazily: for code that will
   * run an async function under a binding through a plain callback (`describe` calls it for an
   * async kernel, which code may call that way).
   */
  engage?(): void;
  run<A, R>(space: Space, f: (arg: A) => R, arg?: A): R;
  get(): Space | undefined;
}

/**
 * Binding the ambient space without a callback: `enter(space)` binds `space` and returns a token,
 * and `leave(token)`, in a `finally`, restores the binding that was there before, exactly as
 * `bindAmbient(space, f)` does around `f`. For a function known not to be `async` (an async one
 * must go through `bindAmbient`, which engages the async-context variable for it); call
 * `checkResult` with what it returned, after `leave`. `ambientBinder` gives one while the
 * ambient store binds synchronously.
 *
 * @example
 * ```ts
 * import { ambientspace, Similar } from '@pol/core';
 * import { type AmbientBinder, ambientBinder, bindAmbient } from '@pol/core/backend';
 * const space = Similar(new Float32Array(0));
 * const read = () => ambientspace() === space;
 * const binder: AmbientBinder | undefined = ambientBinder();
 * let bound: boolean;
 * if (binder === undefined) bound = bindAmbient(space, read);
 * else {
 *   const token = binder.enter(space);
 *   try {
 *     bound = read();
 *   } finally {
 *     binder.leave(token);
 *   }
 *   binder.checkResult(bound);
 * }
 * console.log(bound); // true
 * ```
 */
export interface AmbientBinder {
  /** Bind `space`; the token restores the binding before it. */
  enter(space: Space): unknown;
  /** Restore the binding from before the `enter` that gave `token`. */
  leave(token: unknown): void;
  /**
   * What `bindAmbient` does with its callback's result: on a store that cannot follow `await`
   * (syncStore), a promise is refused with AsyncScopeUnsupportedError (its rejection handled), since
   * its continuation would run unbound.
   */
  checkResult(result: unknown): void;
}
