/// <reference lib="esnext.disposable" preserve="true" />
/**
 * The public interfaces of an arena, its frames and the storages it carves with, which name each
 * other (an arena has a storage, a storage is told of each arena made over it, a frame belongs to
 * an arena): `Arena` with its constructor's type, options and description, `ArenaFrame`, and
 * `SlabStorage` with the `ArrayLife` it hands checked arrays. One module, so that no import cycle
 * runs between them. The last two are exported from `@pol/arena/backend`, for storage extensions.
 * The members of core's space protocol that an arena and its frames implement (`[openFrameKey]`,
 * `[savepointKey]`, `[rollbackKey]`) are declared only where the package calls them (`FrameOwner`,
 * frame.ts): a user's `Arena` and `ArenaFrame` have them as core's `Space` declares them, optional.
 *
 * @module
 */

import type { ArrayOf, DType, Frame, Kind, Space } from '@pol/core';
import type { ArenaListener } from './listeners.js';
import type { Mark } from './mark.js';
import type { Slab, SlabKind, SlabOf, WasmMemory } from './slab.js';

/**
 * A bump allocator over one preallocated slab of bytes, and a `Space` of kind `K`. See `Arena`
 * (the constructor) for the whole contract.
 *
 * @example
 * ```ts
 * import { Arena } from '@pol/arena';
 * import type { Space } from '@pol/core';
 * const arena: Arena<'host'> = new Arena(new ArrayBuffer(1024));
 * const space: Space<'host'> = arena;
 * ```
 */
export interface Arena<K extends Kind = Kind> extends Space<K> {
  /** The slab it carves from. */
  readonly slab: SlabOf<K>;
  /** The storage that carves the slab. */
  readonly storage: SlabStorage<SlabOf<K>, K>;
  /** Where each carve starts, relative to the region's first byte (the slab's, without a region). */
  readonly alignment: number;
  /** Whether the arena is in checked mode. */
  readonly checked: boolean;
  /** The region's size in bytes (the slab's, without a region). The arena never grows. */
  readonly capacity: number;
  /**
   * Where the arena's region starts in the slab: every offset of the arena (its `offset`, marks,
   * `watermark`) counts from here. 0 for an arena over a whole slab.
   */
  readonly byteOffset: number;
  /** Whether the arena was disposed (see `dispose`). */
  readonly disposed: boolean;
  /** The first free byte. */
  readonly offset: number;
  /** The highest offset ever reached: the measured byte requirement of everything run on it. */
  readonly watermark: number;
  /** How many resets the arena has been through; marks of older epochs are stale. */
  readonly epoch: number;
  /**
   * Carve a `dims`-shaped `dtype` array: round the offset up to the alignment (and the element's),
   * take the next bytes, advance the offset and the watermark.
   *
   * @throws {ArenaFullError} past the end of the slab, changing nothing.
   * @throws {FrameOrderError} while a frame is open on the arena (allocate from the innermost frame).
   */
  alloc<D extends DType>(dtype: D, dims: readonly number[]): ArrayOf<K, D>;
  /** Like `alloc`, but `undefined` instead of `ArenaFullError` when the array does not fit. */
  tryAlloc<D extends DType>(dtype: D, dims: readonly number[]): ArrayOf<K, D> | undefined;
  /** The method form of `mark(arena)`. */
  mark(): Mark;
  /** The method form of `retract(arena, mark)`. */
  retract(mark: Mark): void;
  /** The method form of `reset(arena)`. */
  reset(): void;
  /** The method form of `observe(arena, listener)`. */
  observe(listener: ArenaListener): () => void;
  /** A snapshot of the arena's state. */
  describe(): ArenaDescription<K>;
  /** A one-line summary, such as `Arena(host, 1.0 MiB, offset 4096, watermark 8192, 1 open frame)`. */
  toString(): string;
  /**
   * Give the arena's region back: another arena of this thread may take those bytes from now on, and
   * this one refuses every carve with `DisposedArenaError` (in checked mode its arrays die, as at a
   * reset). Marks, retracts and frames still work, carving nothing. Disposing again does nothing.
   *
   * @throws {FrameOrderError} while a frame is open on the arena (close it first), changing nothing.
   */
  dispose(): void;
  /** `dispose()`, for `using arena = new Arena(...)`. */
  [Symbol.dispose](): void;
}

/**
 * The constructor of arenas; its signatures compute an arena's kind from its slab's type.
 *
 * @example
 * ```ts
 * import { Arena, type ArenaConstructor } from '@pol/arena';
 * const make: ArenaConstructor = Arena;
 * const arena = new make(new Uint8Array(256)); // Arena<'host'>
 * ```
 */
export interface ArenaConstructor {
  /**
   * An arena over a slab a registered storage accepts; its kind follows from the slab's type. Over
   * a WebAssembly memory the options are required, with the region's `byteOffset`.
   */
  new <S extends Slab>(
    slab: S,
    ...options: [S] extends [never]
      ? [options?: ArenaOptions]
      : S extends WasmMemory
        ? [options: WasmArenaOptions]
        : [options?: ArenaOptions]
  ): Arena<SlabKind<S>>;
  /** An arena over a slab of the given storage. */
  new <S, K extends Kind>(slab: S, options: ArenaStorageOptions<S, K>): Arena<K>;
  readonly prototype: Arena;
}
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
 * Options naming the storage outright, for a slab type no
 * {@link @pol/arena!backend.SlabTypes | SlabTypes} entry declares.
 *
 * @example
 * ```ts
 * import { Arena, type ArenaStorageOptions } from '@pol/arena';
 * import type { SlabStorage } from '@pol/arena/backend';
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
}

/**
 * What checked mode hands a storage's {@link SlabStorage.carveChecked}: the life of one carve. An
 * array made with it calls `assertAlive()` before every access to its memory, which throws a
 * `StaleArrayError` naming the array and the release that killed it.
 *
 * @example A storage's checked carve, guarding its arrays' data:
 * ```ts
 * import type { ArrayLife } from '@pol/arena/backend';
 * class Guarded {
 *   constructor(readonly life: ArrayLife, readonly raw: Float32Array) {}
 *   get data(): Float32Array {
 *     this.life.assertAlive();
 *     return this.raw;
 *   }
 * }
 * ```
 */
export interface ArrayLife {
  /** False once a retract, a frame close or a reset has released the array's bytes. */
  readonly alive: boolean;
  /** Throw a `StaleArrayError` if the array has died; do nothing otherwise. */
  assertAlive(): void;
}

/**
 * The extension point of `carve`: one kind of storage an arena can manage (an ArrayBuffer, a
 * WebAssembly memory, a GPUBuffer). Register it with {@link defineStorage}; `new Arena(slab)` and
 * `carve(slab, ...)` then pick it for every slab its `matches` accepts.
 *
 * The arena does all the bookkeeping (alignment, bounds, offsets, frames, the array cache) and calls
 * `carve` only with a range it has checked: `offset` is inside the slab, `offset + reserve(bytes)`
 * fits, and `byteOffset(slab) + offset` is a multiple of the element size.
 *
 * @example A storage over a custom byte holder (the built-in ones cover ArrayBuffer, SharedArrayBuffer,
 * Uint8Array and WebAssembly.Memory):
 * ```ts
 * import { Arena } from '@pol/arena';
 * import { defineStorage, type SlabStorage } from '@pol/arena/backend';
 * import { dtypeInfo } from '@pol/core';
 * import { makeHostArray } from '@pol/core/backend';
 *
 * class Heap {
 *   constructor(readonly bytes: ArrayBuffer) {}
 * }
 * const heapStorage: SlabStorage<Heap, 'host'> = {
 *   name: 'Heap',
 *   kind: 'host',
 *   residency: 'host',
 *   matches: (slab): slab is Heap => slab instanceof Heap,
 *   byteLength: (heap) => heap.bytes.byteLength,
 *   carve(heap, offset, dtype, dims) {
 *     const count = dims.reduce((a, b) => a * b, 1);
 *     return makeHostArray(dtype, dims, new (dtypeInfo(dtype).TypedArray)(heap.bytes, offset, count));
 *   },
 * };
 * defineStorage(heapStorage);
 * const arena = new Arena(new Heap(new ArrayBuffer(1024)), { storage: heapStorage });
 * arena.alloc('float32', [4]);
 * ```
 */
export interface SlabStorage<S, K extends Kind> {
  /** A short name for messages and `describe()`, such as `'ArrayBuffer'` or `'GPUBuffer'`. */
  readonly name: string;
  /** The kind of arrays it carves: `'host'`, or a kind a backend added to core's `ArrayTypes`. */
  readonly kind: K;
  /** Where the slab's bytes live: host memory, or a device the host cannot read directly. */
  readonly residency: 'host' | 'device';
  /** Whether `slab` is a slab of this storage. Cheap; called when an arena is made and by `carve`. */
  matches(slab: unknown): slab is S;
  /** The slab's size in bytes: the arena's capacity. Read once, when the arena is made. */
  byteLength(slab: S): number;
  /**
   * Optional: the absolute byte offset of the slab's first byte in the memory its views index (a
   * Uint8Array's `byteOffset`). Element alignment is measured from there. Default: 0.
   */
  byteOffset?(slab: S): number;
  /** Optional: refuse a slab this storage matches but cannot serve (throw a PolError, such as `InvalidSlabError`). */
  checkSlab?(slab: S): void;
  /** Refuse an arena alignment this storage cannot honour (WebGPU: minStorageBufferOffsetAlignment); throw a PolError. */
  checkAlignment?(slab: S, alignment: number): void;
  /** Bytes to reserve for a carve of `byteLength` bytes (WebGPU: round up to 4, at least 4). Default: byteLength. */
  reserve?(byteLength: number): number;
  /** A `dims`-shaped `dtype` array over the slab's bytes from `offset`, aliasing them, never copying. */
  carve<D extends DType>(slab: S, offset: number, dtype: D, dims: readonly number[]): ArrayOf<K, D>;
  /**
   * Optional, checked mode: like `carve`, but the array refuses access once `life` has died (see
   * {@link ArrayLife}). Without it, a checked arena still poisons and never reuses array objects, but
   * its arrays cannot refuse a read.
   */
  carveChecked?<D extends DType>(slab: S, offset: number, dtype: D, dims: readonly number[], life: ArrayLife): ArrayOf<K, D>;
  /**
   * Checked mode: overwrite released bytes (NaN for floats, a pattern for integers). Called once for
   * the whole released range without `dtype` (write the integer pattern), then once per released
   * floating-point array with its `dtype` (write NaN).
   */
  poison?(slab: S, offset: number, byteLength: number, dtype?: DType): void;
  /**
   * Optional: called once by `new Arena(slab)`, after every check passed, with the new arena and its
   * `forget`. Calling `forget()` makes that arena drop every array it has cached, so that its next
   * carve at each offset calls this storage's `carve` again. A storage whose slab can die (a
   * GPUBuffer destroyed, its device lost) calls it then, and its `carve` refuses the dead slab with
   * its typed error, instead of the arena handing out a cached array over dead memory. Hold the
   * arenas weakly (a `WeakRef`), so that the slab does not keep every arena ever made over it alive.
   * `forget` costs the arena nothing until it is called; calling it again does nothing more.
   */
  attach?(slab: S, arena: Arena<K>, forget: () => void): void;
}

/**
 * A storage of some slab type and kind, as the registry holds it: its methods are only ever called
 * with a slab its own `matches` accepted, passed `as never`.
 */
export type AnyStorage = SlabStorage<never, Kind>;
