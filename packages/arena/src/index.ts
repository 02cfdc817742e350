/**
 * `@pol/arena`: a bump allocator over one preallocated slab of bytes (an ArrayBuffer, a
 * SharedArrayBuffer, a Uint8Array or Node.js Buffer, a WebAssembly memory, or a GPU buffer through a
 * storage extension), with marks, frames, a watermark, a checked mode, and a steady loop that
 * allocates nothing after its first step. Frames open through `scratchspace` from `@pol/core`.
 *
 * @packageDocumentation
 */

export {
  Arena,
  type ArenaConstructor,
  type ArenaDescription,
  type ArenaEvent,
  type ArenaFrame,
  type ArenaListener,
  type ArenaOptions,
  type ArenaStorageOptions,
  type Mark,
  type SlabOf,
} from './arena.js';
export { carve } from './carve.js';
export {
  ArenaFullError,
  CarveRangeError,
  ContendedError,
  ForeignMarkError,
  FrameOrderError,
  InvalidAlignmentError,
  InvalidSlabError,
  MarkAboveOffsetError,
  MisalignedCarveError,
  NotAnArenaError,
  StaleArrayError,
  StaleMarkError,
} from './errors.js';
export { POISON_BYTE } from './host.js';
export {
  type ArrayLife,
  defineStorage,
  type Slab,
  type SlabKind,
  type SlabStorage,
  type SlabTypes,
  type WasmMemory,
} from './storage.js';
export { isArena, mark, observe, reset, retract, tryAlloc, watermark } from './verbs.js';
