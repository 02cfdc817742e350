import type { ArrayOf, DType } from '@pol/core';
import { shapeText } from '@pol/core/backend';
import { CarveRangeError, MisalignedCarveError } from './errors.js';
import { CarveSize, elementPadding, measureCarve } from './layout.js';
import { storageFor } from './registry.js';
import type { Slab, SlabKind } from './slab.js';

/**
 * A `dims`-shaped `dtype` array over the slab's bytes from `offset`, aliasing them, never copying:
 * the one function that touches memory, and the point where each kind of storage specializes
 * (ArrayBuffer and SharedArrayBuffer give native TypedArray views, a Uint8Array or Node.js Buffer
 * gives views at its own `byteOffset`, a WebAssembly.Memory gives arrays that follow its buffer
 * across `grow`, and `defineStorage` adds more, such as GPUBuffer). Arenas call it for you; call it
 * directly to view a region of a slab you manage yourself. Every call makes a new array object.
 *
 * `offset` is relative to the slab's first byte; the absolute byte offset (`slab.byteOffset +
 * offset` for a Uint8Array) must be a multiple of the element size, as JavaScript requires.
 *
 * @throws {InvalidSlabError} for a slab no storage accepts.
 * @throws {CarveRangeError} for an offset that is not a non-negative integer, or a range past the end.
 * @throws {MisalignedCarveError} when the absolute byte offset is not a multiple of the element size.
 * @example
 * ```ts
 * import { carve } from '@pol/arena';
 * const slab = new ArrayBuffer(64);
 * const a = carve(slab, 0, 'float32', [2, 2]); // HostArray<'float32'> over bytes 0..16
 * const b = carve(slab, 0, 'uint8', [16]); // the same bytes, seen as uint8
 * a.data[0] = 1;
 * console.log(b.data[3]); // 63: the high byte of 1.0f
 * ```
 */
export function carve<S extends Slab, D extends DType>(
  slab: S,
  offset: number,
  dtype: D,
  dims: readonly number[],
): ArrayOf<SlabKind<S>, D> {
  const storage = storageFor(slab, 'carve(slab, offset, dtype, dims)');
  storage.checkSlab?.(slab as never);
  const { reserved, elementAlignment: size, dims: shared } = measureCarve(storage, dtype, dims, new CarveSize());
  const capacity = storage.byteLength(slab as never);
  if (typeof offset !== 'number' || !Number.isSafeInteger(offset) || offset < 0) {
    throw new CarveRangeError(`carve: offset must be a non-negative integer byte offset into the slab, got ${String(offset)}.`);
  }
  if (offset + reserved > capacity) {
    throw new CarveRangeError(
      `carve: ${shapeText(dtype, dims)} at offset ${offset} needs bytes ${offset} to ${offset + reserved}, ` +
        `but the ${storage.name} slab has ${capacity} bytes. Carve within the slab.`,
    );
  }
  const base = storage.byteOffset === undefined ? 0 : storage.byteOffset(slab as never);
  if (elementPadding(base, offset, size) !== 0) {
    throw new MisalignedCarveError(
      `carve: ${dtype} needs an absolute byte offset that is a multiple of ${size}, but offset ${offset}` +
        (base === 0 ? '' : ` from the slab's byteOffset ${base}`) +
        ` is at byte ${base + offset}. Round the offset up to the next multiple of ${size}` +
        (base % size === 0 ? '.' : ' (the slab itself starts off that grid, so account for its byteOffset).'),
    );
  }
  return storage.carve(slab as never, offset, dtype, shared) as ArrayOf<SlabKind<S>, D>;
}
