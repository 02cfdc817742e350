import { Similar } from '@pol/core';
import { walkShadows } from '@pol/verbs';
import { train } from '@pol/verbs/examples';
import { UsageConflictError, upload } from '@pol/webgpu';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { requestDevice } from './device.js';
import { type G, GpuKernels, type GpuMlp, trainOnGpu } from './mlp-gpu.js';

// A missing adapter fails every test here, never skips one: CI must not pass without running them.
let device: GPUDevice | undefined;
let missing = '';
let release = () => {};
beforeAll(async () => {
  const got = await requestDevice();
  if (got.device === undefined) missing = got.reason;
  else ({ device, release } = got);
});
function gpu(): GPUDevice {
  if (device === undefined) throw new Error(`The WebGPU example needs a WebGPU adapter: ${missing}.`);
  return device;
}
afterAll(() => release());

/** Count calls of some device methods from now on; `stop` returns the counts and unwraps. */
function counting(
  target: GPUDevice,
  names: readonly ('createBuffer' | 'createBindGroup' | 'createComputePipeline' | 'createShaderModule')[],
) {
  const counts: Record<string, number> = {};
  const originals = names.map((name) => [name, Object.getOwnPropertyDescriptor(target, name)] as const);
  for (const name of names) {
    counts[name] = 0;
    const original = target[name] as (...args: unknown[]) => unknown;
    Object.defineProperty(target, name, {
      configurable: true,
      writable: true,
      value(this: unknown, ...args: unknown[]) {
        counts[name] = (counts[name] ?? 0) + 1;
        return original.apply(this, args);
      },
    });
  }
  return () => {
    for (const [name, own] of originals) {
      if (own !== undefined) Object.defineProperty(target, name, own);
      else delete (target as unknown as Record<string, unknown>)[name];
    }
    return counts;
  };
}

test('the perceptron trains on the GPU: the loss falls, step for step as on the CPU', async () => {
  const { losses, warmupLoss } = await trainOnGpu(gpu(), { steps: 200 });
  expect(losses).toHaveLength(200);
  const cpu = train(Similar(new Float32Array(0)), { steps: 200, seed: 1, hidden: 16, lr: 0.1 });
  expect(warmupLoss).toBeCloseTo(cpu[0] ?? Number.NaN, 4);
  losses.forEach((loss, i) => {
    expect(Math.abs(loss - (cpu[i] ?? Number.NaN))).toBeLessThan(1e-3);
  });
  expect(losses.at(-1)).toBeLessThan((losses[0] ?? 0) / 5);
});

test('the slab is exactly the warm-up watermark, and the step fills it to the byte', async () => {
  const { arena, watermark } = await trainOnGpu(gpu(), { steps: 3 });
  expect(arena.capacity).toBe(Math.ceil(watermark / 4) * 4);
  expect(arena.watermark).toBe(watermark);
  expect(arena.describe().residency).toBe('device');
});

test('step 1 is captured, and the replays run no JavaScript of the step: no bind group, pipeline or buffer', async () => {
  let stop: (() => Record<string, number>) | undefined;
  const { stats } = await trainOnGpu(gpu(), {
    steps: 20,
    onStep: (step) => {
      if (step === 1) stop = counting(gpu(), ['createBuffer', 'createBindGroup', 'createComputePipeline', 'createShaderModule']);
    },
  });
  const counts = stop?.() ?? {};
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
 * A device no other test touched, as `requestDevice` hands it out: the checks must not depend on
 * an earlier test having met the shared device before anything was compiled on it.
 */
async function freshDevice(): Promise<GPUDevice> {
  const got = await requestDevice();
  if (got.device === undefined) throw new Error(`The WebGPU example needs a WebGPU adapter: ${got.reason}.`);
  return got.device;
}

/**
 * Train on `device` in checked mode with a mistake planted in the step: every SGD update binds its
 * parameter as its own gradient, two writable bindings of the same bytes. Returns what the
 * kernel's dispatch threw (synchronously, before the device saw it), how the run ended, and the
 * validation error the device reported, if any.
 */
async function trainWithPlantedConflict(
  device: GPUDevice,
): Promise<{ thrown: unknown[]; outcome: unknown; validation: GPUError | null }> {
  const dispatch = GpuKernels.prototype.dispatch;
  const thrown: unknown[] = [];
  GpuKernels.prototype.dispatch = function (this: GpuKernels, ...[kernel, arrays, threads]: Parameters<typeof dispatch>) {
    try {
      dispatch.call(this, kernel, kernel === 'sgd' ? { p: arrays.p as G, g: arrays.p as G } : arrays, threads);
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
  const device = await freshDevice();
  try {
    const { thrown, outcome, validation } = await trainWithPlantedConflict(device);
    // The warm-up step's first SGD dispatch throws, and the run stops there.
    expect(thrown).toHaveLength(1);
    expect(thrown[0]).toBeInstanceOf(UsageConflictError);
    expect(String(thrown[0])).toMatch(/overlapping writable ranges/);
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
  const device = await freshDevice();
  try {
    expect((await trainWithPlantedConflict(device)).thrown[0]).toBeInstanceOf(UsageConflictError);
    const checked = await trainOnGpu(device, { steps: 5, checked: true });
    const unchecked = await trainOnGpu(gpu(), { steps: 5 });
    expect(checked.losses).toEqual(unchecked.losses);
  } finally {
    device.destroy();
  }
});

test('the trace records each dispatch with the ranges it bound and the frames open at the time', async () => {
  const { trace, watermark } = await trainOnGpu(gpu(), { steps: 1, trace: true });
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
  for (const d of trace?.captured ?? []) {
    for (const b of d.bindings) expect(b.offset + b.size).toBeLessThanOrEqual(watermark);
    // Every kernel runs inside the step's frame and its own.
    expect(d.frameMarks.length).toBeGreaterThanOrEqual(d.kernel === 'sgd' ? 1 : 2);
  }
});
