/**
 * `@pol/arena/backend`: what the author of a storage extension needs (a new kind of slab an arena
 * carves from, as `@pol/webgpu` adds GPU buffers), none of which a program that only makes arenas
 * needs. The storage protocol (`SlabStorage`, and the `ArrayLife` checked mode hands a checked
 * carve), registering a storage (`defineStorage`), the registry of slab types a storage extends by
 * module augmentation (`SlabTypes`), and the byte checked mode poisons released integer memory
 * with (`POISON_BYTE`).
 *
 * Import what a user holds (`Arena`, its options, `ArenaStorageOptions`, `Slab`, `SlabKind`,
 * `SlabOf`, the errors) from `@pol/arena`: no name is exported from both entry points.
 *
 * @example The storage of an arena, as its extension sees it:
 * ```ts
 * import { Arena } from '@pol/arena';
 * import { POISON_BYTE, type SlabStorage } from '@pol/arena/backend';
 * const arena = new Arena(new ArrayBuffer(64));
 * const storage: SlabStorage<unknown, 'host'> = arena.storage; // the built-in storage of ArrayBuffers
 * console.log(storage.name, storage.matches(arena.slab), POISON_BYTE.toString(16)); // 'ArrayBuffer' true 'a5'
 * ```
 *
 * @packageDocumentation
 */

export { POISON_BYTE } from './host.js';
export { defineStorage } from './registry.js';
export type { SlabTypes } from './slab.js';
export type { ArrayLife, SlabStorage } from './types.js';
