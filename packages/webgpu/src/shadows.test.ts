// @pol/verbs' Shadows on a device arena, on a real WebGPU (Dawn; SwiftShader without a GPU): the
// gradients a training step accumulates into, zeroed by zeroShadows in a captured step, so that
// every replay starts them at zero.
import { alloc, scratchspace, Undef } from '@pol/core';
import { Shadows, walkShadows, zeroShadows } from '@pol/verbs';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { bindGroup, capture, deviceArena, download, upload } from './index.js';
import { GPUShaderStage, requestDevice } from './test-support/gpu.js';

let device: GPUDevice | undefined;
beforeAll(async () => {
  device = await requestDevice('shadows');
});
afterAll(() => device?.destroy());
function gpu(): GPUDevice {
  if (device === undefined) throw new Error('beforeAll has not run');
  return device;
}

test('Shadows(deviceArena, params) on Dawn: zeroed arrays next to the parameters, zeroed by zeroShadows in a captured step, on every replay', async () => {
  const device = gpu();
  const arena = deviceArena(device, 1 << 16, { label: 'shadows' });
  try {
    const params = alloc(arena, { w: Undef('float32', [8, 4]), b: Undef('float32', [4]) });
    upload(
      params.w,
      Float32Array.from({ length: 32 }, (_, i) => i + 1),
    );
    upload(params.b, Float32Array.of(-1, -2, -3, -4));
    // Junk where the shadows will be carved: Shadows must zero what it hands out.
    scratchspace(arena, (frame) => {
      upload(alloc(frame, 'float32', [64]), new Float32Array(64).fill(7));
    });
    const grads = Shadows(arena, params);
    expect(grads.w.dims).toEqual([8, 4]);
    expect(grads.b.dims).toEqual([4]);
    expect(grads.w.buffer).toBe(arena.slab.buffer);
    expect(grads.b.buffer).toBe(arena.slab.buffer);
    expect(Array.from((await download(grads.w)).data)).toEqual(new Array(32).fill(0));
    expect(Array.from((await download(grads.b)).data)).toEqual(new Array(4).fill(0));

    // A backward kernel that adds into its gradient (g += p): only the zeroing before it keeps
    // one step's gradient from piling onto the last.
    const layout = device.createBindGroupLayout({
      entries: [0, 1].map((binding) => ({ binding, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'storage' as const } })),
    });
    const pipeline = device.createComputePipeline({
      layout: device.createPipelineLayout({ bindGroupLayouts: [layout] }),
      compute: {
        module: device.createShaderModule({
          code: `@group(0) @binding(0) var<storage, read_write> p: array<f32>;
@group(0) @binding(1) var<storage, read_write> g: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3u) {
  if (id.x < arrayLength(&g)) { g[id.x] += p[id.x]; }
}`,
        }),
        entryPoint: 'main',
      },
    });
    const step = () => {
      zeroShadows(grads);
      const encoder = device.createCommandEncoder();
      const pass = encoder.beginComputePass();
      pass.setPipeline(pipeline);
      walkShadows(params, grads, (p, g) => {
        pass.setBindGroup(0, bindGroup(device, layout, [p, g]));
        pass.dispatchWorkgroups(1);
      });
      pass.end();
      device.queue.submit([encoder.finish()]);
    };
    const junk = () => walkShadows(grads, grads, (g) => upload(g, new Float32Array(g.length).fill(1e6)));
    const expected = { w: Array.from({ length: 32 }, (_, i) => i + 1), b: [-1, -2, -3, -4] };
    const read = async () => ({ w: Array.from((await download(grads.w)).data), b: Array.from((await download(grads.b)).data) });

    junk();
    const graph = await capture(device, step, { label: 'shadows step' });
    try {
      expect(await read()).toEqual(expected);
      for (let replay = 0; replay < 3; replay++) {
        junk();
        graph.replay();
        expect(await read()).toEqual(expected);
      }
    } finally {
      graph.dispose();
    }
  } finally {
    arena.slab.destroy();
  }
});
