import { Arena, ArenaFullError, InvalidAlignmentError, mark, retract } from '@pol/arena';
import { alloc, InvalidArgumentError, PolError } from '@pol/core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  DeviceLostError,
  deviceArena,
  deviceSlab,
  GpuAllocationError,
  GpuLimitError,
  isDeviceSlab,
  isGpuArray,
  slabUsage,
} from './index.js';
import { countCalls, failing, GPUBufferUsage, requestDevice } from './test-support/gpu.js';

let device: GPUDevice;
beforeAll(async () => {
  device = await requestDevice('slabs');
});
afterAll(() => device.destroy());

describe('deviceSlab', () => {
  test('makes one GPUBuffer with STORAGE | COPY_SRC | COPY_DST, rounded up to a multiple of 4', () => {
    const slab = deviceSlab(device, 1021, { label: 'acts' });
    expect(isDeviceSlab(slab)).toBe(true);
    expect(slab.byteLength).toBe(1024);
    expect(slab.buffer.size).toBe(1024);
    expect(slab.buffer.usage).toBe(GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST);
    expect(slab.buffer.usage).toBe(slabUsage);
    expect(slab.label).toBe('acts');
    expect(slab.device).toBe(device);
    expect(String(slab)).toContain("'acts'");
    slab.destroy();
    expect(slab.destroyed).toBe(true);
    slab.destroy(); // idempotent
  });

  test('adds extra usages', () => {
    const slab = deviceSlab(device, 256, { usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.INDIRECT });
    expect(slab.buffer.usage).toBe(slabUsage | GPUBufferUsage.UNIFORM | GPUBufferUsage.INDIRECT);
    slab.destroy();
  });

  test.each([
    ['no device', () => deviceSlab({} as GPUDevice, 256)],
    ['a zero size', () => deviceSlab(device, 0)],
    ['a negative size', () => deviceSlab(device, -4)],
    ['a fractional size', () => deviceSlab(device, 4.5)],
    ['NaN', () => deviceSlab(device, Number.NaN)],
    ['a string size', () => deviceSlab(device, '256' as unknown as number)],
    ['options that are not an object', () => deviceSlab(device, 256, 3 as never)],
    ['an unknown option', () => deviceSlab(device, 256, { size: 3 } as never)],
    ['MAP_READ usage', () => deviceSlab(device, 256, { usage: GPUBufferUsage.MAP_READ })],
    ['a non-integer usage', () => deviceSlab(device, 256, { usage: 1.5 })],
    ['a non-string label', () => deviceSlab(device, 256, { label: 3 as never })],
  ])('refuses %s with InvalidArgumentError, creating nothing', (_, f) => {
    const calls = countCalls(device, ['createBuffer']);
    try {
      expect(f).toThrow(InvalidArgumentError);
      expect(calls.counts.createBuffer).toBe(0);
    } finally {
      calls.restore();
    }
  });

  test('checks maxBufferSize before creating anything, naming the limit and requiredLimits', () => {
    const calls = countCalls(device, ['createBuffer']);
    try {
      const size = device.limits.maxBufferSize + 4;
      let error: unknown;
      try {
        deviceSlab(device, size);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(GpuLimitError);
      const e = error as GpuLimitError;
      expect(e.code).toBe('POL_GPU_LIMIT');
      expect(e.limit).toBe('maxBufferSize');
      expect(e.requested).toBe(size);
      expect(e.allowed).toBe(device.limits.maxBufferSize);
      expect(e.message).toContain('maxBufferSize');
      expect(e.message).toContain('requiredLimits');
      expect(calls.counts.createBuffer).toBe(0);
    } finally {
      calls.restore();
    }
  });

  test('reports a failing createBuffer as GpuAllocationError, with the cause', () => {
    const restore = failing(device, 'createBuffer', new RangeError('out of memory'));
    try {
      let error: unknown;
      try {
        deviceSlab(device, 4096, { label: 'big' });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(GpuAllocationError);
      expect(error).toBeInstanceOf(PolError);
      expect((error as GpuAllocationError).code).toBe('POL_GPU_ALLOCATION_FAILED');
      expect((error as Error).message).toContain('out of memory');
      expect((error as Error).cause).toBeInstanceOf(RangeError);
    } finally {
      restore();
    }
    // and the device still works
    deviceSlab(device, 256).destroy();
  });
});

describe('an arena over a device slab', () => {
  test('carves GpuArrays that are GPUBufferBindings of the slab', () => {
    const slab = deviceSlab(device, 4096);
    const arena = new Arena(slab);
    expect(arena.describe().residency).toBe('device');
    const a = alloc(arena, 'float32', [4, 4]);
    const b = alloc(arena, 'uint8', 3);
    const c = alloc(arena, 'int32', 0);
    expect(isGpuArray(a)).toBe(true);
    expect([a.buffer, a.offset, a.size, a.byteLength, a.length, a.dtype, a.dims]).toEqual([
      slab.buffer,
      0,
      64,
      64,
      16,
      'float32',
      [4, 4],
    ]);
    expect(a.device).toBe(device);
    // binding sizes are multiples of 4 and never 0
    expect([b.offset, b.size, b.byteLength]).toEqual([256, 4, 3]);
    expect([c.offset, c.size, c.byteLength, c.length]).toEqual([512, 4, 0, 0]);
    expect(arena.offset).toBe(516);
    expect(String(a)).toMatch(/float32\[4, 4\] at 0 in device slab/);
    slab.destroy();
  });

  test("refuses an alignment below the device's minStorageBufferOffsetAlignment (read from device.limits)", () => {
    const slab = deviceSlab(device, 4096, { label: 'low' });
    const min = device.limits.minStorageBufferOffsetAlignment;
    let error: unknown;
    try {
      new Arena(slab, { alignment: min / 2 });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(GpuLimitError);
    expect((error as GpuLimitError).limit).toBe('minStorageBufferOffsetAlignment');
    expect((error as Error).message).toContain(`alignment: ${min}`);
    expect(() => new Arena(slab, { alignment: min * 2 })).not.toThrow();
    expect(() => new Arena(slab, { alignment: 3 })).toThrow(InvalidAlignmentError);
    slab.destroy();
  });

  test('checks the uniform alignment too on a slab with UNIFORM usage', () => {
    const slab = deviceSlab(device, 4096, { usage: GPUBufferUsage.UNIFORM });
    expect(() => new Arena(slab, { alignment: device.limits.minUniformBufferOffsetAlignment / 2 })).toThrow(GpuLimitError);
    slab.destroy();
  });

  test('a full arena changes nothing', () => {
    const arena = deviceArena(device, 1024);
    alloc(arena, 'float32', 64);
    expect(() => alloc(arena, 'float32', 256)).toThrow(ArenaFullError);
    expect(arena.offset).toBe(256);
    arena.slab.destroy();
  });

  test('checks maxStorageBufferBindingSize per carve, changing nothing', () => {
    const limit = device.limits.maxStorageBufferBindingSize;
    const slab = deviceSlab(device, limit + 1024);
    const arena = new Arena(slab);
    alloc(arena, 'uint8', 16);
    const before = arena.offset;
    let error: unknown;
    try {
      alloc(arena, 'uint8', limit + 4);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(GpuLimitError);
    expect((error as GpuLimitError).limit).toBe('maxStorageBufferBindingSize');
    expect((error as Error).message).toContain('requiredLimits');
    expect(arena.offset).toBe(before);
    expect(arena.watermark).toBe(before);
    slab.destroy();
  });

  test('a destroyed slab refuses new arenas and carves, changing nothing', () => {
    const slab = deviceSlab(device, 1024);
    const arena = new Arena(slab);
    slab.destroy();
    expect(() => new Arena(slab)).toThrow(/destroyed/);
    expect(() => alloc(arena, 'float32', 4)).toThrow(InvalidArgumentError);
    expect(arena.offset).toBe(0);
  });

  test('retract and re-carve gives the same array objects (a steady loop allocates once)', () => {
    const arena = deviceArena(device, 4096);
    const m = mark(arena);
    const a = alloc(arena, 'float32', 8);
    retract(arena, m);
    expect(alloc(arena, 'float32', 8)).toBe(a);
    arena.slab.destroy();
  });
});

describe('deviceArena', () => {
  test('makes a slab and an arena aligned for the device', () => {
    const arena = deviceArena(device, 2048, { label: 'made', checked: true });
    expect(arena.alignment).toBe(Math.max(256, device.limits.minStorageBufferOffsetAlignment));
    expect(arena.checked).toBe(true);
    expect(arena.capacity).toBe(2048);
    expect(isDeviceSlab(arena.slab)).toBe(true);
    expect(arena.slab.label).toBe('made');
    arena.slab.destroy();
  });

  test('bad options and alignments throw before creating anything', () => {
    const calls = countCalls(device, ['createBuffer']);
    try {
      expect(() => deviceArena(device, 1024, { checked: 'yes' as never })).toThrow(InvalidArgumentError);
      expect(() => deviceArena(device, 1024, { bogus: 1 } as never)).toThrow(InvalidArgumentError);
      expect(() => deviceArena(null as never, 1024)).toThrow(InvalidArgumentError);
      expect(() => deviceArena(device, 0)).toThrow(InvalidArgumentError);
      expect(() => deviceArena(device, 1024, { alignment: 300 })).toThrow(InvalidAlignmentError);
      expect(() => deviceArena(device, 1024, { alignment: 16 })).toThrow(GpuLimitError);
      expect(calls.counts.createBuffer).toBe(0);
    } finally {
      calls.restore();
    }
  });
});

describe('a lost device', () => {
  test('refuses slabs, arenas and carves with DeviceLostError', async () => {
    const lost = await requestDevice('doomed');
    const slab = deviceSlab(lost, 1024);
    const arena = new Arena(slab);
    lost.destroy();
    for (const f of [() => deviceSlab(lost, 1024), () => alloc(arena, 'float32', 4), () => new Arena(slab)]) {
      let error: unknown;
      try {
        f();
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(DeviceLostError);
      expect((error as DeviceLostError).code).toBe('POL_GPU_DEVICE_LOST');
      expect((error as DeviceLostError).reason).toBe('destroyed');
    }
    expect(arena.offset).toBe(0);
  });
});
