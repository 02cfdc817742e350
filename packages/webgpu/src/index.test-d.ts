import { Arena, type Slab, type SlabKind, type SlabOf } from '@pol/arena';
import type { SlabTypes } from '@pol/arena/backend';
import { alloc, type HostArray, Similar, type Space, scratchspace, Undef, zeroArray } from '@pol/core';
import { describe, expectTypeOf, test } from 'vitest';
import {
  bindGroup,
  capture,
  type DeviceSlab,
  deviceArena,
  deviceSlab,
  download,
  type GpuArray,
  type Graph,
  instrument,
  isGpuArray,
  upload,
} from './index.js';

declare const device: GPUDevice;
declare const layout: GPUBindGroupLayout;

describe('types', () => {
  test('an arena over a device slab is an Arena<"gpu"> and hands out GpuArrays', () => {
    const slab = deviceSlab(device, 1024);
    expectTypeOf(slab).toEqualTypeOf<DeviceSlab>();
    const arena = new Arena(slab);
    expectTypeOf(arena).toEqualTypeOf<Arena<'gpu'>>();
    expectTypeOf(alloc(arena, 'float32', 4)).toEqualTypeOf<GpuArray<'float32'>>();
    expectTypeOf(alloc(arena, 'int32', [2, 3])).toEqualTypeOf<GpuArray<'int32'>>();
    expectTypeOf(alloc(arena, Undef('uint8', 3))).toEqualTypeOf<GpuArray<'uint8'>>();
    expectTypeOf(arena.slab).toEqualTypeOf<DeviceSlab>();
    expectTypeOf(deviceArena(device, 1024)).toEqualTypeOf<Arena<'gpu'>>();
  });

  test("the device slab is in @pol/arena/backend's SlabTypes, where the augmentation puts it", () => {
    expectTypeOf<SlabTypes['gpu']>().toEqualTypeOf<DeviceSlab>();
    expectTypeOf<SlabOf<'gpu'>>().toEqualTypeOf<DeviceSlab>();
    expectTypeOf<SlabKind<DeviceSlab>>().toEqualTypeOf<'gpu'>();
    expectTypeOf<DeviceSlab>().toExtend<Slab>();
    // A raw GPUBuffer is no slab: new Arena takes the DeviceSlab that owns one (deviceSlab).
    expectTypeOf<GPUBuffer>().not.toExtend<Slab>();
  });

  test('specs materialize to GpuArrays, and frames on a device arena too', () => {
    const arena = deviceArena(device, 1024);
    const { w, b } = alloc(arena, { w: Undef('float32', 3, 3), b: Undef('float32', 3) });
    expectTypeOf(w).toEqualTypeOf<GpuArray<'float32'>>();
    expectTypeOf(b).toEqualTypeOf<GpuArray<'float32'>>();
    scratchspace(arena, (frame) => {
      expectTypeOf(alloc(frame, 'float64', 2)).toEqualTypeOf<GpuArray<'float64'>>();
    });
  });

  test('a GpuArray is a GPUBufferBinding and a bind group resource', () => {
    const x = alloc(deviceArena(device, 1024), 'float32', 4);
    expectTypeOf(x).toExtend<GPUBufferBinding>();
    expectTypeOf(x).toExtend<GPUBindingResource>();
    const entry: GPUBindGroupEntry = { binding: 0, resource: x };
    expectTypeOf(entry).toExtend<GPUBindGroupEntry>();
    expectTypeOf(bindGroup(device, layout, [x, x])).toEqualTypeOf<GPUBindGroup>();
    expectTypeOf(x.buffer).toEqualTypeOf<GPUBuffer>();
    expectTypeOf(x.dtype).toEqualTypeOf<'float32'>();
  });

  test('Similar of a GpuArray is a gpu space', () => {
    const x = alloc(deviceArena(device, 1024), 'float32', 4);
    expectTypeOf(Similar(x)).toEqualTypeOf<Space<'gpu'>>();
    expectTypeOf(alloc(Similar(x), 'int8', 4)).toEqualTypeOf<GpuArray<'int8'>>();
  });

  test('upload takes data of the array dtype; download gives a host array of it', () => {
    const x = alloc(deviceArena(device, 1024), 'float32', 4);
    upload(x, new Float32Array(4));
    // @ts-expect-error: an Int32Array is not float32 data
    upload(x, new Int32Array(4));
    // @ts-expect-error: a plain array is not a TypedArray
    upload(x, [1, 2, 3, 4]);
    expectTypeOf(download(x)).toEqualTypeOf<Promise<HostArray<'float32'>>>();
  });

  test('capture resolves to a Graph; replay returns nothing', () => {
    expectTypeOf(capture(device, () => {})).toEqualTypeOf<Promise<Graph>>();
    expectTypeOf<Graph['replay']>().returns.toEqualTypeOf<void>();
    // @ts-expect-error: options are checked
    capture(device, () => {}, { arena: [] });
  });

  test('instrument hands the device back; zeroArray keeps the array type', () => {
    expectTypeOf(instrument(device)).toEqualTypeOf<GPUDevice>();
    const x = alloc(deviceArena(device, 1024), 'int32', [2, 2]);
    expectTypeOf(zeroArray(x)).toEqualTypeOf<GpuArray<'int32'>>();
    // @ts-expect-error: a layout is not a device
    instrument(layout);
  });

  test('isGpuArray narrows', () => {
    const x: unknown = null;
    if (isGpuArray(x)) expectTypeOf(x).toEqualTypeOf<GpuArray>();
  });
});
