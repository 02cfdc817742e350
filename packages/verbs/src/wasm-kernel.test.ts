// WebAssembly kernels as Pol kernels: a kernel that calls WASM exports with the pointers of its
// outputs, inputs and scratch, made a verb with Allocating, on an arena over a region of the
// module's memory. A steady call carves nothing new and copies nothing.
import { Arena, ForeignMemoryError, mark, pointer, retract } from '@pol/arena';
import { describe, type HostArray, hostArray, Similar, Undef } from '@pol/core';
import { expect, describe as group, test } from 'vitest';
import { Allocating } from './allocating.js';
import { instantiate, type KernelExports, type TestMemory } from './test-support/wasm-module.js';

type F32 = HostArray<'float32'>;

// y = (x * x) * k, with x * x in scratch: two export calls on pointers.
function squareScaledVerb(memory: TestMemory, kernels: KernelExports, growInside = 0) {
  const squareScaledInto = describe(
    function squareScaledInto(out: { y: F32 }, x: F32, options: { tmp: F32; k: number }): void {
      const n = x.dims[0] as number;
      const tmp = pointer(options.tmp, memory);
      kernels.mul(pointer(x, memory), pointer(x, memory), tmp, n);
      // A module that grows its memory in the middle of a call (its malloc running out of heap).
      if (growInside > 0) kernels.grow(growInside);
      kernels.scale(tmp, pointer(out.y, memory), n, options.k);
    },
    {
      outputs: (x: F32) => ({ y: Undef(x) }),
      scratch: (x: F32) => ({ tmp: Undef(x) }),
    },
  );
  return Allocating(squareScaledInto);
}

// The module's own bytes below and above the region, which the arena must never touch.
const SENTINEL = 0x3c;
function setUp(growInside = 0) {
  const { memory, kernels } = instantiate(1, 16);
  new Uint8Array(memory.buffer).fill(SENTINEL);
  const arena = new Arena(memory, { byteOffset: 4096, byteLength: 8192, alignment: 64 });
  const heapIntact = () => {
    const bytes = new Uint8Array(memory.buffer, 0, 65536);
    return bytes.subarray(0, 4096).every((b) => b === SENTINEL) && bytes.subarray(4096 + 8192).every((b) => b === SENTINEL);
  };
  return { memory, kernels, arena, heapIntact, squareScaled: squareScaledVerb(memory, kernels, growInside) };
}

group('a WASM kernel as a verb, on an arena over a region of the module memory', () => {
  test('outputs from the arena, scratch from a frame, pointers into the region, the right result', () => {
    const { memory, arena, heapIntact, squareScaled } = setUp();
    const x = arena.alloc('float32', [4]);
    x.data.set([1, 2, 3, 4]);
    const { y } = squareScaled(arena, x, { k: 0.5 });
    expect(Array.from(y.data)).toEqual([0.5, 2, 4.5, 8]);
    expect(pointer(x, memory)).toBe(4096);
    expect(pointer(y, memory)).toBe(4096 + 64);
    // tmp was carved above y in a frame, and released when the call returned.
    expect(arena.offset).toBe(64 + 16);
    expect(arena.watermark).toBe(128 + 16);
    expect(heapIntact()).toBe(true);
  });

  test('a steady loop gets the same output object back, carves nothing new, and copies nothing in or out', () => {
    const { arena, heapIntact, squareScaled } = setUp();
    const x = arena.alloc('float32', [256]);
    const m = mark(arena);
    x.data.fill(2);
    const first = squareScaled(arena, x, { k: 3 }).y;
    retract(arena, m);
    const created = arena.describe().arraysCreated;
    const watermark = arena.watermark;
    for (let step = 1; step <= 50; step++) {
      x.data.fill(step); // the input is written in place, in the module's memory
      const { y } = squareScaled(arena, x, { k: 0.25 });
      expect(y).toBe(first);
      expect(y.data[255]).toBe(step * step * 0.25);
      retract(arena, m);
    }
    expect(arena.describe().arraysCreated).toBe(created);
    expect(arena.watermark).toBe(watermark);
    expect(heapIntact()).toBe(true);
  });

  test('a module that grows its memory inside the call: pointers stay right, arrays re-derive their views', () => {
    const { memory, arena, squareScaled } = setUp(1);
    const x = arena.alloc('float32', [8]);
    x.data.set([1, 2, 3, 4, 5, 6, 7, 8]);
    const before = memory.buffer;
    const { y } = squareScaled(arena, x, { k: 1 });
    expect(memory.buffer).not.toBe(before); // the grow detached the old buffer
    expect(y.data.buffer).toBe(memory.buffer);
    expect(Array.from(y.data)).toEqual([1, 4, 9, 16, 25, 36, 49, 64]);
    expect(Array.from(x.data)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    // And again, from the grown memory.
    expect(Array.from(squareScaled(arena, x, { k: 2 }).y.data)).toEqual([2, 8, 18, 32, 50, 72, 98, 128]);
  });

  test('an input outside the module memory is refused with ForeignMemoryError, and the call is rolled back', () => {
    const { arena, squareScaled } = setUp();
    const before = arena.describe();
    const outside = hostArray(Float32Array.of(1, 2, 3, 4));
    expect(() => squareScaled(arena, outside, { k: 1 })).toThrow(ForeignMemoryError);
    // Everything but the count of array objects made (y and tmp were carved before the kernel ran).
    expect({ ...arena.describe(), arraysCreated: 0 }).toEqual({ ...before, arraysCreated: 0 });
  });

  test('called on a GC space, the outputs are not in the memory either: ForeignMemoryError, not a wrong pointer', () => {
    const { arena, squareScaled } = setUp();
    const x = arena.alloc('float32', [4]);
    expect(() => squareScaled(Similar(x), x, { k: 1 })).toThrow(/not in this memory/);
  });
});
