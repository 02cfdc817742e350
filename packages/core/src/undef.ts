import { type AnyArray, type DTypeOf, isArray, type PolArray } from './array.js';
import { frozenDims, internDim, internDims } from './dims.js';
import { type AnyTypedArray, type DType, dtypeInfo, dtypeOfTypedArray } from './dtype.js';
import { InvalidArgumentError } from './errors.js';
import { byteLength } from './shape.js';
import { describeValue } from './value.js';

const undefKey: unique symbol = Symbol.for('@pol/core/undef') as never;

// A type-only brand: an object literal that merely looks like an Undef ({ dtype, dims, ... }) is not
// one to `isUndef` or `alloc`, so it must not type as one either. Only `Undef(...)` makes them.
declare const undefBrand: unique symbol;

/**
 * A description of an array, an element type and a shape, holding no memory. `new Float32Array(n)`
 * allocates; `Undef('float32', n)` only describes, for `alloc` to materialize against a space of the
 * caller's choosing.
 */
export interface Undef<D extends DType = DType> {
  /** Type-only: Undefs come from `Undef(...)`, never from object literals. */
  readonly [undefBrand]: true;
  /** The element type. */
  readonly dtype: D;
  /** The shape, row-major; frozen. */
  readonly dims: readonly number[];
  /** The number of elements, `prod(dims)`. */
  readonly length: number;
  /** The size in bytes, `length × byteSize(dtype)`. */
  readonly byteLength: number;
  /**
   * Whether the array starts at zero: made by {@link zeroed}. Materializing it zeroes the new
   * array through its family's zeroing protocol (arena memory is not zeroed); a buffer the caller
   * supplies in its place is used as it is.
   */
  readonly zeroed: boolean;
}

// Immutable through private fields and getters rather than Object.freeze, which would cost more
// than the rest of making an Undef (descriptions are made on every verb call).
class UndefImpl<D extends DType> implements Undef<D> {
  // How messages name it: a static getter keeps `instanceof` fast (CONTRIBUTING.md, "Class names").
  static get name(): string {
    return 'Undef';
  }
  declare readonly [undefKey]: true;
  declare readonly [undefBrand]: true;
  readonly #dtype: D;
  readonly #dims: readonly number[];
  readonly #length: number;
  readonly #byteLength: number;
  readonly #zeroed: boolean;

  constructor(dtype: D, dims: readonly number[], length: number, byteLength: number, zeroed: boolean) {
    this.#dtype = dtype;
    this.#dims = dims;
    this.#length = length;
    this.#byteLength = byteLength;
    this.#zeroed = zeroed;
  }

  get dtype(): D {
    return this.#dtype;
  }

  get dims(): readonly number[] {
    return this.#dims;
  }

  get length(): number {
    return this.#length;
  }

  get byteLength(): number {
    return this.#byteLength;
  }

  get zeroed(): boolean {
    return this.#zeroed;
  }

  toString(): string {
    const text = `Undef(${this.#dtype}, [${this.#dims.join(', ')}])`;
    return this.#zeroed ? `zeroed(${text})` : text;
  }

  // Node's console.log and util.inspect read this; the fields are private, so without it they
  // would print an empty object.
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return this.toString();
  }
}

Object.defineProperty(UndefImpl.prototype, undefKey, { value: true });

function make<D extends DType>(dtype: D, dims: readonly number[]): Undef<D> {
  const bytes = byteLength(dtype, dims);
  // Interned: equal dims share one frozen array, so a repeat copies nothing (an exemplar's dims,
  // already frozen, are kept as they are the first time).
  return new UndefImpl(dtype, internDims(dims), bytes / dtypeInfo(dtype).byteSize, bytes, false);
}

/**
 * Describe an array without allocating it.
 *
 * - `Undef(dtype, dims)` or `Undef(dtype, ...dims)`;
 * - `Undef(x)`: like the exemplar array `x` (a Pol array or a TypedArray), same dtype and dims;
 * - `Undef(x, dtype)`: `x`'s dims with another dtype;
 * - `Undef(x, dims)`: `x`'s dtype with other dims.
 *
 * The exemplar is read for its dtype and dims only, never its data.
 *
 * @throws {UnknownDTypeError} for a dtype this runtime does not support.
 * @throws {InvalidShapeError} for dims that are negative, fractional, NaN, infinite, or whose byte
 * size passes `Number.MAX_SAFE_INTEGER`.
 * @throws {InvalidArgumentError} when the first argument is neither a dtype nor an array.
 * @example
 * ```ts
 * import { Undef } from '@pol/core';
 * const a = Undef('float32', 3, 4);
 * const b = Undef('float32', [3, 4]);
 * const x = new Float64Array(8);
 * const c = Undef(x); // float64 [8]
 * const d = Undef(x, 'int32'); // int32 [8]
 * const e = Undef(x, [2, 2]); // float64 [2, 2]
 * console.log(String(a), a.byteLength); // 'Undef(float32, [3, 4])' 48
 * ```
 */
export function Undef<D extends DType>(dtype: D, dims: readonly number[]): Undef<D>;
export function Undef<D extends DType>(dtype: D, ...dims: number[]): Undef<D>;
export function Undef<A extends AnyArray>(exemplar: A): Undef<DTypeOf<A>>;
export function Undef<D extends DType>(exemplar: AnyArray, dtype: D): Undef<D>;
export function Undef<A extends AnyArray>(exemplar: A, dims: readonly number[]): Undef<DTypeOf<A>>;
export function Undef(first: unknown, second?: unknown): Undef {
  // Fixed parameters and the argument count, as in alloc: describers make Undefs on every call,
  // and a rest array would be garbage each time. Dims past the second argument are read by index.
  // biome-ignore lint/complexity/noArguments: the argument count tells the forms apart.
  const n = arguments.length;
  if (typeof first === 'string') {
    let dims: readonly number[];
    if (n === 2 && typeof second === 'number' && Number.isSafeInteger(second) && second >= 0) dims = internDim(second);
    else if (n === 2 && Array.isArray(second)) dims = second as number[];
    else if (n === 1) dims = internDims([]);
    else {
      const list: unknown[] = new Array(n - 1);
      // biome-ignore lint/complexity/noArguments: the rest dims, read by index.
      for (let i = 1; i < n; i++) list[i - 1] = arguments[i];
      dims = list as number[];
    }
    return make(first as DType, dims);
  }
  if (isArray(first)) {
    if (n > 2) {
      throw new InvalidArgumentError(
        `Undef(x, ...) takes at most one more argument, a dtype or a dims array, got ${n - 1}. ` +
          "Write Undef(x, 'float32') or Undef(x, [2, 3]); to change both, write Undef('float32', [2, 3]).",
      );
    }
    // A bare TypedArray's dims are interned from its length, not made (shapeOf would make them).
    const bare = dtypeOfTypedArray(first);
    const dtype = bare ?? (first as PolArray).dtype;
    const dims = bare === undefined ? (first as PolArray).dims : internDim((first as AnyTypedArray).length);
    if (n === 1 || second === undefined) return make(dtype, dims);
    if (typeof second === 'string') return make(second as DType, dims);
    if (Array.isArray(second)) return make(dtype, second as number[]);
    throw new InvalidArgumentError(
      `Undef(x, ...) takes a dtype (such as 'float32') or a dims array as its second argument, got ${describeValue(second)}.`,
    );
  }
  throw new InvalidArgumentError(
    `Undef needs a dtype (such as 'float32') or an exemplar array first, got ${describeValue(first)}. Write Undef('float32', 3, 4) or Undef(x).`,
  );
}

/**
 * Whether `x` is an {@link Undef}.
 *
 * @example
 * ```ts
 * import { isUndef, Undef } from '@pol/core';
 * isUndef(Undef('int8', 2)); // true
 * isUndef({ dtype: 'int8', dims: [2] }); // false
 * ```
 */
export function isUndef(x: unknown): x is Undef {
  return typeof x === 'object' && x !== null && (x as { [undefKey]?: unknown })[undefKey] === true;
}

/**
 * The same description, for an array that starts at zero: materializing it (`alloc`, `outputs`,
 * a verb, `Shadows`) zeroes the fresh array through its family's zeroing protocol, on every
 * backend (`clearBuffer` on WebGPU, recorded inside a capture). What accumulates (gradients, a
 * sum) is described this way, because arena memory holds whatever the last pass left. A buffer the
 * caller supplies in its place is used as it is, never zeroed, so a caller can accumulate into it.
 *
 * @throws {InvalidArgumentError} when `undef` is not an Undef.
 * @example
 * ```ts
 * import { alloc, Similar, Undef, zeroed } from '@pol/core';
 * const grad = zeroed(Undef('float32', 3));
 * console.log(String(grad), grad.zeroed); // 'zeroed(Undef(float32, [3]))' true
 * const { g } = alloc(Similar(new Float32Array(0)), { g: grad }); // zeroed, whatever the space
 * console.log(g.data); // Float32Array(3) [ 0, 0, 0 ]
 * ```
 */
export function zeroed<D extends DType>(undef: Undef<D>): Undef<D> {
  if (!isUndef(undef)) {
    throw new InvalidArgumentError(
      `zeroed(undef) takes an Undef, got ${describeValue(undef)}. Write zeroed(Undef('float32', 3)) or zeroed(Undef(x)).`,
    );
  }
  if (undef.zeroed === true) return undef;
  return new UndefImpl(undef.dtype, frozenDims(undef.dims), undef.length, undef.byteLength, true);
}
