/**
 * Test support: a small real model, y = softmax(x·W + b), as two WGSL compute kernels, with a CPU
 * reference. Activations (x, the logits z, y) live in one arena and are all bound as
 * `storage` (read_write); the weights (W, b) live in another slab and are bound read-only.
 */
import type { Arena } from '@pol/arena';
import { alloc, type Frame, scratchspace } from '@pol/core';
import { bindGroup, type GpuArray } from '../index.js';
import { GPUShaderStage } from './gpu.js';

export interface Sizes {
  readonly n: number; // rows (batch)
  readonly k: number; // inputs
  readonly m: number; // outputs
}

export interface Model {
  readonly device: GPUDevice;
  readonly sizes: Sizes;
  readonly linear: GPUComputePipeline;
  readonly softmax: GPUComputePipeline;
  readonly activationsLayout: GPUBindGroupLayout;
  readonly weightsLayout: GPUBindGroupLayout;
  readonly softmaxLayout: GPUBindGroupLayout;
}

const linearWgsl = ({ n, k, m }: Sizes) => /* wgsl */ `
@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> z: array<f32>;
@group(1) @binding(0) var<storage, read> w: array<f32>;
@group(1) @binding(1) var<storage, read> b: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  let i = id.x;
  if (i >= ${n * m}u) { return; }
  let r = i / ${m}u;
  let c = i % ${m}u;
  var acc = b[c];
  for (var j = 0u; j < ${k}u; j++) {
    acc += x[r * ${k}u + j] * w[j * ${m}u + c];
  }
  z[i] = acc;
}
`;

const softmaxWgsl = ({ n, m }: Sizes) => /* wgsl */ `
@group(0) @binding(0) var<storage, read_write> z: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  let r = id.x;
  if (r >= ${n}u) { return; }
  var top = z[r * ${m}u];
  for (var c = 1u; c < ${m}u; c++) { top = max(top, z[r * ${m}u + c]); }
  var sum = 0.0;
  for (var c = 0u; c < ${m}u; c++) { sum += exp(z[r * ${m}u + c] - top); }
  for (var c = 0u; c < ${m}u; c++) { y[r * ${m}u + c] = exp(z[r * ${m}u + c] - top) / sum; }
}
`;

function layout(device: GPUDevice, types: readonly GPUBufferBindingType[]): GPUBindGroupLayout {
  return device.createBindGroupLayout({
    entries: types.map((type, binding) => ({ binding, visibility: GPUShaderStage.COMPUTE, buffer: { type } })),
  });
}

/** Compile the model's pipelines (the warm part of a warm-up). */
export function makeModel(device: GPUDevice, sizes: Sizes): Model {
  const activationsLayout = layout(device, ['storage', 'storage']);
  const weightsLayout = layout(device, ['read-only-storage', 'read-only-storage']);
  const softmaxLayout = layout(device, ['storage', 'storage']);
  const linear = device.createComputePipeline({
    layout: device.createPipelineLayout({ bindGroupLayouts: [activationsLayout, weightsLayout] }),
    compute: { module: device.createShaderModule({ code: linearWgsl(sizes) }), entryPoint: 'main' },
  });
  const softmax = device.createComputePipeline({
    layout: device.createPipelineLayout({ bindGroupLayouts: [softmaxLayout] }),
    compute: { module: device.createShaderModule({ code: softmaxWgsl(sizes) }), entryPoint: 'main' },
  });
  return { device, sizes, linear, softmax, activationsLayout, weightsLayout, softmaxLayout };
}

export interface Weights {
  readonly w: GpuArray<'float32'>;
  readonly b: GpuArray<'float32'>;
}

/**
 * One step: y = softmax(x·W + b), with the logits z as scratch in a frame on `arena`. Encodes
 * one pass with two dispatches and submits it.
 */
export function forward(
  model: Model,
  arena: Arena<'gpu'> | Frame<'gpu'>,
  x: GpuArray<'float32'>,
  weights: Weights,
  y: GpuArray<'float32'>,
): void {
  const { device, sizes } = model;
  scratchspace(arena, (frame) => {
    const z = alloc(frame, 'float32', [sizes.n, sizes.m]);
    const encoder = device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    pass.setPipeline(model.linear);
    pass.setBindGroup(0, bindGroup(device, model.activationsLayout, [x, z]));
    pass.setBindGroup(1, bindGroup(device, model.weightsLayout, [weights.w, weights.b]));
    pass.dispatchWorkgroups(Math.ceil((sizes.n * sizes.m) / 64));
    pass.setPipeline(model.softmax);
    pass.setBindGroup(0, bindGroup(device, model.softmaxLayout, [z, y]));
    pass.dispatchWorkgroups(Math.ceil(sizes.n / 64));
    pass.end();
    device.queue.submit([encoder.finish()]);
  });
}

/** The CPU reference, in float64. */
export function reference(sizes: Sizes, x: Float32Array, w: Float32Array, b: Float32Array): Float64Array {
  const { n, k, m } = sizes;
  const y = new Float64Array(n * m);
  for (let r = 0; r < n; r++) {
    const z = new Float64Array(m);
    for (let c = 0; c < m; c++) {
      let acc = b[c] ?? 0;
      for (let j = 0; j < k; j++) acc += (x[r * k + j] ?? 0) * (w[j * m + c] ?? 0);
      z[c] = acc;
    }
    const top = Math.max(...z);
    let sum = 0;
    for (let c = 0; c < m; c++) sum += Math.exp((z[c] ?? 0) - top);
    for (let c = 0; c < m; c++) y[r * m + c] = Math.exp((z[c] ?? 0) - top) / sum;
  }
  return y;
}

/** Deterministic pseudo-random values in [-1, 1). */
export function values(count: number, seed: number): Float32Array {
  const out = new Float32Array(count);
  let s = seed >>> 0 || 1;
  for (let i = 0; i < count; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    out[i] = ((s >>> 0) / 2 ** 32) * 2 - 1;
  }
  return out;
}

/** The largest absolute difference between two arrays of equal length. */
export function maxDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let d = 0;
  for (let i = 0; i < a.length; i++) d = Math.max(d, Math.abs((a[i] ?? 0) - (b[i] ?? 0)));
  return d;
}
