// The perceptron of @pol/webgpu/examples on a real WebGPU (Dawn; SwiftShader without a GPU):
// it trains step for step as the CPU perceptron of @pol/verbs/examples does, on slabs of exactly
// its watermarks, and its captured step replays without running the step's JavaScript.
import { Similar, scratchspace } from '@pol/core';
import { Shadows, walkShadows } from '@pol/verbs';
import { blobs, initMlp, type Mlp, seededRandom, train, trainStep } from '@pol/verbs/examples';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { deviceArena, download, instrument, UsageConflictError, upload } from '../index.js';
import { countCalls, requestDevice } from '../test-support/gpu.js';
import {
  type GpuF32,
  GpuKernels,
  type GpuMlp,
  type GpuModel,
  placeModel,
  trainOnGpu,
  trainStep as trainStepOnGpu,
} from './index.js';

/**
 * A device handed to Pol before anything is compiled on it, as the templates' `device.ts` hands
 * theirs: checked mode then knows every layout and pipeline the kernels make.
 */
async function freshDevice(label: string): Promise<GPUDevice> {
  return instrument(await requestDevice(label));
}

let device: GPUDevice | undefined;
beforeAll(async () => {
  device = await freshDevice('perceptron');
});
afterAll(() => device?.destroy());
function gpu(): GPUDevice {
  if (device === undefined) throw new Error('beforeAll has not run');
  return device;
}

/** The CPU run `train` makes (same data, initial weights and steps), keeping its trained parameters. */
function trainOnHost(steps: number): { losses: number[]; params: Mlp } {
  const space = Similar(new Float32Array(0));
  const random = seededRandom(1);
  const { x, labels } = blobs(space, random, 30, 3);
  const params = initMlp(space, random, 2, 16, 3);
  const grads = Shadows(space, params);
  const losses: number[] = [];
  for (let step = 0; step < steps; step++) {
    const loss = scratchspace(space, (frame) => trainStep(frame, params, grads, x, labels, { lr: 0.1 }).loss);
    losses.push(loss.data[0] ?? Number.NaN);
  }
  return { losses, params };
}

/** The largest difference between `a` and `b`, relative to the largest magnitude in `b`. */
function relativeError(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let diff = 0;
  let scale = 0;
  for (let i = 0; i < b.length; i++) {
    diff = Math.max(diff, Math.abs((a[i] ?? Number.NaN) - (b[i] ?? Number.NaN)));
    scale = Math.max(scale, Math.abs(b[i] ?? Number.NaN));
  }
  return diff / scale;
}

test('the perceptron trains on the GPU: the loss falls, step for step as on the CPU, to the same parameters', async () => {
  const steps = 200;
  let model: GpuModel | undefined;
  const trained = new Map<string, Float32Array>();
  const { losses, warmupLoss } = await trainOnGpu(gpu(), {
    steps,
    onCaptured: (run) => {
      model = run.model;
    },
    onStep: async (step) => {
      if (step !== steps || model === undefined) return;
      const arrays: [string, GpuF32][] = [];
      walkShadows(model.params, model.params, (p, _, path) => arrays.push([path, p]));
      for (const [path, p] of arrays) trained.set(path, (await download(p)).data);
    },
  });
  expect(losses).toHaveLength(steps);
  const cpu = trainOnHost(steps);
  expect(cpu.losses).toEqual(train(Similar(new Float32Array(0)), { steps, seed: 1, hidden: 16, lr: 0.1 }));
  expect(warmupLoss).toBeCloseTo(cpu.losses[0] ?? Number.NaN, 4);
  const lossErrors = losses.map(
    (loss, i) => Math.abs(loss - (cpu.losses[i] ?? Number.NaN)) / Math.abs(cpu.losses[i] ?? Number.NaN),
  );
  const paramErrors = new Map<string, number>();
  walkShadows(cpu.params, cpu.params, (p, _, path) => {
    paramErrors.set(path, relativeError(trained.get(path) ?? [], p.data));
  });
  expect([...paramErrors.keys()].sort()).toEqual([...trained.keys()].sort());
  expect(paramErrors.size).toBe(4);
  // Measured on Dawn over SwiftShader, the same in every run: the largest loss error relative to
  // the CPU's loss is 5.7e-7, and the largest parameter error relative to its tensor's largest
  // magnitude 3.2e-7, a few float32 ulps after 200 steps (the WGSL kernels sum in the same order
  // as the CPU ones; exp and log differ in their last bits). The bounds are about 3× that.
  for (const [i, e] of lossErrors.entries()) expect(e, `the loss of step ${i + 1}`).toBeLessThan(2e-6);
  for (const [path, e] of paramErrors) expect(e, `the trained ${path}`).toBeLessThan(1e-6);
  expect(losses.at(-1)).toBeLessThan((losses[0] ?? 0) / 5);
});

test('each slab is exactly its warm-up watermark, and the step fills it to the byte', async () => {
  let model: GpuModel | undefined;
  const { arena, watermark, params, paramsBytes } = await trainOnGpu(gpu(), {
    steps: 3,
    onCaptured: (run) => {
      model = run.model;
    },
  });
  expect(arena.capacity).toBe(Math.ceil(watermark / 4) * 4);
  expect(arena.watermark).toBe(watermark);
  expect(arena.describe().residency).toBe('device');
  expect(params.capacity).toBe(Math.ceil(paramsBytes / 4) * 4);
  expect(params.watermark).toBe(paramsBytes);
  // The parameters, and nothing else, on their own buffer; data, gradients and loss on the step's.
  const m = model as GpuModel;
  walkShadows(m.params, m.grads, (p, g) => {
    expect(p.buffer).toBe(params.slab.buffer);
    expect(g.buffer).toBe(arena.slab.buffer);
  });
  for (const a of [m.x, m.labels, m.loss]) expect(a.buffer).toBe(arena.slab.buffer);
  expect(params.slab.buffer).not.toBe(arena.slab.buffer);
});

test('step 1 is captured, and the replays run no JavaScript of the step: no bind group, pipeline or buffer', async () => {
  let counting: ReturnType<typeof countCalls> | undefined;
  const { stats } = await trainOnGpu(gpu(), {
    steps: 20,
    onStep: (step) => {
      if (step === 1)
        counting = countCalls(gpu(), ['createBuffer', 'createBindGroup', 'createComputePipeline', 'createShaderModule']);
    },
  });
  counting?.restore();
  const counts: Partial<Record<string, number>> = counting?.counts ?? {};
  // The four gradients' clears (their Shadows are zeroed on the device) are submits of their own.
  expect(stats).toEqual({ submits: 5, passes: 1, dispatches: 13, copies: 4 });
  expect(counts.createBindGroup).toBe(0);
  expect(counts.createComputePipeline).toBe(0);
  expect(counts.createShaderModule).toBe(0);
  // Reading the loss back is the only buffer made per step: download's staging buffer.
  expect(counts.createBuffer).toBe(19);
});

test('every replay zeroes the gradients before its backward pass: junk written into them between steps changes nothing', async () => {
  const clean = await trainOnGpu(gpu(), { steps: 20 });
  let grads: GpuMlp | undefined;
  const junked = await trainOnGpu(gpu(), {
    steps: 20,
    onCaptured: (run) => {
      grads = run.model.grads;
    },
    onStep: () => {
      // The backward kernels add into the gradients: only the clears the graph replays keep this
      // junk out of the next step.
      if (grads === undefined) throw new Error('not captured yet');
      walkShadows(grads, grads, (g) => upload(g, new Float32Array(g.length).fill(1e6)));
    },
  });
  expect(junked.losses).toEqual(clean.losses);
});

/**
 * Train on `device` in checked mode with a mistake planted in the step: every SGD update binds its
 * parameter as its own gradient, so the parameters' buffer is bound writable (`p`) and read-only
 * (`g`) in one dispatch. Returns what the
 * kernel's dispatch threw (synchronously, before the device saw it), how the run ended, and the
 * validation error the device reported, if any.
 */
async function trainWithPlantedConflict(
  device: GPUDevice,
): Promise<{ thrown: unknown[]; outcome: unknown; validation: GPUError | null }> {
  const dispatch = GpuKernels.prototype.dispatch;
  const thrown: unknown[] = [];
  GpuKernels.prototype.dispatch = function (this: GpuKernels, ...[kernel, threads, ...arrays]: Parameters<typeof dispatch>) {
    try {
      const [p] = arrays;
      if (kernel === 'sgd' && p !== undefined) dispatch.call(this, kernel, threads, p, p);
      else dispatch.call(this, kernel, threads, ...arrays);
    } catch (error) {
      thrown.push(error);
      throw error;
    }
  };
  device.pushErrorScope('validation');
  let outcome: unknown;
  try {
    outcome = await trainOnGpu(device, { steps: 2, checked: true }).then(
      () => 'trained',
      (error: unknown) => error,
    );
  } finally {
    GpuKernels.prototype.dispatch = dispatch;
  }
  return { thrown, outcome, validation: await device.popErrorScope() };
}

test('on a fresh device, a checked run refuses a planted usage conflict synchronously, before the device sees it', async () => {
  const device = await freshDevice('fresh');
  try {
    const { thrown, outcome, validation } = await trainWithPlantedConflict(device);
    // The warm-up step's first SGD dispatch throws, and the run stops there.
    expect(thrown).toHaveLength(1);
    expect(thrown[0]).toBeInstanceOf(UsageConflictError);
    expect(String(thrown[0])).toMatch(/both as writable storage and read-only/);
    expect(outcome).toBe(thrown[0]);
    // Refused in JavaScript: nothing invalid reached the device.
    expect(validation).toBeNull();
  } finally {
    device.destroy();
  }
});

test('in checked mode no dispatch binds a range twice or mixes usages, and the result is the same', async () => {
  // On a device of its own, on which the checks are first shown live for kernels compiled before
  // anything else (as trainOnGpu compiles them): passing here is not the checks having been off.
  const device = await freshDevice('fresh');
  try {
    expect((await trainWithPlantedConflict(device)).thrown[0]).toBeInstanceOf(UsageConflictError);
    const checked = await trainOnGpu(device, { steps: 5, checked: true });
    const unchecked = await trainOnGpu(gpu(), { steps: 5 });
    expect(checked.losses).toEqual(unchecked.losses);
  } finally {
    device.destroy();
  }
});

test("on one arena for everything, the layers' read-only weights are refused in checked mode, naming a slab of their own as the fix", async () => {
  const device = await freshDevice('fresh');
  try {
    const kernels = new GpuKernels(device, { lr: 0.1 });
    const arena = deviceArena(device, 1 << 20, { label: 'everything', checked: true });
    const m = placeModel({ params: arena, arena }, { seed: 1, hidden: 16 });
    const before = arena.describe();
    device.pushErrorScope('validation');
    let thrown: unknown;
    try {
      trainStepOnGpu(arena, kernels, m.params, m.grads, m.x, m.labels, { loss: m.loss });
    } catch (error) {
      thrown = error;
    }
    // The first dispatch, linear, binds x and y writable and w, b read-only, all of one buffer.
    expect(thrown).toBeInstanceOf(UsageConflictError);
    expect(String(thrown)).toMatch(/both as writable storage and read-only/);
    expect(String(thrown)).toMatch(/weights in another slab/);
    expect(await device.popErrorScope()).toBeNull();
    // The step's frame closed: the arena's offset and frames are as they were.
    const after = arena.describe();
    expect([after.offset, after.frameMarks]).toEqual([before.offset, before.frameMarks]);
  } finally {
    device.destroy();
  }
});

test('the trace records each dispatch with the ranges it bound and the frames open at the time', async () => {
  const { trace, watermark, paramsBytes } = await trainOnGpu(gpu(), { steps: 1, trace: true });
  expect(trace?.captured.map((d) => d.kernel)).toEqual([
    'linear',
    'relu',
    'linear',
    'softmaxCrossEntropy',
    'mean',
    'softmaxCrossEntropyBackward',
    'linearBackward',
    'reluBackward',
    'linearBackward',
    'sgd',
    'sgd',
    'sgd',
    'sgd',
  ]);
  // Warm-up and capture carve the same ranges: the same allocation sequence.
  expect(trace?.captured).toEqual(trace?.warmup);
  // What each kernel binds on the parameters' buffer: the layers' weights and biases (read), SGD's
  // parameter (written); nothing else.
  expect(trace?.captured.map((d) => d.bindings.filter((b) => b.on === 'params').map((b) => b.name))).toEqual([
    ['w', 'b'],
    [],
    ['w', 'b'],
    [],
    [],
    [],
    ['w'],
    [],
    ['w'],
    ['p'],
    ['p'],
    ['p'],
    ['p'],
  ]);
  for (const d of trace?.captured ?? []) {
    for (const b of d.bindings) expect(b.offset + b.size).toBeLessThanOrEqual(b.on === 'params' ? paramsBytes : watermark);
    // Every kernel runs inside the step's frame and its own.
    expect(d.frameMarks.length).toBeGreaterThanOrEqual(d.kernel === 'sgd' ? 1 : 2);
  }
});
