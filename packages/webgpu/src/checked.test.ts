import { Arena, StaleArrayError } from '@pol/arena';
import { POISON_BYTE } from '@pol/arena/backend';
import { alloc, scratchspace } from '@pol/core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  bindGroup,
  CaptureFailedError,
  capture,
  deviceArena,
  deviceSlab,
  download,
  UsageConflictError,
  upload,
} from './index.js';
import { GPUBufferUsage, GPUShaderStage, requestDevice } from './test-support/gpu.js';
import { bufferBindingsOfWgsl } from './wgsl.js';

let device: GPUDevice;
beforeAll(async () => {
  device = await requestDevice('checked');
});
afterAll(() => device.destroy());

// y[i] = x[i] * 2, with x bound read-only or read_write as asked
function doubler(xAccess: 'read' | 'read_write', layout: 'explicit' | 'auto' | 'explicit, from the pipeline') {
  const code = /* wgsl */ `
    // a comment with var<storage, read_write> in it does not count
    @group(0) @binding(0) var<storage, ${xAccess}> x: array<f32>;
    @binding(1) @group(0) var<storage, read_write> y: array<f32>;
    @compute @workgroup_size(4) fn main(@builtin(global_invocation_id) id: vec3<u32>) { y[id.x] = x[id.x] * 2.0; }`;
  const module = device.createShaderModule({ code });
  if (layout === 'auto') {
    const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
    return { pipeline, layout: pipeline.getBindGroupLayout(0) };
  }
  const groupLayout = device.createBindGroupLayout({
    entries: [
      { binding: 0, visibility: GPUShaderStage.COMPUTE, buffer: { type: xAccess === 'read' ? 'read-only-storage' : 'storage' } },
      { binding: 1, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'storage' } },
    ],
  });
  const pipeline = device.createComputePipeline({
    layout: device.createPipelineLayout({ bindGroupLayouts: [groupLayout] }),
    compute: { module, entryPoint: 'main' },
  });
  return { pipeline, layout: layout === 'explicit' ? groupLayout : pipeline.getBindGroupLayout(0) };
}

function dispatch(kernel: { pipeline: GPUComputePipeline }, group: GPUBindGroup, indirect?: GPUBuffer, indirectOffset = 0): void {
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  pass.setPipeline(kernel.pipeline);
  pass.setBindGroup(0, group);
  if (indirect === undefined) pass.dispatchWorkgroups(1);
  else pass.dispatchWorkgroupsIndirect(indirect, indirectOffset);
  pass.end();
  device.queue.submit([encoder.finish()]);
}

async function validationError(f: () => void): Promise<string | null> {
  device.pushErrorScope('validation');
  f();
  return (await device.popErrorScope())?.message ?? null;
}

describe('checked mode', () => {
  test('encoders are left as the device made them until a checked arena carves on the device', () => {
    const arena = deviceArena(device, 1024);
    alloc(arena, 'float32', 4);
    expect(Object.getOwnPropertyNames(device.createCommandEncoder())).toEqual([]);
    alloc(deviceArena(device, 1024, { checked: true }), 'float32', 4);
    expect(Object.getOwnPropertyNames(device.createCommandEncoder()).sort()).toEqual(['beginComputePass', 'copyBufferToBuffer']);
  });

  test.each(['explicit', 'auto', 'explicit, from the pipeline'] as const)(
    'a read-only and a writable binding of one slab are refused at dispatch, naming both (%s layout)',
    async (layout) => {
      const kernel = doubler('read', layout);
      const arena = deviceArena(device, 2048, { checked: true, label: 'acts' });
      const x = alloc(arena, 'float32', 4);
      const y = alloc(arena, 'float32', 4);
      const group = bindGroup(device, kernel.layout, [x, y]);
      let error: unknown;
      try {
        dispatch(kernel, group);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(UsageConflictError);
      const e = error as UsageConflictError;
      expect(e.code).toBe('POL_GPU_USAGE_CONFLICT');
      expect(e.message).toContain("group 0 binding 1 as 'storage', bytes [256, 272) of device slab 'acts' (float32[4])");
      expect(e.message).toContain("group 0 binding 0 as 'read-only-storage', bytes [0, 16) of device slab 'acts' (float32[4])");
      expect(e.message).toMatch(/per whole buffer.*another slab/s);

      // WebGPU agrees, later: the same dispatch on an unchecked arena is a validation error
      const plain = deviceArena(device, 2048);
      const px = alloc(plain, 'float32', 4);
      const py = alloc(plain, 'float32', 4);
      expect(await validationError(() => dispatchUnchecked(kernel, bindGroup(device, kernel.layout, [px, py])))).toMatch(
        /writable usage and another usage in the same synchronization scope/,
      );
    },
  );

  test('bind every array as storage, or keep read-only data in another slab: both are accepted', async () => {
    const acts = deviceArena(device, 2048, { checked: true });
    const weights = deviceArena(device, 1024, { checked: true });
    const rw = doubler('read_write', 'explicit');
    const ro = doubler('read', 'auto');
    const x = alloc(acts, 'float32', 4);
    const y = alloc(acts, 'float32', 4);
    const w = alloc(weights, 'float32', 4);
    upload(x, Float32Array.of(1, 2, 3, 4));
    upload(w, Float32Array.of(5, 6, 7, 8));
    expect(await validationError(() => dispatch(rw, bindGroup(device, rw.layout, [x, y])))).toBeNull();
    expect(Array.from((await download(y)).data)).toEqual([2, 4, 6, 8]);
    expect(await validationError(() => dispatch(ro, bindGroup(device, ro.layout, [w, y])))).toBeNull();
    expect(Array.from((await download(y)).data)).toEqual([10, 12, 14, 16]);
  });

  test('two overlapping writable ranges are refused, naming both and the shared bytes', () => {
    const kernel = doubler('read_write', 'explicit');
    const arena = deviceArena(device, 2048, { checked: true, label: 'twice' });
    const x = alloc(arena, 'float32', 8);
    const group = bindGroup(device, kernel.layout, [x, { buffer: x.buffer, offset: 0, size: 16 }]);
    expect(() => dispatch(kernel, group)).toThrow(/overlapping writable ranges of device slab 'twice'.*share bytes \[0, 16\)/s);
  });

  test('dynamic offsets are applied before comparing ranges', async () => {
    const layout = device.createBindGroupLayout({
      entries: [
        { binding: 0, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'storage', hasDynamicOffset: true } },
        { binding: 1, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'storage' } },
      ],
    });
    const module = device.createShaderModule({
      code: `@group(0) @binding(0) var<storage, read_write> x: array<f32>; @group(0) @binding(1) var<storage, read_write> y: array<f32>;
             @compute @workgroup_size(4) fn main(@builtin(global_invocation_id) id: vec3<u32>) { y[id.x] = x[id.x]; }`,
    });
    const pipeline = device.createComputePipeline({
      layout: device.createPipelineLayout({ bindGroupLayouts: [layout] }),
      compute: { module, entryPoint: 'main' },
    });
    const arena = deviceArena(device, 4096, { checked: true });
    const a = alloc(arena, 'float32', 4);
    const b = alloc(arena, 'float32', 4);
    const group = bindGroup(device, layout, [a, b]);
    const run = (offset: number) => {
      const encoder = device.createCommandEncoder();
      const pass = encoder.beginComputePass();
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, group, [offset]);
      pass.dispatchWorkgroups(1);
      pass.end();
      device.queue.submit([encoder.finish()]);
    };
    expect(await validationError(() => run(512))).toBeNull();
    expect(() => run(256)).toThrow(UsageConflictError); // a shifted onto b
  });

  test('indirect arguments in a slab the dispatch writes are refused', () => {
    const kernel = doubler('read_write', 'explicit');
    const arena = deviceArena(device, 4096, { checked: true, usage: GPUBufferUsage.INDIRECT });
    const x = alloc(arena, 'float32', 4);
    const y = alloc(arena, 'float32', 4);
    const args = alloc(arena, 'uint32', 3);
    upload(args, Uint32Array.of(1, 1, 1));
    expect(() => dispatch(kernel, bindGroup(device, kernel.layout, [x, y]), args.buffer, args.offset)).toThrow(
      /indirect dispatch arguments as 'indirect'.*Indirect arguments are read-only.*usage: GPUBufferUsage.INDIRECT/s,
    );
  });

  test('a uniform in a slab the dispatch writes: the advice fits a binding that can never be writable', () => {
    const module = device.createShaderModule({
      code: `@group(0) @binding(0) var<uniform> scale: vec4<f32>;
      @group(0) @binding(1) var<storage, read_write> y: array<f32>;
      @compute @workgroup_size(4) fn main(@builtin(global_invocation_id) id: vec3<u32>) { y[id.x] = scale.x; }`,
    });
    const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
    const arena = deviceArena(device, 4096, { checked: true, usage: GPUBufferUsage.UNIFORM, label: 'mixed' });
    const scale = alloc(arena, 'float32', 4);
    const y = alloc(arena, 'float32', 4);
    let error: unknown;
    try {
      dispatch({ pipeline }, bindGroup(device, pipeline.getBindGroupLayout(0), [scale, y]));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UsageConflictError);
    const message = (error as Error).message;
    expect(message).toContain("group 0 binding 0 as 'uniform', bytes [0, 16) of device slab 'mixed'");
    expect(message).toMatch(/uniform binding can never be writable.*slab of its own/s);
    expect(message).not.toMatch(/as 'storage' \(var<storage, read_write>/);
  });

  test('a copy within one slab is refused', () => {
    const arena = deviceArena(device, 2048, { checked: true, label: 'copies' });
    const a = alloc(arena, 'float32', 4);
    const b = alloc(arena, 'float32', 4);
    const encoder = device.createCommandEncoder();
    expect(() => encoder.copyBufferToBuffer(a.buffer, a.offset, b.buffer, b.offset, 16)).toThrow(
      /copyBufferToBuffer from bytes \[0, 16\) to bytes \[256, 272\) of device slab 'copies'/,
    );
  });

  test('checks run under capture too: the step fails at the dispatch', () => {
    const kernel = doubler('read', 'explicit');
    const arena = deviceArena(device, 2048, { checked: true });
    const x = alloc(arena, 'float32', 4);
    const y = alloc(arena, 'float32', 4);
    const group = bindGroup(device, kernel.layout, [x, y]);
    expect(() => capture(device, () => dispatch(kernel, group))).toThrow(UsageConflictError);
    expect(() => capture(device, () => {})).toThrow(CaptureFailedError); // and the device is not left recording
  });

  test('arrays of a closed frame are stale: binding or transferring them throws StaleArrayError', () => {
    const kernel = doubler('read_write', 'explicit');
    const arena = deviceArena(device, 2048, { checked: true });
    const y = alloc(arena, 'float32', 4);
    const escaped = scratchspace(arena, (frame) => alloc(frame, 'float32', 4));
    expect(() => bindGroup(device, kernel.layout, [escaped, y])).toThrow(StaleArrayError);
    expect(() => upload(escaped, new Float32Array(4))).toThrow(StaleArrayError);
    expect(() => download(escaped)).toThrow(StaleArrayError);
    expect(String(escaped)).toContain('stale');
    expect(escaped.dtype).toBe('float32');
  });

  test("released bytes are poisoned: NaN for floats, @pol/arena's pattern for integers", async () => {
    const arena = new Arena(deviceSlab(device, 2048), { checked: true });
    scratchspace(arena, (frame) => {
      upload(alloc(frame, 'float32', 4), Float32Array.of(1, 2, 3, 4));
      upload(alloc(frame, 'int32', 4), Int32Array.of(1, 2, 3, 4));
    });
    const f = alloc(arena, 'float32', 4);
    const i = alloc(arena, 'int32', 4);
    expect(Array.from((await download(f)).data).every(Number.isNaN)).toBe(true);
    const pattern = new Int32Array(new Uint8Array(4).fill(POISON_BYTE).buffer)[0];
    expect(Array.from((await download(i)).data)).toEqual([pattern, pattern, pattern, pattern]);
  });
});

describe('reading binding types from WGSL (for auto layouts)', () => {
  test('storage, read-only storage and uniform declarations, in any attribute order, ignoring comments', () => {
    const groups = bufferBindingsOfWgsl(`
      /* var<storage, read_write> hidden: f32; /* nested */ still a comment */
      @group(0) @binding(0) var<storage> a: array<f32>;
      @group(0)
      @binding(1) var<storage, read> b: array<f32>;
      @binding(2) @group(0) var<storage,read_write> c: array<f32>; // var<uniform> no
      @group( 1 ) @binding( 3, ) var<uniform> u: vec4<f32>;
      @group(1) @binding(4) var t: texture_2d<f32>;
      @group(G) @binding(5) var<storage, read_write> d: array<f32>;
    `);
    expect([...(groups.get(0) ?? [])]).toEqual([
      [0, 'read-only-storage'],
      [1, 'read-only-storage'],
      [2, 'storage'],
    ]);
    expect([...(groups.get(1) ?? [])]).toEqual([[3, 'uniform']]);
    expect(groups.size).toBe(2);
  });
});

function dispatchUnchecked(kernel: { pipeline: GPUComputePipeline }, group: GPUBindGroup): void {
  // The device is instrumented (a checked arena carved on it), so go around the check to show
  // what WebGPU itself says: encode through the prototype's methods.
  const encoder = Object.getPrototypeOf(device).createCommandEncoder.call(device) as GPUCommandEncoder;
  const pass = Object.getPrototypeOf(encoder).beginComputePass.call(encoder) as GPUComputePassEncoder;
  pass.setPipeline(kernel.pipeline);
  pass.setBindGroup(0, group);
  pass.dispatchWorkgroups(1);
  pass.end();
  device.queue.submit([encoder.finish()]);
}
