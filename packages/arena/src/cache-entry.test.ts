import { inspect } from 'node:util';
import { alloc, hostArray, isArray, UnknownDTypeError } from '@pol/core';
import { familyOf, hostFamily } from '@pol/core/backend';
import { describe, expect, test } from 'vitest';
import { Arena } from './arena.js';
import { arrayOf, CacheEntry } from './cache-entry.js';
import { InvalidSlabError } from './errors.js';

describe('CacheEntry', () => {
  test("is the host array of a host storage's carve", () => {
    const data = new Float32Array(4);
    const entry = new CacheEntry(0, 'float32', Object.freeze([4]), 16, undefined, 4, data);
    expect(arrayOf(entry)).toBe(entry);
    expect(familyOf(entry)).toBe(hostFamily);
    expect(isArray(entry)).toBe(true);
    expect(entry.data).toBe(data);
    expect(String(entry)).toBe('HostArray(float32[4])');
  });

  test("holds another storage's array apart", () => {
    const other = hostArray(new Int32Array(2));
    const entry = new CacheEntry(256, 'int32', Object.freeze([2]), 264, other, 2);
    expect(arrayOf(entry)).toBe(other);
    expect(entry.data).toBeUndefined();
  });
});

describe("an unchecked arena's host arrays", () => {
  test('are the same object at every repeat, and a host array to every reader', () => {
    const arena = new Arena(new ArrayBuffer(1024));
    const a = alloc(arena, 'float32', 8);
    a.data.fill(2);
    arena.reset();
    expect(alloc(arena, 'float32', 8)).toBe(a);
    expect(familyOf(a)).toBe(hostFamily);
    expect(a.data.byteOffset).toBe(0);
    expect(a.data.length).toBe(8);
  });

  test('serialize, clone and print as a host array does', () => {
    const arena = new Arena(new ArrayBuffer(1024));
    const a = alloc(arena, 'float32', [2, 2]);
    a.data.set([1, 2, 3, 4]);
    // No field refers back to the array, so JSON takes it; the cache's fields are plain numbers.
    const json = JSON.parse(JSON.stringify(a)) as { dtype: string; dims: number[]; data: Record<string, number> };
    expect(json.dtype).toBe('float32');
    expect(json.dims).toEqual([2, 2]);
    expect(Object.values(json.data)).toEqual([1, 2, 3, 4]);
    expect(Object.keys(a).slice(0, 3)).toEqual(['dtype', 'dims', 'data']);
    const clone = structuredClone(a) as unknown as { dtype: string; dims: number[]; data: Float32Array };
    expect(Array.from(clone.data)).toEqual([1, 2, 3, 4]);
    // Printed as core's host arrays are, none of the cache's fields shown.
    const core = hostArray(new Float32Array([1, 2, 3, 4]), [2, 2]);
    expect(inspect(a)).toBe(inspect(core));
    // Nested, and past the depth shown, too.
    expect(inspect({ x: { y: { z: a } } })).toBe(inspect({ x: { y: { z: core } } }));
    expect(inspect([a], { depth: 0 })).toBe(inspect([core], { depth: 0 }));
    expect(inspect({ a }, { depth: 1 })).toBe(inspect({ a: core }, { depth: 1 }));
  });

  test('of both paths, the lean one and a padded one, are cached alike', () => {
    // A Uint8Array slab at an odd byte offset: float32 carves need padding, which the lean path leaves
    // to the general one; int8 carves need none.
    const bytes = new Uint8Array(new ArrayBuffer(4096), 1, 2048);
    const arena = new Arena(bytes, { alignment: 1 });
    const a = arena.alloc('int8', [2]); // lean: no padding at absolute byte 1
    const b = arena.alloc('float32', [2]); // general: padded from absolute byte 3 to 4
    const c = arena.alloc('float32', [2]); // lean again: absolute byte 12
    expect([a.data.byteOffset, b.data.byteOffset, c.data.byteOffset]).toEqual([1, 4, 12]);
    arena.reset();
    expect(arena.alloc('int8', [2])).toBe(a);
    expect(arena.alloc('float32', [2])).toBe(b);
    expect(arena.alloc('float32', [2])).toBe(c);
  });
});

describe('refusals the lean path must keep', () => {
  test('an empty dtype on a fresh arena is an unknown dtype, as on a checked one', () => {
    for (const checked of [false, true]) {
      const arena = new Arena(new ArrayBuffer(64), { checked });
      expect(() => arena.alloc('' as never, [])).toThrow(UnknownDTypeError);
      expect(() => arena.alloc('' as never, [2])).toThrow(UnknownDTypeError);
      expect(arena.offset).toBe(0);
    }
  });

  test('a storage whose carve returns no array is refused, and nothing is cached', () => {
    const slab = { bytes: 1024 };
    // Handed to this arena only (the storage option), never registered for every slab.
    const storage = {
      name: 'forgetful',
      kind: 'host',
      residency: 'host',
      matches: (s: unknown): s is typeof slab => s === slab,
      byteLength: () => 1024,
      carve: () => undefined,
    };
    const arena = new Arena(slab as never, { storage: storage as never });
    expect(() => arena.alloc('float32', [4])).toThrow(InvalidSlabError);
    expect(() => arena.alloc('float32', [4])).toThrow(/storage 'forgetful' carved undefined/);
    expect(arena.offset).toBe(0);
    expect(arena.describe().arraysCreated).toBe(0);
  });
});
