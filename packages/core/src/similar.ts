import {
  type AnyArray,
  type ArrayFamily,
  type ArrayOf,
  type DTypeOf,
  familyOf,
  type Kind,
  makeHostArray,
  type PolArray,
} from './array.js';
import { type AnyTypedArray, type DType, dtypeOfTypedArray } from './dtype.js';
import { CaptureViolation, NotAnArrayError } from './errors.js';
import { frameRootKey, scopeFrame } from './frame.js';
import { OpenSavepoints } from './open-savepoints.js';
import { byteLength, shapeText } from './shape.js';
import { commitKey, type Frame, openFrameKey, rollbackKey, type Space, savepointKey, spaceKey } from './space.js';
import { describeValue } from './value.js';

/**
 * The kind of space `Similar(x)` gives for an array of type `A`: `'host'` for TypedArrays and host
 * arrays, the backend's kind for its arrays (found through {@link ArrayTypes}).
 *
 * @example
 * ```ts
 * import type { HostArray, KindOf } from '@pol/core';
 * const a: KindOf<Float32Array> = 'host';
 * const b: KindOf<HostArray<'int8'>> = 'host';
 * ```
 */
export type KindOf<A> = A extends AnyTypedArray ? 'host' : [FindKind<A>] extends [never] ? Kind : FindKind<A>;

type FindKind<A> = { [K in Kind]: A extends ArrayOf<K, DTypeOf<A>> ? K : never }[Kind];

class SimilarSpace<K extends Kind> implements Space<K> {
  // How messages name it: a static getter keeps `instanceof` fast (CONTRIBUTING.md, "Class names").
  static get name(): string {
    return 'Similar space';
  }
  readonly [spaceKey]: K;
  readonly #exemplar: PolArray;
  readonly #family: ArrayFamily<K>;
  // Made once, not per frame: a closure made in [openFrameKey] would cost a context on every open.
  readonly #release: ((arrays: readonly PolArray[]) => void) | undefined;

  constructor(exemplar: PolArray, family: ArrayFamily<K>) {
    this[spaceKey] = family.kind;
    this.#exemplar = exemplar;
    this.#family = family;
    const release = family.release;
    this.#release = release === undefined ? undefined : (arrays) => release.call(family, arrays);
  }

  alloc<D extends DType>(dtype: D, dims: readonly number[]): ArrayOf<K, D> {
    byteLength(dtype, dims);
    if (this.#family.capturing?.(this.#exemplar) === true) {
      throw new CaptureViolation(`A new ${shapeText(dtype, dims)} array`, String(this));
    }
    return this.#family.allocSimilar(this.#exemplar, dtype, dims);
  }

  [openFrameKey](): Frame<K> {
    return scopeFrame(this, this.#release);
  }

  /** A frame on `parent`, a space over this one (its allocations come here), releasing through the family. */
  frameOn(parent: Space<K>): Frame<K> {
    return scopeFrame(parent, this.#release);
  }

  toString(): string {
    return `Similar(${this.#family.describe(this.#exemplar)})`;
  }
}

/**
 * `Similar` over a family with `release` (memory the garbage collector cannot free): the same
 * space, plus savepoints, so that a spec or a verb that fails part-way releases what it had made.
 * Only this one tracks: a host `Similar` has no savepoint and keeps nothing.
 *
 * Each allocation is noted under the innermost open savepoint (none open: nothing is kept); a
 * commit hands the arrays to the enclosing savepoint (or forgets them), a rollback releases them.
 * Frames on it allocate from the untracked space underneath, since a frame releases its own.
 */
class ReleasingSimilarSpace<K extends Kind> implements Space<K> {
  // How messages name it: a static getter keeps `instanceof` fast (CONTRIBUTING.md, "Class names").
  static get name(): string {
    return 'Similar space';
  }
  readonly [spaceKey]: K;
  readonly [frameRootKey]: SimilarSpace<K>;
  readonly #family: ArrayFamily<K>;
  readonly #open = new OpenSavepoints();

  constructor(exemplar: PolArray, family: ArrayFamily<K>) {
    this[spaceKey] = family.kind;
    this[frameRootKey] = new SimilarSpace(exemplar, family);
    this.#family = family;
  }

  alloc<D extends DType>(dtype: D, dims: readonly number[]): ArrayOf<K, D> {
    const array = this[frameRootKey].alloc(dtype, dims);
    this.#open.note(array as PolArray);
    return array;
  }

  [openFrameKey](): Frame<K> {
    return this[frameRootKey].frameOn(this);
  }

  [savepointKey](): unknown {
    return this.#open.take();
  }

  [commitKey](token: unknown): void {
    this.#open.commit(token, this);
  }

  [rollbackKey](token: unknown): void {
    const arrays = this.#open.rollback(token, this);
    if (arrays.length > 0) this.#family.release?.(arrays);
  }

  toString(): string {
    return String(this[frameRootKey]);
  }
}

/**
 * The GC-owned space around an exemplar array: `alloc` against it makes fresh arrays of the same
 * family and device as `x` (a TypedArray or host array gives host arrays; a GPU array gives GPU
 * buffers on its device). The exemplar is dispatched on, never read.
 *
 * Eager only: while `x`'s device records a capture, allocating from it throws
 * {@link CaptureViolation}. Under capture, pass an arena (or a frame on one) instead.
 *
 * When `x`'s family has `release` (GPU buffers, which the garbage collector cannot free), the
 * space has savepoints: a spec (or a verb) that fails part-way releases the arrays it had made,
 * frame or no frame. On the host it keeps nothing, and a failed spec's arrays are the GC's.
 *
 * @throws {NotAnArrayError} when `x` is not an array.
 * @example
 * ```ts
 * import { Similar, alloc } from '@pol/core';
 * const x = new Float32Array(16);
 * const y = alloc(Similar(x), 'float32', [4, 4]); // a fresh HostArray<'float32'>
 * ```
 */
export function Similar<A extends AnyArray>(x: A): Space<KindOf<A>>;
export function Similar(x: unknown): Space {
  const family = familyOf(x);
  if (family === undefined) {
    throw new NotAnArrayError(
      `Similar(x) needs an exemplar array (a TypedArray, a HostArray, a GpuArray), got ${describeValue(x)}. ` +
        'To allocate host arrays without one, use Similar(new Float32Array(0)).',
    );
  }
  const dtype = dtypeOfTypedArray(x);
  const exemplar = dtype === undefined ? (x as PolArray) : makeHostArray(dtype, [(x as AnyTypedArray).length], x as never);
  return family.release === undefined ? new SimilarSpace(exemplar, family) : new ReleasingSimilarSpace(exemplar, family);
}

/**
 * Whether the device backing `x` is recording a graph capture. `false` for everything that cannot
 * capture: host arrays, TypedArrays, non-arrays, and arrays of any family that does not say
 * otherwise. A backend answers through its family's `capturing` method, so this is the one
 * predicate the rest of the stack asks.
 *
 * @example
 * ```ts
 * import { capturing } from '@pol/core';
 * capturing(new Float32Array(4)); // false
 * ```
 */
export function capturing(x: unknown): boolean {
  const family = familyOf(x);
  return family?.capturing?.(x as PolArray) === true;
}
