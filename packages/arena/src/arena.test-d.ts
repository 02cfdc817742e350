/// <reference types="node" />
import { alloc, type Frame, type HostArray, type Space, scratchspace, Undef } from '@pol/core';
import { describe, expectTypeOf, test } from 'vitest';
import {
  Arena,
  type ArenaDescription,
  type ArenaFrame,
  carve,
  type Mark,
  mark,
  observe,
  reset,
  retract,
  type SlabKind,
  tryAlloc,
  watermark,
} from './index.js';
import { WasmMemoryClass } from './test-support/slabs.js';

describe('Arena types', () => {
  test('an arena over any host slab is an Arena<host>, a Space<host>', () => {
    expectTypeOf(new Arena(new ArrayBuffer(1024))).toEqualTypeOf<Arena<'host'>>();
    expectTypeOf(new Arena(new SharedArrayBuffer(1024))).toEqualTypeOf<Arena<'host'>>();
    expectTypeOf(new Arena(new Uint8Array(1024))).toEqualTypeOf<Arena<'host'>>();
    expectTypeOf(new Arena(Buffer.alloc(1024))).toEqualTypeOf<Arena<'host'>>();
    expectTypeOf(new Arena(new WasmMemoryClass({ initial: 1 }), { byteOffset: 0 })).toEqualTypeOf<Arena<'host'>>();
    expectTypeOf(new Arena(new ArrayBuffer(1024), { alignment: 64, checked: true })).toMatchTypeOf<Space<'host'>>();
    expectTypeOf<SlabKind<ArrayBuffer>>().toEqualTypeOf<'host'>();
  });

  test('an arena over a WebAssembly memory must be told its region', () => {
    const memory = new WasmMemoryClass({ initial: 1 });
    // @ts-expect-error: a memory may hold a module's heap, so the region is required
    new Arena(memory);
    // @ts-expect-error: and it must say where the region starts
    new Arena(memory, { byteLength: 1024 });
    expectTypeOf(new Arena(memory, { byteOffset: 1024, byteLength: 4096, alignment: 16 })).toEqualTypeOf<Arena<'host'>>();
    // Other slabs take a region too, and need none.
    expectTypeOf(new Arena(new ArrayBuffer(64), { byteOffset: 16, byteLength: 32 })).toEqualTypeOf<Arena<'host'>>();
    expectTypeOf<Arena['byteOffset']>().toEqualTypeOf<number>();
    expectTypeOf<Arena['dispose']>().toEqualTypeOf<() => void>();
  });

  test('slabs that are not bytes do not type-check', () => {
    // @ts-expect-error a Float32Array is elements, not bytes
    new Arena(new Float32Array(16));
    // @ts-expect-error a DataView is not accepted
    new Arena(new DataView(new ArrayBuffer(16)));
    // @ts-expect-error a plain array holds no bytes
    new Arena([1, 2, 3]);
    // @ts-expect-error a number is not a slab
    new Arena(1024);
    // @ts-expect-error alignment is a number
    new Arena(new ArrayBuffer(16), { alignment: '256' });
    // @ts-expect-error unknown option
    new Arena(new ArrayBuffer(16), { align: 256 });
  });

  test('alloc on an arena computes host arrays, for every spelling', () => {
    const arena = new Arena(new ArrayBuffer(1024));
    expectTypeOf(alloc(arena, 'float32', 4)).toEqualTypeOf<HostArray<'float32'>>();
    expectTypeOf(alloc(arena, 'int8', [2, 2])).toEqualTypeOf<HostArray<'int8'>>();
    expectTypeOf(alloc(arena, Undef('uint16', 3))).toEqualTypeOf<HostArray<'uint16'>>();
    expectTypeOf(arena.alloc('float64', [1])).toEqualTypeOf<HostArray<'float64'>>();
    expectTypeOf(arena.alloc('float64', [1]).data).toEqualTypeOf<Float64Array>();
    expectTypeOf(arena.tryAlloc('int32', [1])).toEqualTypeOf<HostArray<'int32'> | undefined>();
    expectTypeOf(tryAlloc(arena, 'int32', [1])).toEqualTypeOf<HostArray<'int32'> | undefined>();
    expectTypeOf(tryAlloc(arena, 'uint8', 2, 3)).toEqualTypeOf<HostArray<'uint8'> | undefined>();
    const { w, b } = alloc(arena, { w: Undef('float32', 2, 2), b: Undef('int32', 2) });
    expectTypeOf(w).toEqualTypeOf<HostArray<'float32'>>();
    expectTypeOf(b).toEqualTypeOf<HostArray<'int32'>>();
  });

  test('marks, retract, reset, watermark, observe', () => {
    const arena = new Arena(new ArrayBuffer(1024));
    expectTypeOf(mark(arena)).toEqualTypeOf<Mark>();
    expectTypeOf(arena.mark()).toEqualTypeOf<Mark>();
    expectTypeOf(mark(arena).offset).toEqualTypeOf<number>();
    expectTypeOf(retract(arena, mark(arena))).toEqualTypeOf<void>();
    expectTypeOf(reset(arena)).toEqualTypeOf<void>();
    expectTypeOf(watermark(arena)).toEqualTypeOf<number>();
    expectTypeOf(observe(arena, (event) => expectTypeOf(event.kind).toEqualTypeOf<'retract' | 'reset'>())).toEqualTypeOf<
      () => void
    >();
    expectTypeOf(arena.describe()).toEqualTypeOf<ArenaDescription<'host'>>();
    expectTypeOf(arena.describe().residency).toEqualTypeOf<'host' | 'device'>();
    // @ts-expect-error a mark is made by mark(arena), not by hand
    retract(arena, { offset: 0, epoch: 0 });
    // @ts-expect-error reset takes the arena, not a number
    reset(0);
  });

  test('frames: scratchspace gives a Frame<host>; verbs take frames too', () => {
    const arena = new Arena(new ArrayBuffer(1024));
    scratchspace(arena, (frame) => {
      expectTypeOf(frame).toEqualTypeOf<Frame<'host'>>();
      expectTypeOf(alloc(frame, 'float32', 2)).toEqualTypeOf<HostArray<'float32'>>();
      expectTypeOf(mark(frame)).toEqualTypeOf<Mark>();
      expectTypeOf(tryAlloc(frame, 'uint8', [1])).toEqualTypeOf<HostArray<'uint8'> | undefined>();
    });
    const frame = scratchspace(arena);
    expectTypeOf(frame).toEqualTypeOf<Frame<'host'>>();
    expectTypeOf<ArenaFrame<'host'>>().toMatchTypeOf<Frame<'host'>>();
    expectTypeOf<ArenaFrame<'host'>['arena']>().toEqualTypeOf<Arena<'host'>>();
  });

  test('carve computes the array type from the slab', () => {
    expectTypeOf(carve(new ArrayBuffer(64), 0, 'float32', [4])).toEqualTypeOf<HostArray<'float32'>>();
    expectTypeOf(carve(new Uint8Array(64), 0, 'int16', [4])).toEqualTypeOf<HostArray<'int16'>>();
    // @ts-expect-error a Float32Array is not a slab
    carve(new Float32Array(4), 0, 'float32', [1]);
  });

  test('Arena is a value for instanceof', () => {
    const x: unknown = new Arena(new ArrayBuffer(8));
    if (x instanceof Arena) expectTypeOf(x).toEqualTypeOf<Arena>();
  });
});
