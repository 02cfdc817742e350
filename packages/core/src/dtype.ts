import { UnknownDTypeError } from './errors.js';

/**
 * The element types Pol describes, spelled as the JavaScript numeric ecosystem spells them.
 * `float16` is usable only where the runtime has `Float16Array` (see {@link hasDType}).
 */
export type DType =
  | 'float16'
  | 'float32'
  | 'float64'
  | 'int8'
  | 'int16'
  | 'int32'
  | 'int64'
  | 'uint8'
  | 'uint16'
  | 'uint32'
  | 'uint64';

// Resolves to the runtime's Float16Array type when the consumer's `lib` declares it, and to
// `never` otherwise, so that these declarations compile under any `lib` setting.
type Float16ArrayType = typeof globalThis extends { Float16Array: { prototype: infer P } } ? P : never;

/**
 * The TypedArray that holds elements of each dtype.
 *
 * @example
 * ```ts
 * import type { TypedArrayByDType } from '@pol/core';
 * const halfwords: TypedArrayByDType['uint16'] = new Uint16Array(2);
 * ```
 */
export interface TypedArrayByDType {
  float16: Float16ArrayType;
  float32: Float32Array;
  float64: Float64Array;
  int8: Int8Array;
  int16: Int16Array;
  int32: Int32Array;
  int64: BigInt64Array;
  uint8: Uint8Array;
  uint16: Uint16Array;
  uint32: Uint32Array;
  uint64: BigUint64Array;
}

/** The TypedArray type for dtype `D`: `TypedArrayOf<'float32'>` is `Float32Array`. */
export type TypedArrayOf<D extends DType> = TypedArrayByDType[D];

/**
 * Any TypedArray Pol can describe (every TypedArray but `Uint8ClampedArray`).
 *
 * @example
 * ```ts
 * import { type AnyTypedArray, dtypeOfTypedArray } from '@pol/core';
 * const xs: AnyTypedArray[] = [new Float32Array(1), new BigInt64Array(1)];
 * console.log(xs.map((x) => dtypeOfTypedArray(x))); // [ 'float32', 'int64' ]
 * ```
 */
export type AnyTypedArray = TypedArrayByDType[DType];

/**
 * The constructor of a TypedArray, as used to make views over a slab.
 *
 * @example
 * ```ts
 * import { dtypeInfo, type TypedArrayConstructorOf } from '@pol/core';
 * const F64: TypedArrayConstructorOf<'float64'> = dtypeInfo('float64').TypedArray;
 * console.log(new F64(2)); // Float64Array(2) [ 0, 0 ]
 * ```
 */
export interface TypedArrayConstructorOf<D extends DType> {
  readonly BYTES_PER_ELEMENT: number;
  new (length: number): TypedArrayOf<D>;
  new (buffer: ArrayBufferLike, byteOffset: number, length: number): TypedArrayOf<D>;
}

/**
 * What Pol knows of a dtype.
 *
 * @example
 * ```ts
 * import { dtypeInfo, type DTypeInfo } from '@pol/core';
 * const info: DTypeInfo<'int16'> = dtypeInfo('int16');
 * console.log(info.byteSize, info.float, info.bigint); // 2 false false
 * ```
 */
export interface DTypeInfo<D extends DType = DType> {
  /** The dtype's name, such as `'float32'`. */
  readonly name: D;
  /** Bytes per element. */
  readonly byteSize: number;
  /**
   * The element's own alignment in bytes. JavaScript requires a TypedArray view's absolute byte
   * offset to be a multiple of its element size, so this equals {@link DTypeInfo.byteSize}.
   */
  readonly alignment: number;
  /** The TypedArray constructor for this dtype. */
  readonly TypedArray: TypedArrayConstructorOf<D>;
  /** Whether the elements are floating point (checked arenas poison these with NaN). */
  readonly float: boolean;
  /** Whether the elements are `bigint` (int64, uint64). */
  readonly bigint: boolean;
}

// The TypedArray of each dtype, by its global name, in the stable order `dtypes` lists them.
const tagNames: { readonly [D in DType]: string } = {
  float16: 'Float16Array',
  float32: 'Float32Array',
  float64: 'Float64Array',
  int8: 'Int8Array',
  int16: 'Int16Array',
  int32: 'Int32Array',
  int64: 'BigInt64Array',
  uint8: 'Uint8Array',
  uint16: 'Uint16Array',
  uint32: 'Uint32Array',
  uint64: 'BigUint64Array',
};

// Read from the global object once, at load: `float16` joins only where Float16Array exists.
const table: { [D in DType]?: DTypeInfo<D> } = {};
for (const name of Object.keys(tagNames) as DType[]) {
  const TypedArray = (globalThis as Record<string, unknown>)[tagNames[name]] as TypedArrayConstructorOf<DType> | undefined;
  if (TypedArray === undefined) continue;
  const float = name.startsWith('float');
  (table as Record<string, DTypeInfo>)[name] = Object.freeze({
    name,
    byteSize: TypedArray.BYTES_PER_ELEMENT,
    alignment: TypedArray.BYTES_PER_ELEMENT,
    TypedArray,
    float,
    bigint: !float && name.endsWith('64'),
  });
}
Object.freeze(table);

/**
 * The dtypes this runtime supports, in a stable order (`float16` only where `Float16Array` exists).
 *
 * @example
 * ```ts
 * import { dtypes } from '@pol/core';
 * console.log(dtypes.includes('float32')); // true
 * ```
 */
export const dtypes: readonly DType[] = Object.freeze(
  (Object.keys(tagNames) as DType[]).filter((name) => table[name] !== undefined),
);

/**
 * Whether `name` is a dtype this runtime supports.
 *
 * @example
 * ```ts
 * import { hasDType } from '@pol/core';
 * hasDType('float32'); // true
 * hasDType('complex64'); // false
 * ```
 */
export function hasDType(name: unknown): name is DType {
  return typeof name === 'string' && Object.hasOwn(table, name);
}

// A Map: the lookup on every alloc, cheaper than an own-property check on a frozen object.
const byName: ReadonlyMap<unknown, DTypeInfo> = new Map(dtypes.map((name) => [name, table[name] as DTypeInfo]));

/**
 * What Pol knows of a dtype: byte size, alignment, TypedArray constructor.
 *
 * @throws {UnknownDTypeError} when `name` is not a dtype this runtime supports.
 * @example
 * ```ts
 * import { dtypeInfo } from '@pol/core';
 * const f32 = dtypeInfo('float32');
 * console.log(f32.byteSize, f32.TypedArray === Float32Array); // 4 true
 * ```
 */
export function dtypeInfo<D extends DType>(name: D): DTypeInfo<D> {
  const found = byName.get(name);
  if (found === undefined) throw unknownDType(name);
  return found as DTypeInfo<D>;
}

function unknownDType(name: unknown): UnknownDTypeError {
  if (name === 'float16') {
    return new UnknownDTypeError(
      "dtype 'float16' needs Float16Array, which this runtime does not have. Use 'float32', or run on a runtime with Float16Array (Node.js 24+, current browsers).",
    );
  }
  const shown = typeof name === 'string' ? `'${name}'` : String(name);
  return new UnknownDTypeError(`Unknown dtype ${shown}. Use one of: ${dtypes.map((d) => `'${d}'`).join(', ')}.`);
}

/**
 * The dtype of a TypedArray, or `undefined` for anything else (including `Uint8ClampedArray` and
 * `DataView`, which Pol does not describe). Subclasses (Node.js's `Buffer` is a `Uint8Array`) and
 * TypedArrays from another realm (an iframe, a `vm` context) are recognized by their element type.
 *
 * @example
 * ```ts
 * import { dtypeOfTypedArray } from '@pol/core';
 * dtypeOfTypedArray(new Int32Array(4)); // 'int32'
 * ```
 */
export function dtypeOfTypedArray(x: unknown): DType | undefined {
  if (!ArrayBuffer.isView(x)) return undefined;
  // %TypedArray%.prototype[@@toStringTag] reads the element type from the array's internal slot:
  // it cannot be fooled by a reassigned `constructor`, and answers undefined for a DataView.
  const tag: unknown = typedArrayTag.call(x);
  return typeof tag === 'string' ? byTag.get(tag) : undefined;
}

const typedArrayTag: (this: unknown) => unknown =
  Object.getOwnPropertyDescriptor(Object.getPrototypeOf(Int8Array.prototype) as object, Symbol.toStringTag)?.get ??
  (() => undefined);

const byTag: ReadonlyMap<string, DType> = new Map(dtypes.map((name) => [tagNames[name], name]));
