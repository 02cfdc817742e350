/**
 * Slabs: the byte holders an arena carves from, by the kind of arrays it hands out (`SlabTypes`,
 * which a backend extends), and the kind each slab type makes.
 *
 * @module
 */

import type { Kind } from '@pol/core';

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
 * slab type here, both by module augmentation: of `'@pol/core'`, and of `'@pol/arena/backend'`,
 * the entry point that exports this interface (`@pol/webgpu` adds `gpu: DeviceSlab`).
 *
 * @example
 * ```ts
 * import type { DType } from '@pol/core';
 * import type { SlabTypes } from '@pol/arena/backend';
 *
 * interface DeviceBuffer {
 *   readonly deviceBuffer: true;
 * }
 * declare module '@pol/core' {
 *   interface ArrayTypes<D extends DType> {
 *     device: { readonly dtype: D; readonly dims: readonly number[]; readonly buffer: DeviceBuffer };
 *   }
 * }
 * declare module '@pol/arena/backend' {
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
