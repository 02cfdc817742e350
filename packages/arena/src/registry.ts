/**
 * The registry of storages: which `SlabStorage` serves a slab. The built-in host storages are
 * listed here, and `defineStorage` adds more in front of them.
 *
 * @module
 */

import type { Kind } from '@pol/core';
import { describeValue } from '@pol/core/backend';
import { InvalidSlabError } from './errors.js';
import { arrayBufferStorage, sharedArrayBufferStorage, uint8ArrayStorage, wasmMemoryStorage } from './host.js';
import { checkStorage } from './storage.js';
import type { AnyStorage, SlabStorage } from './types.js';

// Tried in order; later definitions go first, so a backend can take over slabs a built-in would
// match. The built-ins are listed here rather than registered by a call at load time, so that the
// package stays free of side effects (`sideEffects: false`) and a bundler cannot drop them.
const registry: AnyStorage[] = [
  arrayBufferStorage,
  sharedArrayBufferStorage,
  uint8ArrayStorage,
  wasmMemoryStorage,
] as unknown as AnyStorage[];

/**
 * Register a storage: `new Arena(slab)` and `carve(slab, ...)` use it for every slab it matches.
 * Later definitions are tried first, so a backend can take over slabs a built-in storage would match.
 * Defining the same storage object again moves it to the front.
 *
 * @throws {InvalidArgumentError} when `storage` lacks a required member.
 * @example A storage that takes over plain ArrayBuffers to count carves
 * ```ts
 * import { Arena, carve } from '@pol/arena';
 * import { defineStorage, type SlabStorage } from '@pol/arena/backend';
 * let carves = 0;
 * const builtIn = new Arena(new ArrayBuffer(0)).storage as SlabStorage<ArrayBuffer, 'host'>;
 * const counting: SlabStorage<ArrayBuffer, 'host'> = {
 *   ...builtIn,
 *   name: 'counted ArrayBuffer',
 *   carve(slab, offset, dtype, dims) {
 *     carves++;
 *     return builtIn.carve(slab, offset, dtype, dims);
 *   },
 * };
 * defineStorage(counting);
 * carve(new ArrayBuffer(16), 0, 'float32', [4]);
 * console.log(carves); // 1
 * ```
 */
export function defineStorage<S, K extends Kind>(storage: SlabStorage<S, K>): void {
  checkStorage(storage);
  const at = registry.indexOf(storage as unknown as AnyStorage);
  if (at >= 0) registry.splice(at, 1);
  registry.unshift(storage as unknown as AnyStorage);
}

/** The storage for `slab`, or a thrown {@link InvalidSlabError} naming what is accepted. */
export function storageFor(slab: unknown, what: string): AnyStorage {
  for (const storage of registry) {
    if (storage.matches(slab)) return storage;
  }
  throw unmatchedSlab(slab, what);
}

function unmatchedSlab(slab: unknown, what: string): InvalidSlabError {
  const names = registry.map((s) => s.name);
  const described = describeValue(slab);
  let hint = '';
  if (ArrayBuffer.isView(slab)) {
    hint =
      ' A slab is bytes, not elements: for a typed array or DataView pass its bytes, ' +
      'new Uint8Array(x.buffer, x.byteOffset, x.byteLength), or x.buffer.';
  } else if (Array.isArray(slab)) {
    hint = ' A plain array holds no bytes: allocate the slab, e.g. new ArrayBuffer(1 << 20).';
  } else if (described.includes('ArrayBuffer')) {
    // Every storage recognises a buffer by its internal slot, so this one only looks like a buffer.
    hint =
      ' It only looks like one: it holds no buffer (it inherits a buffer class, as Object.create(ArrayBuffer.prototype) ' +
      'makes). Pass a real buffer, e.g. new ArrayBuffer(1 << 20).';
  }
  return new InvalidSlabError(`${what} needs a slab of bytes, got ${described}. Accepted: ${names.join(', ')}.${hint}`);
}
