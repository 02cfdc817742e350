/**
 * Carve layout: how many bytes a carve takes and where it may start. One validation, shared by the
 * arena's slow path and the free `carve()`.
 *
 * @module
 */

import { byteLength, type DType, dtypeInfo } from '@pol/core';
import type { AnyStorage } from './storage.js';

/**
 * A carve's measurements, filled in by {@link measureCarve}. The arena keeps one and refills it on
 * every miss, so measuring allocates nothing.
 */
export class CarveSize {
  /** `byteSize(dtype) × prod(dims)`. */
  bytes = 0;
  /** What the carve takes from the slab: the storage's `reserve(bytes)`, or `bytes`. */
  reserved = 0;
  /** The element size, which a view's absolute byte offset must be a multiple of. */
  elementAlignment = 1;
}

/**
 * Validate `dtype[dims]` and measure a carve of it from `storage` into `out`.
 *
 * @throws {UnknownDTypeError} for a dtype Pol does not know.
 * @throws {InvalidShapeError} for dims that are not an array of non-negative safe integers, or too many bytes.
 */
export function measureCarve(storage: AnyStorage, dtype: DType, dims: readonly number[], out: CarveSize): CarveSize {
  const bytes = byteLength(dtype, dims); // validates dtype and dims
  const reserve = storage.reserve;
  out.bytes = bytes;
  out.reserved = reserve === undefined ? bytes : reserve.call(storage, bytes);
  out.elementAlignment = dtypeInfo(dtype).alignment;
  return out;
}

/**
 * How far past `offset` a carve must start for its absolute byte offset (`base + offset`) to be a
 * multiple of `elementAlignment`, as JavaScript requires of a view: 0 when it already is.
 */
export function elementPadding(base: number, offset: number, elementAlignment: number): number {
  const misfit = (base + offset) % elementAlignment;
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
