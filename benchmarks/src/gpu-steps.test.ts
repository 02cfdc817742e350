/**
 * The GPU step variants do the same work, and create what they are said to create: every variant
 * of a step starts from the same data and ends with bit-identical results, and the buffers and bind
 * groups each makes per step are counted on the device. On Dawn over SwiftShader (a missing
 * adapter fails these tests, never skips them). Nothing about timing is asserted.
 */

import { capture } from '@pol/webgpu';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openAdapter } from './gpu.js';
import { countGpuObjects, type GpuObjectCounter } from './gpu-count.js';
import { type PerceptronVariantName, type PerceptronVariants, perceptronVariants } from './gpu-perceptron.js';
import { bufferPerStep, compiledKernels, type PlainStep, pooled, prebuilt, readBuffer } from './gpu-plan.js';
import { polPlanStep } from './gpu-pol-plan.js';
import { uniformInputs, uniformKernels, uniformPlan } from './gpu-uniforms.js';

let plain: GPUDevice;
let pol: GPUDevice;
let plainCount: GpuObjectCounter;
let polCount: GpuObjectCounter;

beforeAll(async () => {
  plain = await (await openAdapter()).requestDevice({ label: 'test peers' });
  pol = await (await openAdapter()).requestDevice({ label: 'test pol' });
  plainCount = countGpuObjects(plain);
  polCount = countGpuObjects(pol);
});

afterAll(() => {
  plain?.destroy();
  pol?.destroy();
});

describe('countGpuObjects', () => {
  test('counts buffers and bind groups, Pol’s included, and is one counter per device', async () => {
    const device = await (await openAdapter()).requestDevice({ label: 'counted' });
    try {
      const counter = countGpuObjects(device);
      expect(countGpuObjects(device)).toBe(counter);
      expect([counter.buffers, counter.bindGroups, counter.total]).toEqual([0, 0, 0]);
      const buffer = device.createBuffer({ size: 16, usage: 0x80 });
      const { deviceArena } = await import('@pol/webgpu');
      deviceArena(device, 1024); // Pol's slab: one more buffer
      const layout = device.createBindGroupLayout({ entries: [{ binding: 0, visibility: 4, buffer: { type: 'storage' } }] });
      device.createBindGroup({ layout, entries: [{ binding: 0, resource: { buffer } }] });
      expect([counter.buffers, counter.bindGroups, counter.total]).toEqual([2, 1, 3]);
    } finally {
      device.destroy();
    }
  });
});

describe('compiledKernels', () => {
  test('finds each pipeline and layout by label, and leaves the device’s methods as they were', async () => {
    const device = await (await openAdapter()).requestDevice({ label: 'compiled' });
    try {
      const before = [device.createComputePipeline, device.createBindGroupLayout];
      const kernels = compiledKernels(device, () => uniformKernels(device));
      expect([...kernels.keys()].sort()).toEqual(['affine', 'clamp', 'gelu', 'residual']);
      expect([device.createComputePipeline, device.createBindGroupLayout]).toEqual(before);
    } finally {
      device.destroy();
    }
  });
});

describe('the perceptron step', () => {
  let v: PerceptronVariants;
  beforeAll(async () => {
    v = await perceptronVariants(plain, pol);
  });
  afterAll(() => v?.dispose());

  test('the plan is the example’s step: its 13 dispatches and its 4 gradient clears, nothing else, as the captured graph holds them', () => {
    const stats = v.replayed.graph.stats;
    expect(v.plain.plan.dispatches.length).toBe(13);
    expect(stats.dispatches).toBe(v.plain.plan.dispatches.length);
    // The step's clears are the zeroed slots the peers clear too; a copy would be work they do not do.
    expect(stats.copies).toBe(4);
    expect(v.plain.plan.slots.filter((s) => s.zeroed === true).length).toBe(stats.copies);
    expect(stats.passes).toBe(1);
    const lives = v.plain.plan.slots.map((s) => s.life);
    expect(lives.filter((l) => l === 'model').length).toBe(6); // x, labels, 4 parameters
    expect(lives.filter((l) => l === 'step').length).toBeGreaterThan(9);
    expect(v.plain.plan.slots.filter((s) => s.life === 'model').every((s) => s.initial?.length === s.size)).toBe(true);
    // The parameters are on a buffer of their own (the example's layers bind them read-only), and
    // Pol's hand-written step keeps them there too.
    expect(v.plain.plan.slots.filter((s) => s.group === 1).map((s) => s.life)).toEqual(['model', 'model', 'model', 'model']);
    expect(v.byHand.arenas).toHaveLength(2);
  });

  test('every variant computes the same parameters, bit for bit, after the same number of steps', async () => {
    const initial = await v.params('eager');
    pol.pushErrorScope('validation');
    plain.pushErrorScope('validation');
    const steps = 4;
    for (let i = 0; i < steps; i++) {
      v.eager.step();
      v.byHand.step();
      v.bufferPerStep.run();
      v.pool.run();
      v.floor.run();
    }
    v.floor4.run(); // 4 steps in one submit
    v.replayed.graph.replay({ times: steps - 1 }); // capture ran the first step; the rest in one submit
    // No variant binds a buffer both read-only and writable in a dispatch (a dispatch that did would not run).
    expect(await plain.popErrorScope()).toBeNull();
    expect(await pol.popErrorScope()).toBeNull();
    const expected = await v.params('eager');
    expect(expected).not.toEqual(initial);
    const names: PerceptronVariantName[] = ['byHand', 'bufferPerStep', 'pool', 'floor', 'floor4', 'replayed'];
    for (const name of names) expect(await v.params(name), name).toEqual(expected);
  });

  test('steady steps create what each variant is said to create', async () => {
    const made = (counter: GpuObjectCounter, run: () => void) => {
      const [buffers, groups] = [counter.buffers, counter.bindGroups];
      run();
      return [counter.buffers - buffers, counter.bindGroups - groups];
    };
    const stepSlots = v.plain.plan.slots.filter((s) => s.life === 'step').length;
    for (const f of [v.eager.step, v.byHand.step, v.pool.run]) f(); // warm: the cache and the pool fill
    expect(made(polCount, v.eager.step)).toEqual([0, 0]);
    expect(made(polCount, v.byHand.step)).toEqual([0, 0]);
    expect(made(polCount, () => v.replayed.graph.replay())).toEqual([0, 0]);
    expect(made(plainCount, v.floor.run)).toEqual([0, 0]);
    expect(made(plainCount, v.pool.run)).toEqual([0, 13]);
    expect(made(plainCount, v.bufferPerStep.run)).toEqual([stepSlots, 13]);
    await Promise.all([plain.queue.onSubmittedWorkDone(), pol.queue.onSubmittedWorkDone()]);
  });
});

describe('the uniform-heavy step', () => {
  test('every variant writes the same output for the same step’s uniforms', async () => {
    const plan = uniformPlan();
    const { inputs, set } = uniformInputs(plan);
    const peers: PlainStep = { device: plain, kernels: uniformKernels(plain), plan, inputs };
    const eager = polPlanStep(pol, uniformKernels(pol), plan, inputs, 'test uniforms eager');
    const captured = polPlanStep(pol, uniformKernels(pol), plan, inputs, 'test uniforms replayed');
    try {
      set(7);
      captured.writeInputs();
      const graph = await capture(pol, captured.step);
      set(42);
      captured.writeInputsBatched(); // the batched uploads write what an upload each does
      graph.replay();
      eager.writeInputs();
      eager.step();
      const out = plan.slots[1] as { size: number };
      const polOut = await readBuffer(pol, eager.arrays[1]?.buffer as GPUBuffer, eager.arrays[1]?.offset ?? 0, out.size);
      const replayed = await readBuffer(pol, captured.arrays[1]?.buffer as GPUBuffer, captured.arrays[1]?.offset ?? 0, out.size);
      expect(new Float32Array(replayed.buffer)).toEqual(new Float32Array(polOut.buffer));
      for (const peer of [bufferPerStep(peers), pooled(peers), prebuilt(peers), prebuilt(peers, { batched: true })]) {
        peer.run();
        const got = await readBuffer(plain, peer.model[1] as GPUBuffer, 0, out.size);
        expect(new Float32Array(got.buffer)).toEqual(new Float32Array(polOut.buffer));
      }
      // And the uniforms matter: another step's values give another output.
      set(43);
      eager.writeInputs();
      eager.step();
      const other = await readBuffer(pol, eager.arrays[1]?.buffer as GPUBuffer, eager.arrays[1]?.offset ?? 0, out.size);
      expect(new Float32Array(other.buffer)).not.toEqual(new Float32Array(polOut.buffer));
      graph.dispose();
    } finally {
      for (const p of [eager, captured]) p.destroy();
    }
  });
});
