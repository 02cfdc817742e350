import { internDims } from './dims.js';
import { type AnyTypedArray, type DType, dtypeInfo, dtypeOfTypedArray, type TypedArrayOf } from './dtype.js';
import { InvalidShapeError, NotAnArrayError } from './errors.js';
import { elementCount, shapeText } from './shape.js';
import { describeValue } from './value.js';

/**
 * The symbol under which an array names its {@link ArrayFamily}. Any object carrying it is an
 * array to Pol: it passes through specs untouched, it can be the exemplar of `Similar`, and
 * `capturing` asks its family. A backend puts it on its array class's prototype.
 *
 * It is registered with `Symbol.for`, so arrays from two installed copies of `@pol/core` still
 * recognize each other.
 */
export const familyKey: unique symbol = Symbol.for('@pol/core/family') as never;

/**
 * The array type each space kind hands out, by dtype. Backends add their kind by module
 * augmentation, which is how `alloc` computes its result type from the space's kind:
 *
 * ```ts
 * import type { DType, PolArray } from '@pol/core';
 *
 * interface WasmArray<D extends DType> extends PolArray<D> {
 *   readonly pointer: number;
 * }
 * declare module '@pol/core' {
 *   interface ArrayTypes<D extends DType> {
 *     wasm: WasmArray<D>;
 *   }
 * }
 * ```
 */
export interface ArrayTypes<D extends DType> {
  /** Host memory: a {@link HostArray} over a TypedArray. */
  host: HostArray<D>;
}

/**
 * The name of a kind of space (`'host'`, or a kind a backend added to {@link ArrayTypes}).
 *
 * @example
 * ```ts
 * import type { Kind } from '@pol/core';
 * const kind: Kind = 'host'; // 'gpu' too, once @pol/webgpu is installed
 * ```
 */
export type Kind = keyof ArrayTypes<DType>;

/**
 * The array a `K` space hands out for dtype `D`: `ArrayOf<'host', 'float32'>` is `HostArray<'float32'>`.
 *
 * @example
 * ```ts
 * import { alloc, type ArrayOf, Similar } from '@pol/core';
 * const labels: ArrayOf<'host', 'int32'> = alloc(Similar(new Int32Array(0)), 'int32', 3);
 * console.log(labels.data); // Int32Array(3) [ 0, 0, 0 ]
 * ```
 */
export type ArrayOf<K extends Kind, D extends DType> = ArrayTypes<D>[K];

/** What every Pol array has: an element type, a shape and a family. */
export interface PolArray<D extends DType = DType> {
  /** The element type. */
  readonly dtype: D;
  /** The shape, row-major (the last dim varies fastest). Never mutate it. */
  readonly dims: readonly number[];
  /** The family that made it (see {@link ArrayFamily}). */
  readonly [familyKey]: ArrayFamily;
}

/**
 * What a space on the host hands out: a small object over a TypedArray view. Pol is not an
 * ndarray library; the `data` is yours to index (row-major).
 */
export interface HostArray<D extends DType = DType> extends PolArray<D> {
  /** The elements, `prod(dims)` of them. An arena's checked mode makes this throw once the array is stale. */
  readonly data: TypedArrayOf<D>;
}

/**
 * Anything Pol treats as an array: a {@link PolArray} or a bare TypedArray.
 *
 * @example
 * ```ts
 * import { type AnyArray, hostArray, shapeOf } from '@pol/core';
 * const arrays: AnyArray[] = [new Float32Array(3), hostArray(new Int8Array(6), [2, 3])];
 * console.log(arrays.map((a) => shapeOf(a).dims)); // [ [ 3 ], [ 2, 3 ] ]
 * ```
 */
export type AnyArray = PolArray | AnyTypedArray;

/**
 * A family of arrays: how to make a GC-owned array like an exemplar (`Similar`), and whether the
 * exemplar's device is capturing. A backend (a WebGPU device, a WASM heap of its own) implements
 * this once, puts it on its arrays under {@link familyKey}, and core needs to know nothing else.
 */
export interface ArrayFamily<K extends Kind = Kind> {
  /** The kind of the arrays it makes. */
  readonly kind: K;
  /** Allocate a fresh, GC-owned (or, for a device, caller-released) array like `exemplar`. */
  allocSimilar<D extends DType>(exemplar: PolArray, dtype: D, dims: readonly number[]): ArrayOf<K, D>;
  /** Whether the exemplar's device is recording a capture. Omit it if the family cannot capture. */
  capturing?(exemplar: PolArray): boolean;
  /**
   * Called when a frame on `Similar(exemplar)` closes, with the arrays allocated through it, so a
   * family whose memory the GC cannot see (GPU buffers) can release them. Omit it for GC memory.
   */
  release?(arrays: readonly PolArray[]): void;
  /**
   * Fill `array` with zeros (`0`, or `0n` for the bigint dtypes). Shadows (gradients that
   * accumulate) start from it, through `zeroArray`. A device records it like any other command, so
   * inside a capture every replay zeroes again. Omit it only if the family cannot zero its memory;
   * `zeroArray` then throws `ZeroUnsupportedError`.
   */
  zero?(array: PolArray): void;
  /**
   * Throw what `zero(array)` would throw for this array (a stale, released or dead array), and
   * write nothing. A caller that zeroes several arrays, such as `zeroShadows`, checks them all
   * first, so that a refusal leaves every array as it was. Omit it if `zero` never refuses an array
   * of the family.
   */
  checkZero?(array: PolArray): void;
  /** A short description of the exemplar for messages, such as `'float32[3, 4] on host'`. */
  describe(exemplar: PolArray): string;
}

class HostArrayImpl<D extends DType> implements HostArray<D> {
  // How messages name it: a static getter keeps `instanceof` fast (CONTRIBUTING.md, "Class names").
  static get name(): string {
    return 'HostArray';
  }
  declare readonly [familyKey]: ArrayFamily;
  constructor(
    readonly dtype: D,
    readonly dims: readonly number[],
    readonly data: TypedArrayOf<D>,
  ) {}

  toString(): string {
    return `HostArray(${shapeText(this.dtype, this.dims)})`;
  }
}

/**
 * The family of host arrays (and of bare TypedArrays used as exemplars).
 *
 * @example
 * ```ts
 * import { hostArray } from '@pol/core';
 * import { hostFamily } from '@pol/core/backend';
 * const y = hostFamily.allocSimilar(hostArray(new Float32Array(2)), 'float64', [3]);
 * console.log(hostFamily.describe(y)); // 'float64[3] on host'
 * y.data.fill(7);
 * hostFamily.checkZero?.(y); // refuses a stale array of a checked arena, writing nothing
 * hostFamily.zero?.(y);
 * console.log(y.data); // Float64Array(3) [ 0, 0, 0 ]
 * ```
 */
export const hostFamily: ArrayFamily<'host'> = Object.freeze({
  kind: 'host',
  allocSimilar<D extends DType>(_exemplar: PolArray, dtype: D, dims: readonly number[]): HostArray<D> {
    const data = new (dtypeInfo(dtype).TypedArray)(elementCount(dims));
    return new HostArrayImpl(dtype, internDims(dims), data);
  },
  checkZero(array: PolArray): void {
    // Reading the data is the check: a checked arena's array that has gone stale refuses it.
    void (array as HostArray).data;
  },
  zero(array: PolArray): void {
    const data = (array as HostArray).data;
    // fill(0) on a BigInt64Array throws: its elements are bigints.
    if (dtypeInfo(array.dtype).bigint) (data as BigInt64Array).fill(0n);
    else (data as Float64Array).fill(0);
  },
  describe(exemplar: PolArray): string {
    return `${shapeText(exemplar.dtype, exemplar.dims)} on host`;
  },
});

Object.defineProperty(HostArrayImpl.prototype, familyKey, { value: hostFamily });

/**
 * Wrap a TypedArray you already have as a {@link HostArray}, with `dims` defaulting to
 * `[data.length]`. The data is aliased, never copied.
 *
 * @throws {NotAnArrayError} when `data` is not a TypedArray Pol describes.
 * @throws {InvalidShapeError} when the dims are bad or do not multiply to `data.length`.
 * @example
 * ```ts
 * import { hostArray } from '@pol/core';
 * const m = hostArray(new Float32Array(6), [2, 3]);
 * console.log(m.dtype, m.dims); // 'float32' [ 2, 3 ]
 * ```
 */
export function hostArray<T extends AnyTypedArray>(data: T, dims?: readonly number[]): HostArray<DTypeOf<T>> {
  const dtype = dtypeOfTypedArray(data);
  if (dtype === undefined) {
    throw new NotAnArrayError(
      `hostArray needs a TypedArray (Float32Array, Int32Array, ...), got ${describeValue(data)}. Wrap plain arrays first, e.g. Float32Array.from(values).`,
    );
  }
  const shape = dims === undefined ? [data.length] : Array.isArray(dims) ? dims.slice() : dims;
  const count = elementCount(shape);
  if (count !== data.length) {
    throw new InvalidShapeError(
      `dims [${shape.join(', ')}] describe ${count} elements, but the TypedArray holds ${data.length}. Pass dims whose product is ${data.length}.`,
    );
  }
  return new HostArrayImpl(dtype as DTypeOf<T>, Object.freeze(shape), data as never);
}

/**
 * Make a host array from a carve: for backends and arenas that have already validated the dims
 * and own a frozen copy of them. Not for general use; see {@link hostArray}.
 *
 * @example
 * ```ts
 * import { makeHostArray } from '@pol/core/backend';
 * const a = makeHostArray('float32', Object.freeze([4]), new Float32Array(4));
 * ```
 */
export function makeHostArray<D extends DType>(dtype: D, dims: readonly number[], data: TypedArrayOf<D>): HostArray<D> {
  return new HostArrayImpl(dtype, dims, data);
}

/**
 * Whether `x` is an array to Pol: a TypedArray it describes, or an object carrying a family.
 *
 * @example
 * ```ts
 * import { isArray, hostArray } from '@pol/core';
 * isArray(new Float32Array(2)); // true
 * isArray(hostArray(new Int8Array(2))); // true
 * isArray([1, 2]); // false
 * ```
 */
export function isArray(x: unknown): x is AnyArray {
  return familyOf(x) !== undefined;
}

/**
 * The family of an array, or `undefined` if `x` is not one (a `familyKey` that holds no object is none).
 *
 * @example
 * ```ts
 * import { familyOf, hostFamily } from '@pol/core/backend';
 * console.log(familyOf(new Float32Array(2)) === hostFamily, familyOf({})); // true undefined
 * ```
 */
export function familyOf(x: unknown): ArrayFamily | undefined {
  if (typeof x === 'object' && x !== null) {
    const fam: unknown = (x as { [familyKey]?: unknown })[familyKey];
    if (typeof fam === 'object' && fam !== null) return fam as ArrayFamily;
  }
  return dtypeOfTypedArray(x) === undefined ? undefined : hostFamily;
}

/**
 * The dtype and dims of any array (a bare TypedArray has dims `[length]`).
 *
 * @example
 * ```ts
 * import { hostArray, shapeOf } from '@pol/core';
 * console.log(shapeOf(new Uint8Array(5)).dims, shapeOf(hostArray(new Int16Array(4), [2, 2])).dtype); // [ 5 ] 'int16'
 * ```
 */
export function shapeOf(x: AnyArray): { readonly dtype: DType; readonly dims: readonly number[] } {
  const dtype = dtypeOfTypedArray(x);
  if (dtype !== undefined) return { dtype, dims: [(x as AnyTypedArray).length] };
  return x as PolArray;
}

type TagToDType = {
  Float32Array: 'float32';
  Float64Array: 'float64';
  Int8Array: 'int8';
  Int16Array: 'int16';
  Int32Array: 'int32';
  BigInt64Array: 'int64';
  Uint8Array: 'uint8';
  Uint16Array: 'uint16';
  Uint32Array: 'uint32';
  BigUint64Array: 'uint64';
  Float16Array: 'float16';
};

/**
 * The dtype of an array type: `DTypeOf<Float32Array>` is `'float32'`, `DTypeOf<HostArray<'int8'>>` is `'int8'`.
 *
 * @example
 * ```ts
 * import type { DTypeOf, HostArray } from '@pol/core';
 * const a: DTypeOf<Float32Array> = 'float32';
 * const b: DTypeOf<HostArray<'int8'>> = 'int8';
 * ```
 */
export type DTypeOf<A> = A extends { readonly dtype: infer D extends DType }
  ? D
  : A extends { readonly [Symbol.toStringTag]: infer T extends keyof TagToDType }
    ? TagToDType[T]
    : DType;

/**
 * How messages name a value that should have been an array: its `dtype[dims]` when it is one
 * (`'float32[2, 3]'`), else {@link describeValue}'s short rendering.
 *
 * @example
 * ```ts
 * import { hostArray } from '@pol/core';
 * import { valueText } from '@pol/core/backend';
 * console.log(valueText(hostArray(new Int8Array(6), [2, 3])), valueText(new Float32Array(4)), valueText('w')); // 'int8[2, 3]' 'float32[4]' "'w'"
 * ```
 */
export function valueText(x: unknown): string {
  if (!isArray(x)) return describeValue(x);
  const shape = shapeOf(x);
  return shapeText(shape.dtype, shape.dims);
}
