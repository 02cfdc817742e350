/**
 * The public types of `@pol/arena` other than the `Arena` interface itself (which lives beside its
 * constructor in `arena.ts`): options, events, descriptions and frames (marks live in `mark.ts`).
 *
 * @module
 */

import type { ArrayOf, DType, Frame, Kind } from '@pol/core';
import { openFrameKey } from '@pol/core/backend';
import type { Arena } from './arena.js';
import type { SlabStorage, SlabTypes } from './storage.js';

/**
 * The slab type of a `K` arena: `SlabOf<'host'>` is ArrayBuffer, SharedArrayBuffer, Uint8Array or a
 * WebAssembly memory.
 *
 * @example
 * ```ts
 * import { Arena, type SlabOf } from '@pol/arena';
 * const slab: SlabOf<'host'> = new ArrayBuffer(1024);
 * const arena = new Arena(slab);
 * ```
 */
export type SlabOf<K extends Kind> = K extends keyof SlabTypes ? SlabTypes[K] : unknown;

/**
 * Options of `new Arena(slab, options)`.
 *
 * @example
 * ```ts
 * import { Arena, type ArenaOptions } from '@pol/arena';
 * const options: ArenaOptions = { alignment: 64, checked: true };
 * const arena = new Arena(new ArrayBuffer(4096), options);
 * ```
 */
export interface ArenaOptions {
  /**
   * Where each carve starts, relative to the first byte of the arena's region (the slab's, without
   * one): a power of two. Default 256. A carve also starts at a multiple of its element size in
   * absolute terms (see the README).
   */
  readonly alignment?: number;
  /**
   * The first byte of the arena's region in the slab: the arena carves from
   * `[byteOffset, byteOffset + byteLength)` and never reads or writes a byte outside it. A
   * non-negative integer on a multiple of 8 bytes (or of the alignment, if smaller), counted from the
   * slab's first byte. Required over a `WebAssembly.Memory`, which may hold a module's own heap
   * (pass the pointer its `malloc` returned, or 0 for a memory that holds nothing else); default 0
   * for every other slab.
   */
  readonly byteOffset?: number;
  /** The region's length in bytes, at least 1: the arena's capacity. Default: the rest of the slab. */
  readonly byteLength?: number;
  /**
   * Checked mode: released bytes are poisoned, arrays refuse reads once they die, and array objects
   * are never reused. For tests and debugging; off by default, and free when off.
   */
  readonly checked?: boolean;
}

/**
 * Options of an arena over a WebAssembly memory: the region is required, since the memory may hold
 * a module's own heap.
 *
 * @example
 * ```ts
 * import { Arena, type WasmArenaOptions } from '@pol/arena';
 * const memory = new WebAssembly.Memory({ initial: 1 });
 * const options: WasmArenaOptions = { byteOffset: 1024, byteLength: 8192 }; // say, from the module's malloc
 * const arena = new Arena(memory, options);
 * ```
 */
export interface WasmArenaOptions extends ArenaOptions {
  readonly byteOffset: number;
}

/**
 * Options naming the storage outright, for a slab type no {@link SlabTypes} entry declares.
 *
 * @example
 * ```ts
 * import { Arena, type ArenaStorageOptions, type SlabStorage } from '@pol/arena';
 * import { dtypeInfo } from '@pol/core';
 * import { makeHostArray } from '@pol/core/backend';
 * class Pages {
 *   readonly bytes = new ArrayBuffer(4096);
 * }
 * const pages: SlabStorage<Pages, 'host'> = {
 *   name: 'Pages',
 *   kind: 'host',
 *   residency: 'host',
 *   matches: (slab): slab is Pages => slab instanceof Pages,
 *   byteLength: (slab) => slab.bytes.byteLength,
 *   carve: (slab, offset, dtype, dims) =>
 *     makeHostArray(dtype, dims, new (dtypeInfo(dtype).TypedArray)(slab.bytes, offset, dims.reduce((a, b) => a * b, 1))),
 * };
 * const options: ArenaStorageOptions<Pages, 'host'> = { storage: pages, alignment: 64 };
 * const arena = new Arena(new Pages(), options); // Arena<'host'>
 * ```
 */
export interface ArenaStorageOptions<S, K extends Kind> extends ArenaOptions {
  /** The storage to carve `slab` with, instead of the first registered one that matches it. */
  readonly storage: SlabStorage<S, K>;
}

/**
 * What `observe` listeners receive after each retract (frame closes included) and reset.
 *
 * @example
 * ```ts
 * import { Arena, type ArenaEvent, observe } from '@pol/arena';
 * const arena = new Arena(new ArrayBuffer(1024));
 * const log: ArenaEvent[] = [];
 * observe(arena, (event) => log.push(event));
 * arena.reset(); // log: [{ kind: 'reset', offset: 0, epoch: 1 }]
 * ```
 */
export interface ArenaEvent {
  /** `'retract'` for a retract, a frame close or a rolled-back allocation; `'reset'` for a reset. */
  readonly kind: 'retract' | 'reset';
  /** The arena's offset after the release: every byte from here up is released. */
  readonly offset: number;
  /** The arena's epoch after the release. */
  readonly epoch: number;
}

/**
 * A listener passed to `observe`.
 *
 * @example
 * ```ts
 * import { Arena, type ArenaListener, observe } from '@pol/arena';
 * let pinnedEnd = 512; // say, the end of the region a captured graph uses
 * const invalidate: ArenaListener = (event) => {
 *   if (event.offset < pinnedEnd) pinnedEnd = 0;
 * };
 * observe(new Arena(new ArrayBuffer(1024)), invalidate);
 * ```
 */
export type ArenaListener = (event: ArenaEvent) => void;

/**
 * What `arena.describe()` returns: a snapshot of the arena's state.
 *
 * @example
 * ```ts
 * import { Arena, type ArenaDescription } from '@pol/arena';
 * const arena = new Arena(new ArrayBuffer(1 << 20));
 * arena.alloc('float32', [256]);
 * const d: ArenaDescription<'host'> = arena.describe();
 * console.log(d.residency, d.capacity, d.offset, d.watermark, d.openFrames); // 'host' 1048576 1024 1024 0
 * ```
 */
export interface ArenaDescription<K extends Kind = Kind> {
  /** The kind of arrays it carves. */
  readonly kind: K;
  /** The storage's name, such as `'ArrayBuffer'`. */
  readonly storage: string;
  /** Where its bytes live. */
  readonly residency: 'host' | 'device';
  /** The region's size in bytes (the slab's, without one). */
  readonly capacity: number;
  /** Where the region starts in the slab (0 without one). */
  readonly byteOffset: number;
  /** Whether the arena was disposed: it carves nothing more, and its region is free for another arena. */
  readonly disposed: boolean;
  /** The first free byte. */
  readonly offset: number;
  /** The highest offset ever reached, across resets. */
  readonly watermark: number;
  /** Where carves start, relative to the region's first byte. */
  readonly alignment: number;
  /** How many resets the arena has been through. */
  readonly epoch: number;
  /** Whether the arena is in checked mode. */
  readonly checked: boolean;
  /** How many frames are open on it. */
  readonly openFrames: number;
  /** The offset each open frame opened at (and will retract to), outermost first. */
  readonly frameMarks: readonly number[];
  /** How many array objects it has ever made: flat once a loop is steady. */
  readonly arraysCreated: number;
}

/**
 * A frame on an arena: `scratchspace(arena, f)` hands one to `f`. It marks the arena when it opens
 * and retracts to that mark when it closes, so everything carved through it dies at once. It
 * allocates only while it is the arena's innermost open frame. An unchecked arena reuses its frame
 * objects, one per depth: a frame kept after it closes refuses every use until the next frame
 * opens at its depth, which is the same object.
 *
 * @example
 * ```ts
 * import { Arena, type ArenaFrame } from '@pol/arena';
 * import { scratchspace } from '@pol/core';
 * const arena = new Arena(new ArrayBuffer(1024));
 * scratchspace(arena, (frame) => {
 *   const f = frame as ArenaFrame<'host'>; // scratchspace types it as core's Frame<'host'>
 *   const tmp = f.tryAlloc('float32', [64]); // undefined if it does not fit
 *   console.log(f.start, f.arena === arena, tmp?.data.length); // 0 true 64
 * });
 * ```
 */
export interface ArenaFrame<K extends Kind = Kind> extends Frame<K> {
  /** The arena it was opened on (directly or through outer frames). */
  readonly arena: Arena<K>;
  /** The arena's offset when the frame opened: where closing it retracts to. */
  readonly start: number;
  /** Like `alloc`, but `undefined` instead of `ArenaFullError` when the array does not fit. */
  tryAlloc<D extends DType>(dtype: D, dims: readonly number[]): ArrayOf<K, D> | undefined;
  /** Open a frame nested in this one (what `scratchspace(frame, f)` calls). */
  [openFrameKey](): ArenaFrame<K>;
}
