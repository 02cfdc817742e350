// Internal: what the ambient stores share. The async-context variable a store may run its bindings
// through (Node.js's AsyncLocalStorage, TC39's AsyncContext.Variable), read and checked once; the
// test for an async callback, known before it runs; and the refusal of one where the runtime has
// no such variable.

import { AsyncScopeUnsupportedError, InvalidArgumentError } from './errors.js';
import type { Space } from './space.js';
import { describeValue } from './value.js';

/** An AsyncLocalStorage-like object: `run` and `getStore`, or `run` and `get` as AsyncContext spells it. */
export interface ContextVariable {
  run<R>(value: Space, f: () => R): R;
  getStore?(): Space | undefined;
  get?(): Space | undefined;
}

/** The reader of a checked context variable. */
export function readerOf(variable: ContextVariable, what: string): () => Space | undefined {
  const v: unknown = variable;
  const methods = typeof v === 'object' && v !== null ? (v as Partial<Record<'run' | 'getStore' | 'get', unknown>>) : {};
  if (typeof methods.run !== 'function' || (typeof methods.getStore !== 'function' && typeof methods.get !== 'function')) {
    throw new InvalidArgumentError(
      `${what} needs an AsyncLocalStorage-like object with run(value, f) and getStore() (or get()), got ${describeValue(v)}. ` +
        "Pass new AsyncLocalStorage() from 'node:async_hooks', or new AsyncContext.Variable().",
    );
  }
  return typeof methods.getStore === 'function' ? () => variable.getStore?.() : () => variable.get?.();
}

// Apart from the stores' run methods: a closure over f and arg there would make a context object
// on every call, the synchronous ones included.
export function runThrough<A, R>(variable: ContextVariable, space: Space, f: (arg: A) => R, arg: A): R {
  return variable.run(space, () => f(arg));
}

const AsyncFunction = (async () => {}).constructor;

/**
 * Whether `f` is an `async` function (an async arrow or method too): known before it runs, unlike
 * a promise it returns. A binding that must follow `f` across `await` needs to know this first.
 *
 * @example
 * ```ts
 * import { isAsyncFunction } from '@pol/core/backend';
 * console.log(isAsyncFunction(async () => {}), isAsyncFunction(() => Promise.resolve())); // true false
 * ```
 */
export function isAsyncFunction(f: unknown): boolean {
  return f instanceof AsyncFunction;
}

/**
 * A refusal of a call that takes callback `f`, made before `f` runs: thrown for a synchronous `f`,
 * and returned as a rejected promise for an `async` one, so that a caller who awaits the call (or
 * gathers it in `Promise.all`) sees it the way it sees every other failure of that call.
 */
export function refuseFor(f: unknown, error: unknown): Promise<never> {
  if (isAsyncFunction(f)) return Promise.reject(error);
  throw error;
}

/** The refusal of an async callback (or a promise returned) where bindings cannot follow `await`. */
export function asyncUnsupported(): AsyncScopeUnsupportedError {
  return new AsyncScopeUnsupportedError(
    'This runtime has no AsyncLocalStorage or AsyncContext, so an ambient space cannot follow an async callback across await. ' +
      'Pass the space (or frame) to the async code explicitly, e.g. alloc(frame, ...) or verb(space, ...), and keep withspace/scratchspace callbacks synchronous.',
  );
}
