import { Arena, mark, retract } from '@pol/arena';
import { alloc, InvalidArgumentError, Similar, scratchspace } from '@pol/core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { bindGroup, DeviceLostError, deviceArena, deviceSlab, GpuAllocationError } from './index.js';
import { countCalls, failing, GPUShaderStage, requestDevice } from './test-support/gpu.js';

let device: GPUDevice;
let layout: GPUBindGroupLayout;
beforeAll(async () => {
  device = await requestDevice('bindgroups');
  layout = device.createBindGroupLayout({
    entries: [0, 1].map((binding) => ({ binding, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'storage' as const } })),
  });
});
afterAll(() => device.destroy());

describe('bindGroup', () => {
  test('creates a group once per (layout, ranges) and finds it afterwards', () => {
    const arena = deviceArena(device, 4096);
    const m = mark(arena);
    const calls = countCalls(device, ['createBindGroup']);
    try {
      const groups = new Set<GPUBindGroup>();
      for (let step = 0; step < 100; step++) {
        const x = alloc(arena, 'float32', 16);
        const y = alloc(arena, 'float32', 16);
        groups.add(bindGroup(device, layout, [x, y]));
        retract(arena, m);
      }
      expect(groups.size).toBe(1);
      expect(calls.counts.createBindGroup).toBe(1);
    } finally {
      calls.restore();
    }
  });

  test('different buffers, offsets or sizes make different groups; equal plain bindings find the same', () => {
    const arena = deviceArena(device, 4096);
    const x = alloc(arena, 'float32', 16);
    const y = alloc(arena, 'float32', 16);
    const g = bindGroup(device, layout, [x, y]);
    expect(bindGroup(device, layout, [y, x])).not.toBe(g);
    expect(bindGroup(device, layout, [x, { buffer: y.buffer, offset: y.offset, size: 32 }])).not.toBe(g);
    expect(
      bindGroup(device, layout, [
        { buffer: x.buffer, offset: 0, size: 64 },
        { buffer: y.buffer, offset: 256, size: 64 },
      ]),
    ).toBe(g);
    const other = alloc(Similar(x), 'float32', 16);
    expect(bindGroup(device, layout, [x, other])).not.toBe(g);
    // the whole buffer, with no offset or size
    const whole = bindGroup(device, layout, [x, { buffer: other.buffer }]);
    expect(bindGroup(device, layout, [x, { buffer: other.buffer }])).toBe(whole);
    other.buffer.destroy();
  });

  test("an 'auto' layout asked for again is the same object, so its groups are found", () => {
    const arena = deviceArena(device, 4096); // the device meets Pol before the pipeline is made
    const module = device.createShaderModule({
      code: '@group(0) @binding(0) var<storage, read_write> a: array<f32>; @compute @workgroup_size(1) fn main() { a[0] = 1.0; }',
    });
    const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
    expect(pipeline.getBindGroupLayout(0)).toBe(pipeline.getBindGroupLayout(0));
    const x = alloc(arena, 'float32', 4);
    const calls = countCalls(device, ['createBindGroup']);
    try {
      for (let i = 0; i < 10; i++) bindGroup(device, pipeline.getBindGroupLayout(0), [x]);
      expect(calls.counts.createBindGroup).toBe(1);
    } finally {
      calls.restore();
    }
  });

  test('the group binds what it says: the device accepts it', async () => {
    const arena = deviceArena(device, 4096);
    const x = alloc(arena, 'float32', 16);
    const y = alloc(arena, 'float32', 16);
    device.pushErrorScope('validation');
    bindGroup(device, layout, [x, y]);
    expect(await device.popErrorScope()).toBeNull();
  });

  test.each([
    ['no device', () => bindGroup(undefined as never, layout, [])],
    ['no layout', () => bindGroup(device, null as never, [])],
    ['bindings that are not an array', () => bindGroup(device, layout, {} as never)],
    ['a binding that is not an object', () => bindGroup(device, layout, [3 as never])],
    ['a binding without a buffer', () => bindGroup(device, layout, [{} as never])],
    ['a negative offset', () => bindGroup(device, layout, [{ buffer: deviceSlab(device, 256).buffer, offset: -256 }])],
    ['a zero size', () => bindGroup(device, layout, [{ buffer: deviceSlab(device, 256).buffer, size: 0 }])],
  ])('refuses %s with InvalidArgumentError, creating nothing', (_, f) => {
    const calls = countCalls(device, ['createBindGroup']);
    try {
      expect(f).toThrow(InvalidArgumentError);
      expect(calls.counts.createBindGroup).toBe(0);
    } finally {
      calls.restore();
    }
  });

  test('an array seen before is found by itself, and another array over the same range finds the same group', () => {
    const slab = deviceSlab(device, 4096);
    const [a, b] = [new Arena(slab), new Arena(slab)];
    const x = alloc(a, 'float32', 16);
    const y = alloc(a, 'float32', 16);
    const calls = countCalls(device, ['createBindGroup']);
    try {
      const g = bindGroup(device, layout, [x, y]);
      for (let i = 0; i < 3; i++) expect(bindGroup(device, layout, [x, y])).toBe(g);
      // Other objects over the same ranges: a second arena's carves, and plain bindings.
      const [x2, y2] = [alloc(b, 'float32', 16), alloc(b, 'float32', 16)];
      expect(x2).not.toBe(x);
      expect(bindGroup(device, layout, [x2, y2])).toBe(g);
      expect(bindGroup(device, layout, [x2, { buffer: y.buffer, offset: y.offset, size: y.size }])).toBe(g);
      expect(bindGroup(device, layout, [y, x])).not.toBe(g);
      expect(calls.counts.createBindGroup).toBe(2);
      // Found by the arrays themselves, and still refused once their buffer is gone.
      slab.destroy();
      for (const pair of [
        [x, y],
        [x2, y2],
      ]) {
        expect(() => bindGroup(device, layout, pair)).toThrow(InvalidArgumentError);
        expect(() => bindGroup(device, layout, pair)).toThrow(/destroyed/);
      }
      expect(calls.counts.createBindGroup).toBe(2);
    } finally {
      calls.restore();
    }
  });

  test('refuses a binding whose buffer is gone, even when its group is cached', () => {
    const slab = deviceSlab(device, 4096);
    const arena = new Arena(slab);
    const x = alloc(arena, 'float32', 4);
    const y = alloc(arena, 'float32', 4);
    bindGroup(device, layout, [x, y]);
    slab.destroy();
    expect(() => bindGroup(device, layout, [x, y])).toThrow(/destroyed/);
    const exemplar = alloc(deviceArena(device, 1024), 'float32', 4);
    const escaped = scratchspace(Similar(exemplar), (frame) => alloc(frame, 'float32', 4));
    expect(() => bindGroup(device, layout, [exemplar, escaped])).toThrow(/frame on Similar/);
  });

  test('a failing createBindGroup is a GpuAllocationError, and nothing is cached', () => {
    const arena = deviceArena(device, 4096);
    const x = alloc(arena, 'float32', 4);
    const y = alloc(arena, 'float32', 8);
    const restore = failing(device, 'createBindGroup', new Error('device says no'));
    try {
      expect(() => bindGroup(device, layout, [x, y])).toThrow(GpuAllocationError);
    } finally {
      restore();
    }
    const calls = countCalls(device, ['createBindGroup']);
    try {
      bindGroup(device, layout, [x, y]);
      expect(calls.counts.createBindGroup).toBe(1);
    } finally {
      calls.restore();
    }
  });

  test('on a lost device, even a cached group is refused with DeviceLostError', async () => {
    const doomed = await requestDevice('doomed');
    const l = doomed.createBindGroupLayout({
      entries: [{ binding: 0, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'storage' } }],
    });
    const x = alloc(deviceArena(doomed, 1024), 'float32', 4);
    bindGroup(doomed, l, [x]);
    doomed.destroy();
    expect(() => bindGroup(doomed, l, [x])).toThrow(DeviceLostError);
  });
});
