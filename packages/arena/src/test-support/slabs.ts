/// <reference types="node" />
import { expect } from 'vitest';
import type { Arena, ArenaDescription, WasmMemory } from '../index.js';

/** WebAssembly.Memory, typed here: Node's type declarations for this Node version do not declare WebAssembly. */
export const WasmMemoryClass = (
  globalThis as unknown as {
    WebAssembly: { Memory: new (descriptor: { initial: number; maximum?: number; shared?: boolean }) => WasmMemory };
  }
).WebAssembly.Memory;

/** The kinds of host slab the tests run over. */
export type SlabName = 'ArrayBuffer' | 'SharedArrayBuffer' | 'Uint8Array' | 'Buffer' | 'WebAssembly.Memory';

export const slabNames: readonly SlabName[] = ['ArrayBuffer', 'SharedArrayBuffer', 'Uint8Array', 'Buffer', 'WebAssembly.Memory'];

/**
 * A slab of `bytes` bytes (a WebAssembly memory has whole 64 KiB pages) whose first byte sits at
 * absolute byte offset `base` of its buffer, for the kinds that can start anywhere.
 */
export function makeSlab(
  name: SlabName,
  bytes: number,
  base = 0,
): { slab: ArrayBuffer | SharedArrayBuffer | Uint8Array | WasmMemory; base: number; capacity: number } {
  switch (name) {
    case 'ArrayBuffer':
      return { slab: new ArrayBuffer(bytes), base: 0, capacity: bytes };
    case 'SharedArrayBuffer':
      return { slab: new SharedArrayBuffer(bytes), base: 0, capacity: bytes };
    case 'Uint8Array':
      return { slab: new Uint8Array(new ArrayBuffer(bytes + base), base, bytes), base, capacity: bytes };
    case 'Buffer':
      return { slab: Buffer.from(new ArrayBuffer(bytes + base), base, bytes), base, capacity: bytes };
    case 'WebAssembly.Memory': {
      const pages = Math.max(1, Math.ceil(bytes / 65536));
      return { slab: new WasmMemoryClass({ initial: pages, maximum: pages + 4 }), base: 0, capacity: pages * 65536 };
    }
  }
}

/** Everything `describe()` reports: what every refused operation must leave exactly as it was. */
export function snapshot(arena: Arena): ArenaDescription {
  return arena.describe();
}

/** Run `f`, expect it to throw a PolError with `code`, and expect the arena to be unchanged. */
export function expectRefused(arena: Arena, code: string, f: () => unknown): Error {
  const before = snapshot(arena);
  let thrown: unknown;
  try {
    f();
  } catch (error) {
    thrown = error;
  }
  expect(thrown, `expected ${code}`).toBeInstanceOf(Error);
  expect((thrown as { code?: unknown }).code).toBe(code);
  expect(snapshot(arena)).toEqual(before);
  return thrown as Error;
}
