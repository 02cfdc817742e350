/**
 * Read-only slabs (`readOnly: true`): the supported home of weights and constants that kernels
 * declare `var<storage, read>`, bound beside the arrays a dispatch writes; checked mode refuses a
 * dispatch that binds them writable, and names them as the fix for a mixed binding.
 */
import { alloc, InvalidArgumentError, scratchspace } from '@pol/core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { bindGroup, deviceArena, deviceSlab, download, type GpuArray, UsageConflictError, upload, uploadBatch } from './index.js';
import { countCalls, requestDevice, validationOf } from './test-support/gpu.js';

let device: GPUDevice;
let affine: GPUComputePipeline; // y = x · w + b: the weights and b read-only, the activations read_write (one arena)
let writesWeights: GPUComputePipeline; // w -= g: an optimizer writes its weights
beforeAll(async () => {
  device = await requestDevice('read-only');
  deviceArena(device, 256); // Pol meets the device before its pipelines
  const pipeline = (code: string) =>
    device.createComputePipeline({
      layout: 'auto',
      compute: { module: device.createShaderModule({ code }), entryPoint: 'main' },
    });
  affine = pipeline(`@group(0) @binding(0) var<storage, read_write> x: array<f32>;
    @group(0) @binding(1) var<storage, read> w: array<f32>;
    @group(0) @binding(2) var<uniform> b: vec4f;
    @group(0) @binding(3) var<storage, read_write> y: array<f32>;
    @compute @workgroup_size(4) fn main(@builtin(global_invocation_id) id: vec3u) {
      if (id.x < arrayLength(&y)) { y[id.x] = x[id.x] * w[id.x] + b[id.x]; }
    }`);
  writesWeights = pipeline(`@group(0) @binding(0) var<storage, read_write> w: array<f32>;
    @group(0) @binding(1) var<storage, read> g: array<f32>;
    @compute @workgroup_size(4) fn main(@builtin(global_invocation_id) id: vec3u) { if (id.x < arrayLength(&w)) { w[id.x] -= g[id.x]; } }`);
});
afterAll(() => device.destroy());

function run(pipeline: GPUComputePipeline, arrays: GpuArray[]): void {
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, bindGroup(device, pipeline.getBindGroupLayout(0), arrays));
  pass.dispatchWorkgroups(1);
  pass.end();
  device.queue.submit([encoder.finish()]);
}

const validation = async (f: () => void) => (await validationOf(device, f)).error;

describe('a read-only slab', () => {
  test('is made with readOnly, says so, and defaults to false', () => {
    const weights = deviceArena(device, 1024, { readOnly: true, label: 'weights' });
    expect(weights.slab.readOnly).toBe(true);
    expect(deviceSlab(device, 256).readOnly).toBe(false);
    expect(deviceSlab(device, 256, { readOnly: true }).readOnly).toBe(true);
  });

  test('holds weights a kernel reads `read`, beside the activations it writes: valid, and right', async () => {
    for (const checked of [false, true]) {
      const weights = deviceArena(device, 4096, { readOnly: true, label: 'weights', usage: 0x40 }); // UNIFORM too, for b
      const activations = deviceArena(device, 4096, { label: 'activations', checked });
      const w = alloc(weights, 'float32', [4]);
      const b = alloc(weights, 'float32', [4]);
      uploadBatch([w, b]).flush(); // host writes are how weights arrive (zeros here)...
      upload(w, Float32Array.of(1, 2, 3, 4)); // ...upload too
      upload(b, Float32Array.of(10, 20, 30, 40));
      const x = alloc(activations, 'float32', [4]);
      upload(x, Float32Array.of(1, 1, 2, 2));
      const y = alloc(activations, 'float32', [4]);
      const error = await validation(() =>
        scratchspace(activations, (frame) => {
          const t = alloc(frame, 'float32', [4]); // and scratch in a frame, beside them
          run(affine, [x, w, b, t]);
          run(affine, [t, w, b, y]);
        }),
      );
      expect(error).toBeNull();
      expect(Array.from((await download(y)).data)).toEqual([21, 64, 138, 232]);
    }
  });

  test('clears and copies into it are host-side writes, and allowed', async () => {
    const weights = deviceArena(device, 1024, { readOnly: true });
    const w = alloc(weights, 'float32', [4]);
    upload(w, Float32Array.of(1, 2, 3, 4));
    const encoder = device.createCommandEncoder();
    encoder.clearBuffer(w.buffer, w.offset, w.size);
    device.queue.submit([encoder.finish()]);
    expect(Array.from((await download(w)).data)).toEqual([0, 0, 0, 0]);
  });

  test('in checked mode, a dispatch that binds it writable is refused, before the device sees it', async () => {
    const weights = deviceArena(device, 1024, { readOnly: true, label: 'weights' });
    const grads = deviceArena(device, 1024, { checked: true, label: 'grads' });
    const w = alloc(weights, 'float32', [4]);
    const g = alloc(grads, 'float32', [4]);
    upload(w, Float32Array.of(1, 2, 3, 4));
    upload(g, Float32Array.of(1, 1, 1, 1));
    const refused = () => run(writesWeights, [w, g]);
    expect(refused).toThrow(UsageConflictError);
    expect(refused).toThrow(/read-only device slab 'weights'.*made read-only.*var<storage, read>.*without readOnly/s);
    expect(Array.from((await download(w)).data)).toEqual([1, 2, 3, 4]); // nothing ran
  });

  test('the refusal of a mixed binding names a read-only slab, and placement, as the ways out', () => {
    const one = deviceArena(device, 4096, { checked: true, label: 'everything' }); // w, read, beside y, written
    const [x, w, y] = [alloc(one, 'float32', [4]), alloc(one, 'float32', [4]), alloc(one, 'float32', [4])];
    const b = alloc(deviceArena(device, 1024, { usage: 0x40 }), 'float32', [4]);
    expect(() => run(affine, [x, w, b, y])).toThrow(/readOnly: true.*planPlacement and placedArena/s);
  });

  test.each<[string, unknown, RegExp]>([
    ['not a boolean', { readOnly: 'yes' }, /readOnly must be true or false, got 'yes'/],
    ['misspelt', { readonly: true }, /did you mean 'readOnly'/],
  ])('an option %s is refused, making nothing', (_name, options, message) => {
    const calls = countCalls(device, ['createBuffer']);
    try {
      expect(() => deviceArena(device, 1024, options as never)).toThrow(InvalidArgumentError);
      expect(() => deviceArena(device, 1024, options as never)).toThrow(message);
      expect(() => deviceSlab(device, 1024, options as never)).toThrow(message);
      expect(calls.counts.createBuffer).toBe(0);
    } finally {
      calls.restore();
    }
  });
});
