// Test fixtures shared by the behaviour tests: spaces that count and roll back, a fake array family
// with release and capture, and the few Node.js facilities the tests need, typed locally (the
// package compiles with `types: []`, so no @types/node). Not part of the package (see
// tsconfig.build.json and package.json `files`).

import { type AmbientStore, ambientspace, contextStore } from '../ambient.js';
import { type ArrayFamily, familyKey, type HostArray, type PolArray } from '../array.js';
import { type DType, dtypeInfo } from '../dtype.js';
import { elementCount } from '../shape.js';
import { commitKey, rollbackKey, type Space, savepointKey, spaceKey } from '../space.js';

/** Make a plain host array (its own family), without going through the code under test's spaces. */
function plainHostArray<D extends DType>(family: ArrayFamily, dtype: D, dims: readonly number[]): HostArray<D> {
  return {
    dtype,
    dims: Object.freeze(dims.slice()),
    data: new (dtypeInfo(dtype).TypedArray)(elementCount(dims)),
    [familyKey]: family,
  };
}

const plainFamily: ArrayFamily<'host'> = {
  kind: 'host',
  allocSimilar: (_exemplar, dtype, dims) => plainHostArray(plainFamily, dtype, dims),
  describe: (exemplar) => `plain ${exemplar.dtype}[${exemplar.dims.join(', ')}]`,
};

/** One call a space received. */
export interface AllocCall {
  readonly dtype: DType;
  readonly dims: readonly number[];
}

/** A host space that records every leaf allocation it performs. */
export interface CountingSpace extends Space<'host'> {
  readonly calls: AllocCall[];
}

/** The ambient space, or undefined when none is bound (without throwing). */
export function boundSpace(): Space | undefined {
  const sentinel = countingSpace();
  const space = ambientspace(sentinel);
  return space === sentinel ? undefined : space;
}

/** A host space that records every leaf `alloc(dtype, dims)` it receives, built with `spaceKey`. */
export function countingSpace(): CountingSpace {
  const calls: AllocCall[] = [];
  return {
    [spaceKey]: 'host',
    calls,
    alloc<D extends DType>(dtype: D, dims: readonly number[]): HostArray<D> {
      calls.push({ dtype, dims: dims.slice() });
      return plainHostArray(plainFamily, dtype, dims);
    },
  };
}

/** A failure injected by a test space, told apart from anything the code under test throws. */
export class InjectedFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InjectedFailure';
  }
}

/**
 * A host space with a savepoint protocol (like an arena's mark/retract): `live` holds what is
 * allocated and not rolled back; `rollbacks` and `commits` the tokens it was handed to end.
 * `failAt(n)` makes the n-th allocation from now on (1-based) fail.
 */
export interface TransactionalSpace extends Space<'host'> {
  readonly live: HostArray[];
  readonly rollbacks: unknown[];
  readonly commits: unknown[];
  failAt(n: number): void;
}

export function transactionalSpace(): TransactionalSpace {
  const live: HostArray[] = [];
  const rollbacks: unknown[] = [];
  const commits: unknown[] = [];
  let countdown = 0;
  return {
    [spaceKey]: 'host',
    live,
    rollbacks,
    commits,
    failAt(n: number): void {
      countdown = n;
    },
    alloc<D extends DType>(dtype: D, dims: readonly number[]): HostArray<D> {
      if (countdown > 0) {
        countdown--;
        if (countdown === 0) throw new InjectedFailure(`no room for ${dtype}[${dims.join(', ')}]`);
      }
      const array = plainHostArray(plainFamily, dtype, dims);
      live.push(array);
      return array;
    },
    [savepointKey]: () => live.length,
    [rollbackKey]: (token: unknown) => {
      rollbacks.push(token);
      live.splice(token as number);
    },
    [commitKey]: (token: unknown) => {
      commits.push(token);
    },
  };
}

/** The state of a fake family: what it allocated, what it was asked to release, whether it captures. */
export interface FakeFamily {
  readonly family: ArrayFamily<'host'>;
  /** Every array allocSimilar returned, in order. */
  readonly allocated: PolArray[];
  /** One entry per release call, with the arrays it was given. */
  readonly released: (readonly PolArray[])[];
  /** Whether the family's device is recording a capture. */
  capturing: boolean;
  /** When set, allocSimilar throws for dims whose first dim equals it (a device out of memory). */
  failOnFirstDim: number | undefined;
  /** A fresh array of this family, made directly (not through allocSimilar). */
  array<D extends DType>(dtype: D, dims: readonly number[]): HostArray<D>;
}

/** A fake array family with allocSimilar/release/describe/capturing, carried on arrays under familyKey. */
export function fakeFamily(): FakeFamily {
  const state: FakeFamily = {
    family: {
      kind: 'host',
      allocSimilar<D extends DType>(_exemplar: PolArray, dtype: D, dims: readonly number[]): HostArray<D> {
        if (state.failOnFirstDim !== undefined && dims[0] === state.failOnFirstDim) {
          throw new InjectedFailure(`fake device out of memory for ${dtype}[${dims.join(', ')}]`);
        }
        const array = plainHostArray(state.family, dtype, dims);
        state.allocated.push(array);
        return array;
      },
      capturing: () => state.capturing,
      release(arrays: readonly PolArray[]): void {
        state.released.push(arrays.slice());
      },
      describe: (exemplar: PolArray) => `fake ${exemplar.dtype}[${exemplar.dims.join(', ')}]`,
    },
    allocated: [],
    released: [],
    capturing: false,
    failOnFirstDim: undefined,
    array: <D extends DType>(dtype: D, dims: readonly number[]) => plainHostArray(state.family, dtype, dims),
  };
  return state;
}

/** A promise with its resolve/reject, to order async steps without timers. */
export interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  reject(reason: unknown): void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve: (value: T) => void = () => {};
  let reject: (reason: unknown) => void = () => {};
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

interface NodeProcess {
  on(event: 'unhandledRejection', listener: (reason: unknown) => void): void;
  off(event: 'unhandledRejection', listener: (reason: unknown) => void): void;
  getBuiltinModule(id: 'node:async_hooks'): {
    AsyncLocalStorage: new () => { run<R>(value: Space, f: () => R): R; getStore(): Space | undefined };
  };
}

interface NodeGlobals {
  readonly process: NodeProcess;
  setTimeout(f: () => void, ms: number): unknown;
}

const node = globalThis as unknown as NodeGlobals;

/** A macrotask turn: lets pending promise jobs and unhandled-rejection detection run. */
export function macrotask(): Promise<void> {
  return new Promise((resolve) => node.setTimeout(resolve, 0));
}

/** Run `f`, then report the reasons of every unhandled rejection seen while it ran and shortly after. */
export async function unhandledRejectionsDuring(f: () => unknown): Promise<unknown[]> {
  const seen: unknown[] = [];
  const listener = (reason: unknown): void => {
    seen.push(reason);
  };
  node.process.on('unhandledRejection', listener);
  try {
    try {
      await f();
    } catch {
      // the caller asserts on f's own outcome separately
    }
    await macrotask();
    await macrotask();
  } finally {
    node.process.off('unhandledRejection', listener);
  }
  return seen;
}

/** A fresh AsyncLocalStorage from Node.js. */
export function nodeContextVariable(): { run<R>(value: Space, f: () => R): R; getStore(): Space | undefined } {
  const { AsyncLocalStorage } = node.process.getBuiltinModule('node:async_hooks');
  return new AsyncLocalStorage();
}

/** A fresh ambient store over Node's AsyncLocalStorage. */
export function nodeContextStore(): AmbientStore {
  return contextStore(nodeContextVariable());
}
