/**
 * The errors `@pol/arena` throws: one class per kind of mistake, each a `PolError` from `@pol/core`
 * with a stable `code`. An operation that throws one of these has changed nothing: offset,
 * watermark, epoch, open frames and the array cache are as they were before the call.
 *
 * @module
 */

import { PolError } from '@pol/core';

/**
 * An allocation did not fit in what is left of the arena's slab. The arena never grows.
 *
 * @example
 * ```ts
 * import { Arena, ArenaFullError } from '@pol/arena';
 * const arena = new Arena(new ArrayBuffer(16));
 * try {
 *   arena.alloc('float32', [8]);
 * } catch (e) {
 *   if (e instanceof ArenaFullError) console.log(e.requested, e.available); // 32 16
 * }
 * ```
 */
export class ArenaFullError extends PolError {
  /** Bytes the allocation needed, including the padding that aligns its start. */
  readonly requested: number;
  /** Bytes left between the arena's offset and the end of its slab. */
  readonly available: number;
  /** The arena's watermark when the allocation was refused. */
  readonly watermark: number;

  constructor(message: string, requested: number, available: number, watermark: number) {
    super('POL_ARENA_FULL', message);
    this.requested = requested;
    this.available = available;
    this.watermark = watermark;
  }
}

/**
 * A mark no longer describes the arena: it was taken before a `reset` (an older epoch), or a later
 * retract went below it, so the bytes above it have been handed out again.
 *
 * @example
 * ```ts
 * import { Arena, mark, reset, retract, StaleMarkError } from '@pol/arena';
 * const arena = new Arena(new ArrayBuffer(1024));
 * const m = mark(arena);
 * reset(arena);
 * try {
 *   retract(arena, m);
 * } catch (e) {
 *   console.log(e instanceof StaleMarkError); // true
 * }
 * ```
 */
export class StaleMarkError extends PolError {
  constructor(message: string) {
    super('POL_STALE_MARK', message);
  }
}

/**
 * A mark taken on one arena was handed to another.
 *
 * @example
 * ```ts
 * import { Arena, mark, retract, ForeignMarkError } from '@pol/arena';
 * const a = new Arena(new ArrayBuffer(1024));
 * const b = new Arena(new ArrayBuffer(1024));
 * try {
 *   retract(b, mark(a));
 * } catch (e) {
 *   console.log(e instanceof ForeignMarkError); // true
 * }
 * ```
 */
export class ForeignMarkError extends PolError {
  constructor(message: string) {
    super('POL_FOREIGN_MARK', message);
  }
}

/**
 * A retract to a mark above the arena's current offset: the offset only moves back.
 *
 * @example
 * ```ts
 * import { Arena, mark, retract, MarkAboveOffsetError } from '@pol/arena';
 * const arena = new Arena(new ArrayBuffer(1024));
 * const low = mark(arena);
 * arena.alloc('uint8', [16]);
 * const high = mark(arena);
 * retract(arena, low);
 * try {
 *   retract(arena, high);
 * } catch (e) {
 *   console.log(e instanceof MarkAboveOffsetError); // true
 * }
 * ```
 */
export class MarkAboveOffsetError extends PolError {
  constructor(message: string) {
    super('POL_MARK_ABOVE_OFFSET', message);
  }
}

/**
 * Frames used out of order: allocating from a frame (or the bare arena) while a frame opened
 * inside it is still open, closing a frame before the frames opened inside it, or a retract or
 * reset that would release the bytes of an open frame.
 *
 * @example
 * ```ts
 * import { Arena, FrameOrderError } from '@pol/arena';
 * import { scratchspace } from '@pol/core';
 * const arena = new Arena(new ArrayBuffer(1024));
 * scratchspace(arena, () => {
 *   try {
 *     arena.alloc('float32', [4]); // the frame is open: allocate from it instead
 *   } catch (e) {
 *     console.log(e instanceof FrameOrderError); // true
 *   }
 * });
 * ```
 */
export class FrameOrderError extends PolError {
  constructor(message: string) {
    super('POL_FRAME_ORDER', message);
  }
}

/**
 * A frame was opened on an arena whose innermost open frame belongs to someone else: what two async
 * tasks sharing one arena look like. The holder's frame and arrays are untouched.
 *
 * @example
 * ```ts
 * import { Arena, ContendedError } from '@pol/arena';
 * import { scratchspace } from '@pol/core';
 * const arena = new Arena(new ArrayBuffer(1024));
 * const holder = scratchspace(arena, async () => {
 *   await new Promise((resolve) => setTimeout(resolve, 1));
 * });
 * try {
 *   await scratchspace(arena, async () => {});
 * } catch (e) {
 *   console.log(e instanceof ContendedError); // true
 * }
 * await holder;
 * ```
 */
export class ContendedError extends PolError {
  constructor(message: string) {
    super('POL_CONTENDED', message);
  }
}

/**
 * An array carved by a checked arena was read after it died: its frame closed, a retract released
 * it, or the arena was reset. The message names the array and the release that killed it.
 *
 * @example
 * ```ts
 * import { Arena, StaleArrayError } from '@pol/arena';
 * import { alloc, scratchspace } from '@pol/core';
 * const arena = new Arena(new ArrayBuffer(1024), { checked: true });
 * const escaped = scratchspace(arena, (frame) => alloc(frame, 'float32', 4));
 * try {
 *   escaped.data;
 * } catch (e) {
 *   console.log(e instanceof StaleArrayError); // true
 * }
 * ```
 */
export class StaleArrayError extends PolError {
  constructor(message: string) {
    super('POL_STALE_ARRAY', message);
  }
}

/**
 * An arena alignment that is not a power of two (0, 3, 0.5, a negative number, NaN), or one the
 * slab's storage cannot honour.
 *
 * @example
 * ```ts
 * import { Arena, InvalidAlignmentError } from '@pol/arena';
 * try {
 *   new Arena(new ArrayBuffer(1024), { alignment: 3 });
 * } catch (e) {
 *   console.log(e instanceof InvalidAlignmentError); // true
 * }
 * ```
 */
export class InvalidAlignmentError extends PolError {
  constructor(message: string) {
    super('POL_INVALID_ALIGNMENT', message);
  }
}

/**
 * Something that no storage accepts as a slab (a plain array, a number, a DataView, a Float32Array),
 * or a slab its storage refuses (a resizable or detached ArrayBuffer).
 *
 * @example
 * ```ts
 * import { Arena, InvalidSlabError } from '@pol/arena';
 * try {
 *   new Arena(new Float32Array(256) as never);
 * } catch (e) {
 *   console.log(e instanceof InvalidSlabError); // true
 * }
 * ```
 */
export class InvalidSlabError extends PolError {
  constructor(message: string) {
    super('POL_INVALID_SLAB', message);
  }
}

/**
 * Something other than an arena (or a frame on one) was passed where an arena is required.
 *
 * @example
 * ```ts
 * import { mark, NotAnArenaError } from '@pol/arena';
 * try {
 *   mark({} as never);
 * } catch (e) {
 *   console.log(e instanceof NotAnArenaError); // true
 * }
 * ```
 */
export class NotAnArenaError extends PolError {
  constructor(message: string) {
    super('POL_NOT_AN_ARENA', message);
  }
}

/**
 * `carve` was asked for bytes outside its slab: a negative or fractional offset, or a range
 * running past the end.
 *
 * @example
 * ```ts
 * import { carve, CarveRangeError } from '@pol/arena';
 * try {
 *   carve(new ArrayBuffer(16), 8, 'float32', [4]);
 * } catch (e) {
 *   console.log(e instanceof CarveRangeError); // true
 * }
 * ```
 */
export class CarveRangeError extends PolError {
  constructor(message: string) {
    super('POL_CARVE_RANGE', message);
  }
}

/**
 * `carve` was asked for a view whose absolute byte offset is not a multiple of its element size,
 * which JavaScript's TypedArrays cannot express.
 *
 * @example
 * ```ts
 * import { carve, MisalignedCarveError } from '@pol/arena';
 * try {
 *   carve(new ArrayBuffer(16), 2, 'float32', [2]);
 * } catch (e) {
 *   console.log(e instanceof MisalignedCarveError); // true
 * }
 * ```
 */
export class MisalignedCarveError extends PolError {
  constructor(message: string) {
    super('POL_MISALIGNED_CARVE', message);
  }
}

/**
 * A region option of `new Arena(slab, { byteOffset, byteLength })` that does not describe bytes of
 * the slab the arena may use: negative, fractional or not a number, zero bytes long, past the end
 * of the slab, starting on a byte that is not a multiple of 8 (or of the arena's alignment, if
 * smaller), or given for a slab whose storage has no regions (a device buffer).
 *
 * @example
 * ```ts
 * import { Arena, InvalidRegionError } from '@pol/arena';
 * try {
 *   new Arena(new ArrayBuffer(1024), { byteOffset: 512, byteLength: 1024 });
 * } catch (e) {
 *   console.log(e instanceof InvalidRegionError); // true
 * }
 * ```
 */
export class InvalidRegionError extends PolError {
  constructor(message: string) {
    super('POL_INVALID_REGION', message);
  }
}

/**
 * `new Arena(memory)` over a WebAssembly memory without saying which of its bytes the arena may
 * use. A module's memory holds its own heap, stack and data, which an arena over all of it would
 * carve over; pass `{ byteOffset, byteLength }` (a block the module's `malloc` returned), or
 * `{ byteOffset: 0 }` for a memory that holds nothing else. In TypeScript, leaving the region out
 * over a memory is a type error already.
 *
 * @example In JavaScript:
 * ```js
 * import { Arena, MissingRegionError } from '@pol/arena';
 * const memory = new WebAssembly.Memory({ initial: 1 });
 * try {
 *   new Arena(memory);
 * } catch (e) {
 *   console.log(e instanceof MissingRegionError); // true
 * }
 * const own = new Arena(memory, { byteOffset: 0 }); // the whole memory, asked for outright
 * ```
 */
export class MissingRegionError extends PolError {
  constructor(message: string) {
    super('POL_MISSING_REGION', message);
  }
}

/**
 * A region overlaps one that another arena in this thread holds: two arenas carving the same bytes
 * would overwrite each other's arrays. The holder keeps its region until it is disposed
 * (`arena.dispose()`, or `using`) or collected.
 *
 * @example
 * ```ts
 * import { Arena, RegionOverlapError } from '@pol/arena';
 * const buffer = new ArrayBuffer(4096);
 * const first = new Arena(buffer, { byteOffset: 0, byteLength: 2048 });
 * try {
 *   new Arena(buffer, { byteOffset: 1024, byteLength: 2048 });
 * } catch (e) {
 *   console.log(e instanceof RegionOverlapError); // true
 * }
 * first.dispose();
 * const second = new Arena(buffer, { byteOffset: 1024, byteLength: 2048 }); // free again
 * ```
 */
export class RegionOverlapError extends PolError {
  constructor(message: string) {
    super('POL_REGION_OVERLAP', message);
  }
}

/**
 * A carve from an arena that has been disposed: its region may belong to another arena by now.
 *
 * @example
 * ```ts
 * import { Arena, DisposedArenaError } from '@pol/arena';
 * const arena = new Arena(new ArrayBuffer(1024));
 * arena.dispose();
 * try {
 *   arena.alloc('float32', [4]);
 * } catch (e) {
 *   console.log(e instanceof DisposedArenaError); // true
 * }
 * ```
 */
export class DisposedArenaError extends PolError {
  constructor(message: string) {
    super('POL_DISPOSED_ARENA', message);
  }
}

/**
 * `pointer(array, memory)` for an array whose bytes are not in `memory`: a WebAssembly export
 * given its offset would read and write other bytes of the module's heap.
 *
 * @example
 * ```ts
 * import { Arena, ForeignMemoryError, pointer } from '@pol/arena';
 * import { alloc, Similar } from '@pol/core';
 * const memory = new WebAssembly.Memory({ initial: 1 });
 * const arena = new Arena(memory, { byteOffset: 1024, byteLength: 4096 });
 * const x = alloc(arena, 'float32', 16);
 * console.log(pointer(x, memory)); // 1024
 * try {
 *   pointer(alloc(Similar(x), 'float32', 16), memory);
 * } catch (e) {
 *   console.log(e instanceof ForeignMemoryError); // true
 * }
 * ```
 */
export class ForeignMemoryError extends PolError {
  constructor(message: string) {
    super('POL_FOREIGN_MEMORY', message);
  }
}
