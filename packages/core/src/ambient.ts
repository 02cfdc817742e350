import type { AmbientBinder, AmbientStore } from './ambient-store.js';
import { asyncUnsupported, type ContextVariable, isAsyncFunction, readerOf, refuseFor, runThrough } from './context-variable.js';
import { InvalidArgumentError, NoAmbientSpaceError } from './errors.js';
import { assertSpace, type Space } from './space.js';
import { binderOf, lazyContextStore, syncStore } from './stack-store.js';
import { describeValue } from './value.js';

export type { AmbientBinder, AmbientStore };
export { lazyContextStore, syncStore };

/**
 * An ambient store over an AsyncLocalStorage-like object (`run` + `getStore`, or `run` + `get` as
 * TC39's `AsyncContext.Variable` spells it), for hosts that bring their own async context. Every
 * binding goes through the variable.
 *
 * @throws {InvalidArgumentError} when `variable` has no `run` method, or neither `getStore` nor `get`.
 * @example
 * ```ts
 * import { AsyncLocalStorage } from 'node:async_hooks';
 * import { contextStore, setAmbientStore } from '@pol/core/backend';
 * const previous = setAmbientStore(contextStore(new AsyncLocalStorage()));
 * setAmbientStore(previous);
 * ```
 */
export function contextStore(variable: ContextVariable): AmbientStore {
  const read = readerOf(variable, 'contextStore');
  return { async: true, engaged: true, run: (space, f, arg) => runThrough(variable, space, f, arg as never), get: read };
}

function detectStore(): AmbientStore {
  const g = globalThis as {
    process?: { getBuiltinModule?: (id: string) => unknown };
    AsyncContext?: { Variable?: new () => ContextVariable };
  };
  let Variable: (new () => ContextVariable) | undefined = g.AsyncContext?.Variable;
  if (Variable === undefined) {
    try {
      Variable = (
        g.process?.getBuiltinModule?.('node:async_hooks') as { AsyncLocalStorage?: new () => ContextVariable } | undefined
      )?.AsyncLocalStorage;
    } catch {
      // A runtime that exposes getBuiltinModule but refuses the module: fall through.
    }
  }
  if (Variable === undefined) return syncStore();
  const Made = Variable;
  return lazyContextStore(() => new Made());
}

let store: AmbientStore = detectStore();

/**
 * Replace the ambient store, returning the previous one. For tests of the no-async-context path and
 * for hosts that provide their own async context; not needed in ordinary use.
 *
 * @throws {InvalidArgumentError} when `next` is not an AmbientStore (the store is left as it was).
 * @example
 * ```ts
 * import { setAmbientStore, syncStore } from '@pol/core/backend';
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
 * Engage the store's async-context variable now if `f` is an async function that may run under
 * a binding made by a plain callback (an async kernel). Internal: `describe` calls it.
 */
export function engageFor(f: unknown): void {
  if (isAsyncFunction(f)) store.engage?.();
}

/** The store in use (for `scratchspace`, which binds its frame through it). */
export function ambientStore(): AmbientStore {
  return store;
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
 * `AsyncScopeUnsupportedError`.
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
  try {
    assertSpace(space, 'withspace');
    if (typeof f !== 'function') {
      throw new InvalidArgumentError(
        `withspace(space, f) needs a callback f, got ${describeValue(f)}. Pass () => { ... }, which runs with space as the ambient space.`,
      );
    }
    assertCallbackSupported(f);
  } catch (error) {
    // An async f's refusal is a rejected promise, as its own failures are.
    return refuseFor(f, error) as R;
  }
  return store.run(space, f, undefined);
}

/**
 * Call `f(arg)` with `space` as the ambient space, as `withspace(space, () => f(arg))` would, without
 * `withspace`'s argument checks and without a closure: for code that binds a space it already knows
 * is one, with a function of its own, on every call of a hot path (a verb binding its frame around
 * its kernel). The store still refuses an async `f` on a runtime without async context.
 *
 * @throws {AsyncScopeUnsupportedError} on a runtime without async context, for an `async` `f` or an
 * `f` that returns a promise (the binding is restored either way).
 * @example
 * ```ts
 * import { ambientspace, Similar } from '@pol/core';
 * import { bindAmbient } from '@pol/core/backend';
 * const space = Similar(new Float32Array(0));
 * console.log(bindAmbient(space, (s) => ambientspace() === s, space)); // true
 * ```
 */
export function bindAmbient<R>(space: Space, f: () => R): R;
export function bindAmbient<A, R>(space: Space, f: (arg: A) => R, arg: A): R;
export function bindAmbient<A, R>(space: Space, f: (arg?: A) => R, arg?: A): R {
  return store.run(space, f, arg);
}

/**
 * The ambient store as an {@link AmbientBinder}, which binds a space without a callback, when it
 * can: core's own stores (the runtime's default, `lazyContextStore`, `syncStore`) while no
 * async-context variable is engaged, that is while every binding is synchronous. Otherwise
 * (an engaged store, a store of your own) undefined: bind with `bindAmbient` then. Ask on every
 * call, not once: the store can be engaged or replaced in between.
 *
 * @example
 * ```ts
 * import { ambientspace, Similar } from '@pol/core';
 * import { ambientBinder } from '@pol/core/backend';
 * const space = Similar(new Float32Array(0));
 * const binder = ambientBinder();
 * if (binder !== undefined) {
 *   const token = binder.enter(space);
 *   try {
 *     console.log(ambientspace() === space); // true
 *   } finally {
 *     binder.leave(token);
 *   }
 * }
 * ```
 */
export function ambientBinder(): AmbientBinder | undefined {
  return binderOf(store);
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
export function ambientspace(fallback?: Space): Space {
  const bound = store.get();
  // No `arguments` (see alloc): a fallback passed as undefined counts as none.
  if (fallback === undefined) {
    if (bound === undefined) {
      throw new NoAmbientSpaceError(
        'ambientspace() was called with no space bound. Wrap the call in withspace(space, () => ...) or scratchspace(space, (frame) => ...), ' +
          'pass the space explicitly, or use ambientspace(fallback) to name a default. If this runs after an await inside such a callback, ' +
          'declare the callback async (async () => ...): only an async callback keeps its binding across await.',
      );
    }
    return bound;
  }
  assertSpace(fallback, 'ambientspace(fallback)');
  return bound ?? fallback;
}
