import { type ArrayOf, type DType, InvalidArgumentError, type Kind } from '@pol/core';
import { describeValue } from '@pol/core/backend';
import type { Arena } from './arena.js';

/**
 * What checked mode hands a storage's {@link SlabStorage.carveChecked}: the life of one carve. An
 * array made with it calls `assertAlive()` before every access to its memory, which throws a
 * `StaleArrayError` naming the array and the release that killed it.
 *
 * @example A storage's checked carve, guarding its arrays' data:
 * ```ts
 * import type { ArrayLife } from '@pol/arena';
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
 * import { Arena, defineStorage, type SlabStorage } from '@pol/arena';
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

/**
 * The shape of a `WebAssembly.Memory`, declared here so that these types need neither the DOM lib
 * nor Node's. At run time a slab must be a real `WebAssembly.Memory`.
 *
 * @example
 * ```ts
 * import { Arena, type WasmMemory } from '@pol/arena';
 * const { WebAssembly: wasm } = globalThis as unknown as {
 *   WebAssembly: { Memory: new (d: { initial: number; maximum?: number }) => WasmMemory };
 * };
 * const memory: WasmMemory = new wasm.Memory({ initial: 1, maximum: 4 });
 * const arena = new Arena(memory, { byteOffset: 0 }); // all of it (64 KiB, its size now): it holds nothing else
 * const a = arena.alloc('float32', [16]);
 * memory.grow(1);
 * console.log(a.data.length); // 16: re-derived from the grown memory's new buffer
 * ```
 */
export interface WasmMemory {
  readonly buffer: ArrayBuffer | SharedArrayBuffer;
  grow(delta: number): number;
}

/**
 * The slab types each kind of arena accepts, for typing `new Arena(slab)` and `carve(slab, ...)`. A
 * backend that registers a storage of its own kind adds its kind to core's `ArrayTypes` and its
 * slab type here, both by module augmentation (`@pol/webgpu` adds `gpu: GPUBuffer`).
 *
 * @example
 * ```ts
 * import type { DType } from '@pol/core';
 * import type { SlabTypes } from '@pol/arena';
 *
 * interface DeviceBuffer {
 *   readonly deviceBuffer: true;
 * }
 * declare module '@pol/core' {
 *   interface ArrayTypes<D extends DType> {
 *     device: { readonly dtype: D; readonly dims: readonly number[]; readonly buffer: DeviceBuffer };
 *   }
 * }
 * declare module '@pol/arena' {
 *   interface SlabTypes {
 *     device: DeviceBuffer;
 *   }
 * }
 * type DeviceSlab = SlabTypes['device']; // DeviceBuffer
 * ```
 */
export interface SlabTypes {
  /** Host memory: bytes JavaScript reads directly. */
  host: ArrayBuffer | SharedArrayBuffer | Uint8Array | WasmMemory;
}

/**
 * Any slab an arena accepts (see {@link SlabTypes}).
 *
 * @example
 * ```ts
 * import { Arena, type Slab } from '@pol/arena';
 * const slabs: Slab[] = [new ArrayBuffer(64), new SharedArrayBuffer(64), new Uint8Array(64)];
 * const arenas = slabs.map((slab) => new Arena(slab));
 * ```
 */
export type Slab = SlabTypes[keyof SlabTypes];

/**
 * The kind of arena a slab type makes: `SlabKind<ArrayBuffer>` is `'host'`.
 *
 * @example
 * ```ts
 * import type { SlabKind } from '@pol/arena';
 * const kind: SlabKind<Uint8Array> = 'host';
 * ```
 */
export type SlabKind<S> = Extract<{ [K in keyof SlabTypes]: S extends SlabTypes[K] ? K : never }[keyof SlabTypes], Kind>;

const optionalMembers = ['byteOffset', 'checkSlab', 'checkAlignment', 'reserve', 'carveChecked', 'poison', 'attach'] as const;

/**
 * Throw an `InvalidArgumentError` unless `storage` has every required member of a SlabStorage, and
 * every optional member it has is a method.
 */
export function checkStorage(storage: unknown): void {
  const s = storage as Partial<Record<keyof SlabStorage<unknown, Kind>, unknown>> | null;
  const ok =
    typeof s === 'object' &&
    s !== null &&
    typeof s.name === 'string' &&
    typeof s.kind === 'string' &&
    (s.residency === 'host' || s.residency === 'device') &&
    typeof s.matches === 'function' &&
    typeof s.byteLength === 'function' &&
    typeof s.carve === 'function';
  if (!ok) {
    throw new InvalidArgumentError(
      `A storage needs a SlabStorage (name, kind, residency, matches, byteLength, carve), got ${describeValue(storage)}. ` +
        'See the SlabStorage interface of @pol/arena.',
    );
  }
  const optional = s as Record<string, unknown>;
  for (const member of optionalMembers) {
    const value = optional[member];
    if (value !== undefined && typeof value !== 'function') {
      throw new InvalidArgumentError(
        `The storage '${String(optional.name)}' is not a SlabStorage: its ${member} must be a function, got ${describeValue(value)}. ` +
          'Give it the method, or leave the member out.',
      );
    }
  }
}
