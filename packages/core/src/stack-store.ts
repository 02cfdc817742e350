// Internal: core's synchronous ambient stack, under lazyContextStore (which engages an
// async-context variable for the first async callback) and syncStore (which refuses async
// callbacks). It also binds without a callback (AmbientBinder), for hot paths that bind a space
// around a synchronous call on every call (a verb binding its frame around its kernel): a callback
// there is an indirect call, and a closure per call when the callee takes arguments.

import type { AmbientBinder, AmbientStore } from './ambient-store.js';
import { asyncUnsupported, type ContextVariable, isAsyncFunction, readerOf, runThrough } from './context-variable.js';
import { InvalidArgumentError } from './errors.js';
import type { Space } from './space.js';
import { describeValue, isThenable } from './value.js';

/**
 * An ambient store that costs nothing until it is needed: a synchronous stack serves every
 * binding until the first `async` callback is bound (known before it runs: `f instanceof
 * AsyncFunction`); that binding, and every binding after it, goes through the variable that
 * `create` makes then, so async callbacks keep their binding across `await`, and a synchronous
 * binding nested in an async one stays correct across the outer one's awaits. A program that only
 * ever binds synchronously never makes the variable, so on Node.js 20 and 22 it never switches on
 * AsyncLocalStorage's promise hooks, which slow every `await` in the process about 2.7×, and on
 * 24 it makes no context frame per binding. This is the default store wherever there is a
 * variable to engage.
 *
 * Before the first async callback, a plain callback that returns a promise (`() => main()`) keeps
 * its binding for its synchronous part only: its continuations see no binding at all, never an
 * outer or a stale one, and `ambientspace()` there throws `NoAmbientSpaceError`, which says to
 * declare the callback `async`.
 *
 * @throws {InvalidArgumentError} when `create` is not a function; on engagement, when what it
 * made is not AsyncLocalStorage-like (the store then stays unengaged).
 * @example
 * ```ts
 * import { AsyncLocalStorage } from 'node:async_hooks';
 * import { Similar } from '@pol/core';
 * import { lazyContextStore } from '@pol/core/backend';
 * const store = lazyContextStore(() => new AsyncLocalStorage());
 * const space = Similar(new Float32Array(0));
 * console.log(store.run(space, () => store.get() === space)); // true
 * console.log(store.engaged); // false: a synchronous binding needs no AsyncLocalStorage
 * await store.run(space, async () => {});
 * console.log(store.engaged); // true: from the first async callback on
 * ```
 */
export function lazyContextStore(create: () => ContextVariable): AmbientStore {
  if (typeof create !== 'function') {
    throw new InvalidArgumentError(
      `lazyContextStore(create) takes a function that makes the context variable, got ${describeValue(create)}. ` +
        'Pass () => new AsyncLocalStorage().',
    );
  }
  return new StackStore(create);
}

/** An ambient store for runtimes with no async context: a synchronous stack that refuses async callbacks. */
export function syncStore(): AmbientStore {
  return new StackStore(undefined);
}

// Invariants: `current` is the innermost binding made on the stack (undefined: none). `#variable`
// is made once, on engagement (never without `#create`); from then on every new binding goes through
// it, and what the stack still holds are synchronous bindings made before engagement that enclose
// the current one, so the variable's binding, when there is one, is the inner.
class StackStore implements AmbientStore, AmbientBinder {
  static get name(): string {
    return 'StackStore';
  }

  readonly async: boolean;
  #current: Space | undefined = undefined;
  #variable: ContextVariable | undefined = undefined;
  #read: (() => Space | undefined) | undefined = undefined;
  readonly #create: (() => ContextVariable) | undefined;

  constructor(create: (() => ContextVariable) | undefined) {
    this.#create = create;
    this.async = create !== undefined;
  }

  get engaged(): boolean {
    return this.#variable !== undefined;
  }

  /** Whether bindings go on the stack (nothing engaged yet): then `enter` and `leave` may bind. */
  get binds(): boolean {
    return this.#variable === undefined;
  }

  // run, get and engage are own properties, as they were when the stores were object literals: a
  // host that detaches them (`const { run, get } = store`) or spreads the store keeps working.
  readonly engage = (): void => {
    if (this.#create !== undefined) this.#engage();
  };

  readonly run = <A, R>(space: Space, f: (arg: A) => R, arg?: A): R => {
    if (this.#variable === undefined) {
      if (!isAsyncFunction(f)) {
        // What a binder's caller does, around a callback.
        const token = this.enter(space);
        let result: R;
        try {
          result = f(arg as A);
        } finally {
          this.leave(token);
        }
        this.checkResult(result);
        return result;
      }
      this.#engage();
    }
    return runThrough(this.#variable as ContextVariable, space, f, arg as A);
  };

  readonly get = (): Space | undefined => {
    const read = this.#read;
    return read === undefined ? this.#current : (read() ?? this.#current);
  };

  enter(space: Space): unknown {
    const saved = this.#current;
    this.#current = space;
    return saved;
  }

  leave(token: unknown): void {
    this.#current = token as Space | undefined;
  }

  checkResult(result: unknown): void {
    if (this.#create === undefined && isThenable(result)) {
      // The binding is already restored, so nothing leaks; but the callback's continuation would
      // run unbound. Refuse, and keep its eventual rejection from going unhandled.
      (result as PromiseLike<unknown>).then(undefined, () => {});
      throw asyncUnsupported();
    }
  }

  #engage(): ContextVariable {
    if (this.#variable !== undefined) return this.#variable;
    if (this.#create === undefined) throw asyncUnsupported();
    const made = this.#create();
    this.#read = readerOf(made, 'lazyContextStore(create)');
    this.#variable = made;
    return made;
  }
}

/** `store` as a binder, when it is core's stack and binds synchronously now; otherwise undefined. */
export function binderOf(store: AmbientStore): AmbientBinder | undefined {
  return store instanceof StackStore && store.binds ? store : undefined;
}
