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
import { scopeFrame } from './frame.js';
import { byteLength, shapeText } from './shape.js';
import { type Frame, openFrameKey, type Space, spaceKey } from './space.js';
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

  toString(): string {
    return `Similar(${this.#family.describe(this.#exemplar)})`;
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
  return new SimilarSpace(exemplar, family);
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
