/// <reference lib="esnext.disposable" preserve="true" />
import { ambientStore, ambientspace, assertCallbackSupported } from './ambient.js';
import type { ArrayOf, Kind, PolArray } from './array.js';
import { refuseFor } from './context-variable.js';
import type { DType } from './dtype.js';
import { FrameClosedError, InvalidArgumentError } from './errors.js';
import { closeAfterFailure } from './failure.js';
import { shapeText } from './shape.js';
import {
  assertSpace,
  commitKey,
  type Frame,
  frameKey,
  isFrame,
  openFrameKey,
  rollbackKey,
  type Space,
  savepointKey,
  spaceKey,
} from './space.js';
import { describeValue, isThenable } from './value.js';

/**
 * A frame on a space that has no frame protocol of its own (a GC space): it scopes lifetimes and
 * refuses use after close, and when given a `release` hook (device memory the GC cannot see) it
 * hands back what it allocated when it closes.
 */
class ScopeFrame<K extends Kind> implements Frame<K> {
  // How messages name it: a static getter keeps `instanceof` fast (CONTRIBUTING.md, "Class names").
  static get name(): string {
    return 'Frame';
  }
  readonly [spaceKey]: K;
  declare readonly [frameKey]: true;
  // Invariant: `arrays` is defined exactly when `release` is, and holds every array allocated
  // through this frame (not through nested frames, which release their own) since it opened.
  readonly #root: Space<K>;
  readonly #release: ((arrays: readonly PolArray[]) => void) | undefined;
  readonly #arrays: PolArray[] | undefined;
  #open = true;

  constructor(
    readonly parent: Space<K>,
    root: Space<K>,
    release: ((arrays: readonly PolArray[]) => void) | undefined,
  ) {
    this[spaceKey] = root[spaceKey];
    this.#root = root;
    this.#release = release;
    this.#arrays = release === undefined ? undefined : [];
  }

  get isOpen(): boolean {
    return this.#open;
  }

  alloc<D extends DType>(dtype: D, dims: readonly number[]): ArrayOf<K, D> {
    if (!this.#open) throw frameClosed(this, `allocate ${shapeText(dtype, dims)}`);
    const array = this.#root.alloc(dtype, dims);
    this.#arrays?.push(array as PolArray);
    return array;
  }

  [openFrameKey](): Frame<K> {
    if (!this.#open) throw frameClosed(this, 'open a nested frame');
    return new ScopeFrame(this, this.#root, this.#release);
  }

  // A savepoint covers both what this frame tracks (to release) and the root space's own state
  // (a transactional custom space), so a spec that fails part-way through a frame changes nothing.
  // The token is an object only when it must hold both; on a GC space it is a shared constant.
  [savepointKey](): unknown {
    const root = this.#root;
    const save = root[savepointKey];
    const arrays = this.#arrays;
    if (save === undefined) return arrays === undefined ? nothingToUndo : arrays.length;
    const rootToken = save.call(root);
    if (arrays === undefined) return rootToken;
    const token: FrameSavepoint = { arrays: arrays.length, root: rootToken };
    return token;
  }

  [rollbackKey](token: unknown): void {
    if (token === nothingToUndo) return;
    const root = this.#root;
    const arrays = this.#arrays;
    const hasRoot = root[savepointKey] !== undefined;
    const count = arrays === undefined ? 0 : hasRoot ? (token as FrameSavepoint).arrays : (token as number);
    const rootToken = arrays === undefined ? token : hasRoot ? (token as FrameSavepoint).root : undefined;
    const release = this.#release;
    try {
      if (arrays !== undefined && release !== undefined) {
        const dropped = arrays.splice(count);
        if (dropped.length > 0) release(dropped);
      }
    } finally {
      if (hasRoot) root[rollbackKey]?.call(root, rootToken);
    }
  }

  // The frame's own arrays are its until it closes, committed or not: only the root's token ends.
  [commitKey](token: unknown): void {
    if (token === nothingToUndo) return;
    const root = this.#root;
    if (root[savepointKey] === undefined) return;
    const rootToken = this.#arrays === undefined ? token : (token as FrameSavepoint).root;
    root[commitKey]?.call(root, rootToken);
  }

  close(): void {
    if (!this.#open) return;
    this.#open = false;
    const arrays = this.#arrays;
    if (arrays !== undefined && arrays.length > 0 && this.#release !== undefined) {
      this.#release(arrays.splice(0));
    }
  }

  [Symbol.dispose](): void {
    this.close();
  }

  toString(): string {
    return `Frame(on ${String(this.#root)}, ${this.#open ? 'open' : 'closed'})`;
  }
}

Object.defineProperty(ScopeFrame.prototype, frameKey, { value: true });

const nothingToUndo: unique symbol = Symbol('nothing to undo');

interface FrameSavepoint {
  readonly arrays: number;
  readonly root: unknown;
}

/**
 * Internal (not exported from the package): the space a frame on this space allocates from, when
 * it is not the space itself. Core's `Similar` over a family with `release` tracks its allocations
 * for rollback; its frames allocate untracked, since a frame releases its own arrays.
 */
export const frameRootKey: unique symbol = Symbol('@pol/core/frameRoot') as never;

/** The space a frame opened on `space` allocates from. */
function frameRoot<K extends Kind>(space: Space<K>): Space<K> {
  return (space as { [frameRootKey]?: Space<K> })[frameRootKey] ?? space;
}

/** The error for using `frame` (to `what`) after it closed. */
export function frameClosed(frame: Frame, what: string): FrameClosedError {
  return new FrameClosedError(
    `Cannot ${what}: ${String(frame)} has closed, and everything it allocated is dead. ` +
      'Allocate from a frame only inside its scratchspace block (or before disposing it), or open a new frame.',
  );
}

/**
 * A frame that only scopes lifetimes over `space`: for implementers of spaces whose memory the GC
 * owns. `release`, when given, receives the arrays allocated through the frame when it closes.
 *
 * @throws {NotASpaceError} when `space` is not a space.
 * @throws {InvalidArgumentError} when `release` is given and is not a function.
 * @throws {FrameClosedError} when `space` is a frame that has closed.
 * @example
 * ```ts
 * import { Similar, alloc } from '@pol/core';
 * import { scopeFrame } from '@pol/core/backend';
 * const frame = scopeFrame(Similar(new Float32Array(1)));
 * alloc(frame, 'float32', 4);
 * frame.close();
 * ```
 */
export function scopeFrame<K extends Kind>(space: Space<K>, release?: (arrays: readonly PolArray[]) => void): Frame<K> {
  assertSpace(space, 'scopeFrame');
  if (release !== undefined && typeof release !== 'function') {
    throw new InvalidArgumentError(
      `scopeFrame(space, release) takes release as a function of the arrays to hand back, got ${describeValue(release)}. Omit it for GC memory.`,
    );
  }
  if (isFrame(space) && !space.isOpen) throw frameClosed(space, 'open a nested frame');
  return new ScopeFrame(space, frameRoot(space), release);
}

/** Open a frame on any value `scratchspace` was given: refused unless it is a space. */
function openFrameChecked<K extends Kind>(space: Space<K>): Frame<K> {
  assertSpace(space, 'scratchspace');
  return openFrame(space);
}

/**
 * Open a frame on `space`, a value the caller already knows is a space: through the space's own
 * frame protocol when it has one, else a frame that only scopes lifetimes. This is `scratchspace`
 * without its argument checks, for code that opens a frame on every call of a hot path and has
 * checked its space once (a verb opening its frame; `scratchspace` itself, after its checks). The
 * check it leaves out is the costly one: "is this a space?" is asked of every kind of value in a
 * program, so its property reads are megamorphic wherever it runs.
 *
 * @throws {FrameClosedError} when `space` is a frame that has closed.
 * @example
 * ```ts
 * import { alloc, Similar } from '@pol/core';
 * import { openFrame } from '@pol/core/backend';
 * const frame = openFrame(Similar(new Float32Array(0)));
 * alloc(frame, 'float32', 4);
 * frame.close();
 * console.log(frame.isOpen); // false
 * ```
 */
export function openFrame<K extends Kind>(space: Space<K>): Frame<K> {
  if ((space as { [frameKey]?: unknown })[frameKey] === true && !(space as Frame<K>).isOpen) {
    throw frameClosed(space as Frame<K>, 'open a nested frame');
  }
  const open = space[openFrameKey];
  return open !== undefined ? open.call(space) : new ScopeFrame(space, frameRoot(space), undefined);
}

/**
 * Open a frame on `space` and call `f(frame)` with it as the ambient space; close the frame however
 * `f` exits (return, throw, or, for an async `f`, once its promise settles) and return what `f`
 * returns. On an arena the frame marks on open and retracts on close, so everything carved inside
 * dies at once; on a GC space it only scopes. Frames nest, and the ambient space inside is always
 * the innermost open frame.
 *
 * Three spellings: `scratchspace(space, f)`; `scratchspace(f)`, on the ambient space; and
 * `using frame = scratchspace(space)`, which closes at the end of the enclosing block (this form
 * does not rebind the ambient space: pass the frame explicitly).
 *
 * @throws {NotASpaceError} when `space` is not a space.
 * @throws {FrameClosedError} when `space` is a frame that has closed.
 * @throws {NoAmbientSpaceError} for the ambient spelling with no space bound.
 * @throws {InvalidArgumentError} when a second argument is given that is not a function.
 * @throws {AsyncScopeUnsupportedError} on a runtime without async context, for an async `f` (before
 * the frame opens) or an `f` that returns a promise (the frame is closed again).
 * @example
 * ```ts
 * import { scratchspace, alloc, Similar } from '@pol/core';
 * const space = Similar(new Float32Array(1));
 * const sum = scratchspace(space, (frame) => {
 *   const tmp = alloc(frame, 'float32', 3);
 *   tmp.data.set([1, 2, 3]);
 *   return tmp.data.reduce((a, b) => a + b, 0);
 * }); // 6, and tmp is dead
 *
 * {
 *   using frame = scratchspace(space);
 *   alloc(frame, 'int32', 2);
 * } // closed here
 * ```
 */
export function scratchspace<K extends Kind, R>(space: Space<K>, f: (frame: Frame<K>) => R): R;
export function scratchspace<K extends Kind>(space: Space<K>): Frame<K>;
export function scratchspace<R>(f: (frame: Frame) => R): R;
export function scratchspace(a?: unknown, b?: unknown): unknown {
  // No `arguments` and no rest parameter, either of which V8 makes an object of on every call below
  // its optimizing compiler (see alloc): a callback passed as undefined counts as none.
  if (b === undefined && typeof a === 'function') {
    let ambient: Space;
    try {
      ambient = ambientspace();
    } catch (error) {
      return refuseFor(a, error);
    }
    return runFrame(ambient, a as (frame: Frame) => unknown);
  }
  if (b === undefined) return openFrameChecked(a as Space);
  if (typeof b !== 'function') {
    assertSpace(a, 'scratchspace');
    throw new InvalidArgumentError(
      `scratchspace(space, f) needs a callback f, got ${describeValue(b)}. Pass (frame) => { ... }, or call scratchspace(space) alone for a frame to dispose.`,
    );
  }
  return runFrame(a as Space, b as (frame: Frame) => unknown);
}

function runFrame(space: Space, f: (frame: Frame) => unknown): unknown {
  // Refused before the frame opens and before f runs: nothing to undo. An async f's refusal (a
  // contended arena, say) is a rejected promise, as its own failures are.
  let frame: Frame;
  try {
    assertCallbackSupported(f);
    frame = openFrameChecked(space);
  } catch (error) {
    return refuseFor(f, error);
  }
  let result: unknown;
  try {
    // The frame is bound through the store directly, with f's own async-ness visible to it (a
    // lazy store engages only for an async f) and no closure made per call.
    result = ambientStore().run(frame, f, frame);
  } catch (error) {
    closeAfterFailure(frame, error);
    throw error;
  }
  if (isThenable(result)) return closeWhenSettled(frame, result);
  frame.close();
  return result;
}

// Apart from runFrame: closures over the frame there would make a context object on every call.
function closeWhenSettled(frame: Frame, result: PromiseLike<unknown>): Promise<unknown> {
  return Promise.resolve(result).then(
    (value) => {
      frame.close();
      return value;
    },
    (error: unknown) => {
      closeAfterFailure(frame, error);
      throw error;
    },
  );
}
