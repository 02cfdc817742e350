/**
 * Carve layout: how many bytes a carve takes and where it may start. One validation, shared by the
 * arena's slow path and the free `carve()`.
 *
 * @module
 */

import { byteLength, type DType, type DTypeInfo, dtypeInfo, elementCount } from '@pol/core';
import { internDims, sameDims } from '@pol/core/backend';
import type { AnyStorage } from './types.js';

/**
 * A carve's measurements, filled in by {@link measureCarve}. The arena keeps one and refills it on
 * every miss, so measuring allocates nothing. It remembers what it measured last, so a run of first
 * carves of one shape (every array of a layer, say) validates and looks the dtype up once.
 */
export class CarveSize {
  /**
   * The dtype measured; '' before the first (no dtype is ''). A string from the start: a compare of
   * a dtype with this field that has only ever seen strings is a pointer compare, where one that
   * once saw undefined stays a call of V8's generic equality, on every carve.
   */
  dtype: string = '';
  /**
   * The dims measured, interned (frozen and shared): what the carved array gets. Before the first,
   * dims no caller can pass as measured ones (see `unmeasured`).
   */
  dims: readonly number[] = unmeasured;
  /**
   * Their rank and first dim (0 for rank 0), kept as numbers: what a repeat compares, and what a
   * cache entry keys on. Node 20's optimizing compiler reads an element of a frozen array, such as
   * interned dims, through a generic lookup, which cost a first carve a few nanoseconds at each read.
   */
  rank = -1;
  d0 = 0;
  /** What dtypeInfo says of the dtype. */
  info: DTypeInfo | undefined = undefined;
  /** `prod(dims)`. */
  count = 0;
  /** `byteSize(dtype) × prod(dims)`. */
  bytes = 0;
  /** What the carve takes from the slab: the storage's `reserve(bytes)`, or `bytes`. */
  reserved = 0;
  /** The element size, which a view's absolute byte offset must be a multiple of. */
  elementAlignment = 1;
}

// Before the first measurement: of rank 1 with a negative dim, so that no dims repeat it (a 1-D
// repeat needs the rank of 1 that only a measurement sets, and any other rank differs in length),
// where empty dims would have made ('', []) look measured already.
const unmeasured: readonly number[] = Object.freeze([-1]);

/**
 * Validate `dtype[dims]` and measure a carve of it from `storage` into `out`, unless `out` already
 * holds the measurement of this very dtype and dims (validated then).
 *
 * @throws {UnknownDTypeError} for a dtype Pol does not know.
 * @throws {InvalidShapeError} for dims that are not an array of non-negative safe integers, or too many bytes.
 */
export function measureCarve(storage: AnyStorage, dtype: DType, dims: readonly number[], out: CarveSize): CarveSize {
  if (
    dtype === out.dtype &&
    // The very dims measured (interned dims, as alloc(space, dtype, n) and Undef pass them) first:
    // Node 20 reads an element of frozen dims through a generic lookup, a call on every carve.
    (dims === out.dims ||
      (Array.isArray(dims) && (dims.length === 1 ? out.rank === 1 && out.d0 === dims[0] : sameDims(out.dims, dims))))
  ) {
    return out;
  }
  const info = dtypeInfo(dtype); // throws for an unknown dtype, before dims are looked at (as byteLength does)
  const count = elementCount(dims); // validates dims
  let bytes = count * info.byteSize;
  // Past the safe range: core's byteLength throws the error that says so.
  if (!Number.isSafeInteger(bytes)) bytes = byteLength(dtype, dims);
  const reserve = storage.reserve;
  out.dtype = dtype;
  out.dims = internDims(dims);
  out.rank = dims.length;
  out.d0 = dims.length === 0 ? 0 : (dims[0] as number);
  out.info = info;
  out.count = count;
  out.bytes = bytes;
  out.reserved = reserve === undefined ? bytes : reserve.call(storage, bytes);
  out.elementAlignment = info.alignment;
  return out;
}

/**
 * How far past `offset` a carve must start for its absolute byte offset (`base + offset`) to be a
 * multiple of `elementAlignment`, as JavaScript requires of a view: 0 when it already is.
 */
export function elementPadding(base: number, offset: number, elementAlignment: number): number {
  const at = base + offset;
  // Element sizes are powers of two: below 2^30 a mask does what `%` does, without a division.
  const misfit = at < 0x40000000 ? at & (elementAlignment - 1) : at % elementAlignment;
  return misfit === 0 ? 0 : elementAlignment - misfit;
}

/**
 * `x` rounded up to a multiple of `alignment`, a power of two. Offsets below 2^30 (every slab up to
 * a gigabyte, and the start of any larger one) take the bit mask, which is much cheaper than a
 * division; the rest take `%`.
 */
export function alignUp(x: number, alignment: number): number {
  if (x < 0x40000000 && alignment <= 0x40000000) return (x + alignment - 1) & -alignment;
  const r = x % alignment;
  return r === 0 ? x : x + alignment - r;
}
