import { AsyncScopeUnsupportedError, InvalidArgumentError, NoAmbientSpaceError } from './errors.js';
import { assertSpace, type Space } from './space.js';
import { describeValue, isThenable } from './value.js';

/**
 * Where the ambient space lives. Two implementations: one over an async-context store
 * (AsyncLocalStorage on Node.js, Deno and Bun; TC39 AsyncContext where a runtime ships it), which
 * carries the binding across `await`; and a synchronous stack for runtimes without one, which
 * refuses async callbacks rather than letting their continuations see a wrong binding.
 *
 * @example
 * ```ts
 * import { type AmbientStore, setAmbientStore, syncStore } from '@pol/core';
 * const store: AmbientStore = syncStore();
 * console.log(store.async); // false: a synchronous stack
 * const previous = setAmbientStore(store);
 * setAmbientStore(previous); // put the runtime's own store back
 * ```
 */
export interface AmbientStore {
  /** Whether bindings survive `await` inside the callback. */
  readonly async: boolean;
  run<R>(space: Space, f: () => R): R;
  get(): Space | undefined;
}

interface ContextVariable {
  run<R>(value: Space, f: () => R): R;
  getStore?(): Space | undefined;
  get?(): Space | undefined;
}

/**
 * An ambient store over an AsyncLocalStorage-like object (`run` + `getStore`, or `run` + `get` as
 * TC39's `AsyncContext.Variable` spells it), for hosts that bring their own async context.
 *
 * @throws {InvalidArgumentError} when `variable` has no `run` method, or neither `getStore` nor `get`.
 * @example
 * ```ts
 * import { AsyncLocalStorage } from 'node:async_hooks';
 * import { contextStore, setAmbientStore } from '@pol/core';
 * setAmbientStore(contextStore(new AsyncLocalStorage()));
 * ```
 */
export function contextStore(variable: ContextVariable): AmbientStore {
  const v: unknown = variable;
  const methods = typeof v === 'object' && v !== null ? (v as Partial<Record<'run' | 'getStore' | 'get', unknown>>) : {};
  if (typeof methods.run !== 'function' || (typeof methods.getStore !== 'function' && typeof methods.get !== 'function')) {
    throw new InvalidArgumentError(
      `contextStore needs an AsyncLocalStorage-like object with run(value, f) and getStore() (or get()), got ${describeValue(v)}. ` +
        "Pass new AsyncLocalStorage() from 'node:async_hooks', or new AsyncContext.Variable().",
    );
  }
  const read = typeof methods.getStore === 'function' ? () => variable.getStore?.() : () => variable.get?.();
  return { async: true, run: (space, f) => variable.run(space, f), get: read };
}

const AsyncFunction = (async () => {}).constructor;

/** Whether `f` is an `async` function (or async arrow, or async method): known before it runs. */
function isAsyncFunction(f: unknown): boolean {
  return f instanceof AsyncFunction;
}

/** An ambient store for runtimes with no async context: a synchronous stack that refuses async callbacks. */
export function syncStore(): AmbientStore {
  let current: Space | undefined;
  return {
    async: false,
    run<R>(space: Space, f: () => R): R {
      if (isAsyncFunction(f)) throw asyncUnsupported();
      const saved = current;
      current = space;
      let result: R;
      try {
        result = f();
      } finally {
        current = saved;
      }
      if (isThenable(result)) {
        // The binding is already restored, so nothing leaks; but the callback's continuation would
        // run unbound. Refuse, and keep its eventual rejection from going unhandled.
        (result as PromiseLike<unknown>).then(undefined, () => {});
        throw asyncUnsupported();
      }
      return result;
    },
    get: () => current,
  };
}

function asyncUnsupported(): AsyncScopeUnsupportedError {
  return new AsyncScopeUnsupportedError(
    'This runtime has no AsyncLocalStorage or AsyncContext, so an ambient space cannot follow an async callback across await. ' +
      'Pass the space (or frame) to the async code explicitly, e.g. alloc(frame, ...) or verb(space, ...), and keep withspace/scratchspace callbacks synchronous.',
  );
}

function detectStore(): AmbientStore {
  const g = globalThis as {
    process?: { getBuiltinModule?: (id: string) => unknown };
    AsyncContext?: { Variable?: new () => ContextVariable };
  };
  try {
    const hooks = g.process?.getBuiltinModule?.('node:async_hooks') as
      | { AsyncLocalStorage?: new () => ContextVariable }
      | undefined;
    if (hooks?.AsyncLocalStorage !== undefined) return contextStore(new hooks.AsyncLocalStorage());
  } catch {
    // A runtime that exposes getBuiltinModule but refuses the module: fall through.
  }
  if (g.AsyncContext?.Variable !== undefined) return contextStore(new g.AsyncContext.Variable());
  return syncStore();
}

let store: AmbientStore = detectStore();

/**
 * Replace the ambient store, returning the previous one. For tests of the no-async-context path and
 * for hosts that provide their own async context; not needed in ordinary use.
 *
 * @throws {InvalidArgumentError} when `next` is not an AmbientStore (the store is left as it was).
 * @example
 * ```ts
 * import { setAmbientStore, syncStore } from '@pol/core';
 * const previous = setAmbientStore(syncStore());
 * setAmbientStore(previous);
 * ```
 */
export function setAmbientStore(next: AmbientStore): AmbientStore {
  const n: unknown = next;
  const fields = typeof n === 'object' && n !== null ? (n as Partial<Record<keyof AmbientStore, unknown>>) : {};
  if (typeof fields.run !== 'function' || typeof fields.get !== 'function' || typeof fields.async !== 'boolean') {
    throw new InvalidArgumentError(
      `setAmbientStore needs an AmbientStore ({ async, run, get }), got ${describeValue(n)}. ` +
        'Build one with contextStore(new AsyncLocalStorage()) or syncStore().',
    );
  }
  const previous = store;
  store = next;
  return previous;
}

/**
 * Whether the ambient space follows async callbacks across `await` on this runtime.
 *
 * @example
 * ```ts
 * import { ambientIsAsync } from '@pol/core';
 * console.log(ambientIsAsync()); // true: on Node.js, Deno and Bun (AsyncLocalStorage)
 * ```
 */
export function ambientIsAsync(): boolean {
  return store.async;
}

/**
 * Call `f()` with `space` as the ambient space for its dynamic extent, and return what it returns.
 * Inside, `ambientspace()` answers `space`, and every ambient spelling (`alloc(dtype, dims)`,
 * `scratchspace(f)`, a verb called without a space) uses it. An async `f` keeps the binding across
 * `await` where the runtime has AsyncLocalStorage; elsewhere it is refused with
 * {@link AsyncScopeUnsupportedError}.
 *
 * @throws {NotASpaceError} when `space` is not a space.
 * @throws {InvalidArgumentError} when `f` is not a function.
 * @throws {AsyncScopeUnsupportedError} on a runtime without async context, for an `async` `f`
 * (before it runs) or an `f` that returns a promise (the binding is restored either way).
 * @example
 * ```ts
 * import { withspace, ambientspace, Similar } from '@pol/core';
 * const space = Similar(new Float32Array(1));
 * withspace(space, () => ambientspace() === space); // true
 * ```
 */
export function withspace<R>(space: Space, f: () => R): R {
  assertSpace(space, 'withspace');
  if (typeof f !== 'function') {
    throw new InvalidArgumentError(
      `withspace(space, f) needs a callback f, got ${describeValue(f)}. Pass () => { ... }, which runs with space as the ambient space.`,
    );
  }
  assertCallbackSupported(f);
  return store.run(space, f);
}

/**
 * Refuse an `async` callback, before it runs, when the ambient store cannot follow it across
 * `await`. Internal: `withspace` and `scratchspace` call it before binding anything.
 */
export function assertCallbackSupported(f: unknown): void {
  if (!store.async && isAsyncFunction(f)) throw asyncUnsupported();
}

/**
 * The ambient space: the one bound by the nearest enclosing `withspace` or `scratchspace` block.
 * The zero-argument form throws when none is bound; `ambientspace(fallback)` returns the fallback
 * instead, the form for a kernel's default space that must also work unscoped.
 *
 * @throws {NoAmbientSpaceError} (zero-argument form) when no space is bound.
 * @throws {NotASpaceError} when a fallback is given that is not a space.
 * @example
 * ```ts
 * import { ambientspace, Similar } from '@pol/core';
 * const x = new Float32Array(4);
 * const space = ambientspace(Similar(x)); // Similar(x) unless a block binds another
 * ```
 */
export function ambientspace(): Space;
export function ambientspace<S extends Space>(fallback: S): Space | S;
export function ambientspace(...args: [] | [Space]): Space {
  const bound = store.get();
  if (args.length === 0) {
    if (bound === undefined) {
      throw new NoAmbientSpaceError(
        'ambientspace() was called with no space bound. Wrap the call in withspace(space, () => ...) or scratchspace(space, (frame) => ...), ' +
          'pass the space explicitly, or use ambientspace(fallback) to name a default.',
      );
    }
    return bound;
  }
  const fallback = args[0];
  assertSpace(fallback, 'ambientspace(fallback)');
  return bound ?? fallback;
}
