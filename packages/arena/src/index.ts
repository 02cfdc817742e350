/**
 * `@pol/arena`: a bump allocator over one preallocated slab of bytes (an ArrayBuffer, a
 * SharedArrayBuffer, a Uint8Array or Node.js Buffer, a WebAssembly memory, or a GPU buffer through a
 * storage extension), with marks, frames, a watermark, a checked mode, and a steady loop that
 * allocates nothing after its first step. Frames open through `scratchspace` from `@pol/core`.
 *
 * What a storage extension needs (`SlabStorage`, `defineStorage`, `SlabTypes`, `ArrayLife`,
 * `POISON_BYTE`) is in `@pol/arena/backend`.
 *
 * @packageDocumentation
 */

export { Arena } from './arena.js';
export { carve } from './carve.js';
export {
  ArenaFullError,
  CarveRangeError,
  ContendedError,
  DisposedArenaError,
  ForeignMarkError,
  ForeignMemoryError,
  FrameOrderError,
  InvalidAlignmentError,
  InvalidRegionError,
  InvalidSlabError,
  MarkAboveOffsetError,
  MisalignedCarveError,
  MissingRegionError,
  NotAnArenaError,
  RegionOverlapError,
  StaleArrayError,
  StaleMarkError,
} from './errors.js';
export { isArena, mark, observe, reset, retract, tryAlloc, watermark } from './functions.js';
export type { ArenaEvent, ArenaListener } from './listeners.js';
export type { Mark } from './mark.js';
export { pointer } from './pointer.js';
export {
  type ClaimOptions,
  claimRegion,
  createSharedSlab,
  describeSharedSlab,
  freeRegion,
  type SharedSlabDescription,
  type SharedSlabLayout,
} from './shared-slab.js';
export type { Slab, SlabKind, SlabOf, WasmMemory } from './slab.js';
export type {
  ArenaConstructor,
  ArenaDescription,
  ArenaFrame,
  ArenaOptions,
  ArenaStorageOptions,
  WasmArenaOptions,
} from './types.js';
