/**
 * Test support: a transformer block's forward pass as third-party WGSL writes it, every input
 * `var<storage, read>` and every output `read_write`, dims in a uniform. Weights, biases and the
 * dims live in a read-only slab; the activations are carved from whatever space the step is given.
 *
 *   h1 = layernorm(x); qkv = h1 · Wqkv; att = attention(qkv); o = att · Wo; r1 = x + o
 *   h2 = layernorm(r1); g = gelu(h2 · W1); f = g · W2; out = r1 + f
 *
 * Read against written, the second residual is a cycle of five carves (r1, h2, g, f, out): two
 * activation slabs cannot hold them, three can.
 */
import { alloc, type Space, scratchspace } from '@pol/core';
import { bindGroup, deviceArena, type GpuArray, upload } from '../index.js';
import { GPUBufferUsage } from './gpu.js';

export const T = 8; // tokens
export const D = 16; // width
export const H = 4 * D; // MLP width

const dims = 'struct Dims { rows: u32, inner: u32, cols: u32, eps: f32 }\n@group(0) @binding(0) var<uniform> dims: Dims;';
const read = (i: number, name: string) => `@group(0) @binding(${i}) var<storage, read> ${name}: array<f32>;`;
const write = (i: number, name: string) => `@group(0) @binding(${i}) var<storage, read_write> ${name}: array<f32>;`;
const matmulBody = (result: string) => `
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3u) {
  let i = id.x; if (i >= dims.rows * dims.cols) { return; }
  let r = i / dims.cols; let c = i % dims.cols; var acc = 0.0;
  for (var k = 0u; k < dims.inner; k++) { acc += x[r * dims.inner + k] * w[k * dims.cols + c]; }
  y[i] = ${result};
}`;

export const sources = {
  layernorm: `${dims}\n${read(1, 'x')}\n${read(2, 'gain')}\n${read(3, 'bias')}\n${write(4, 'y')}
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3u) {
  let r = id.x; if (r >= dims.rows) { return; }
  let n = dims.cols; var mean = 0.0;
  for (var j = 0u; j < n; j++) { mean += x[r * n + j]; }
  mean /= f32(n); var v = 0.0;
  for (var j = 0u; j < n; j++) { let d = x[r * n + j] - mean; v += d * d; }
  let s = inverseSqrt(v / f32(n) + dims.eps);
  for (var j = 0u; j < n; j++) { y[r * n + j] = (x[r * n + j] - mean) * s * gain[j] + bias[j]; }
}`,
  matmul: `${dims}\n${read(1, 'x')}\n${read(2, 'w')}\n${write(3, 'y')}${matmulBody('acc')}`,
  matmulGelu: `${dims}\n${read(1, 'x')}\n${read(2, 'w')}\n${write(3, 'y')}${matmulBody('0.5 * acc * (1.0 + tanh(0.7978846 * (acc + 0.044715 * acc * acc * acc)))')}`,
  attention: `${dims}\n${read(1, 'qkv')}\n${write(2, 'y')}
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3u) {
  let t = dims.rows; let d = dims.cols; let i = id.x; if (i >= t * d) { return; }
  let r = i / d; let c = i % d; let scale = inverseSqrt(f32(d));
  var top = -1e30;
  for (var s = 0u; s <= r; s++) {
    var dot = 0.0; for (var k = 0u; k < d; k++) { dot += qkv[r * 3u * d + k] * qkv[s * 3u * d + d + k]; }
    top = max(top, dot * scale);
  }
  var sum = 0.0; var acc = 0.0;
  for (var s = 0u; s <= r; s++) {
    var dot = 0.0; for (var k = 0u; k < d; k++) { dot += qkv[r * 3u * d + k] * qkv[s * 3u * d + d + k]; }
    let e = exp(dot * scale - top); sum += e; acc += e * qkv[s * 3u * d + 2u * d + c];
  }
  y[i] = acc / sum;
}`,
  add: `${dims}\n${read(1, 'a')}\n${read(2, 'b')}\n${write(3, 'y')}
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3u) {
  let i = id.x; if (i >= dims.rows * dims.cols) { return; }
  y[i] = a[i] + b[i];
}`,
} as const;

export type KernelName = keyof typeof sources;

/** The kernels, compiled with `'auto'` layouts (call after the device met Pol: `instrument(device)`). */
export type Kernels = Readonly<Record<KernelName, GPUComputePipeline>>;

export function compile(device: GPUDevice): Kernels {
  const out = {} as Record<KernelName, GPUComputePipeline>;
  for (const name of Object.keys(sources) as KernelName[]) {
    out[name] = device.createComputePipeline({
      label: name,
      layout: 'auto',
      compute: { module: device.createShaderModule({ code: sources[name] }), entryPoint: 'main' },
    });
  }
  return out;
}

type F = GpuArray<'float32'>;

/** The block's weights and dims, in a read-only slab. */
export interface Weights {
  readonly arena: ReturnType<typeof deviceArena>;
  readonly g1: F;
  readonly b1: F;
  readonly g2: F;
  readonly b2: F;
  readonly wqkv: F;
  readonly wo: F;
  readonly w1: F;
  readonly w2: F;
  readonly dims: Readonly<Record<'ln' | 'qkv' | 'att' | 'o' | 'w1' | 'w2' | 'add', GpuArray<'uint32'>>>;
}

export function weights(device: GPUDevice): Weights {
  const arena = deviceArena(device, 1 << 16, { label: 'block weights', readOnly: true, usage: GPUBufferUsage.UNIFORM });
  let seed = 7;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return (seed / 2 ** 31 - 0.5) * 0.5;
  };
  const matrix = (rows: number, cols: number) => {
    const a = alloc(arena, 'float32', [rows, cols]);
    upload(a, Float32Array.from({ length: rows * cols }, random));
    return a;
  };
  const vector = (n: number, value: number) => {
    const a = alloc(arena, 'float32', [n]);
    upload(a, new Float32Array(n).fill(value));
    return a;
  };
  const shape = (rows: number, inner: number, cols: number) => {
    const a = alloc(arena, 'uint32', [4]);
    const d = Uint32Array.of(rows, inner, cols, 0);
    new Float32Array(d.buffer)[3] = 1e-5;
    upload(a, d);
    return a;
  };
  return {
    arena,
    g1: vector(D, 1),
    b1: vector(D, 0),
    g2: vector(D, 1.5),
    b2: vector(D, 0.1),
    wqkv: matrix(D, 3 * D),
    wo: matrix(D, D),
    w1: matrix(D, H),
    w2: matrix(H, D),
    dims: {
      ln: shape(T, 0, D),
      qkv: shape(T, D, 3 * D),
      att: shape(T, 0, D),
      o: shape(T, D, D),
      w1: shape(T, D, H),
      w2: shape(T, H, D),
      add: shape(T, 0, D),
    },
  };
}

/** The input and the output, carved from `space` (in this order), and the step over them. */
export function block(device: GPUDevice, k: Kernels, p: Weights, space: Space<'gpu'>) {
  const x = alloc(space, 'float32', [T, D]);
  const out = alloc(space, 'float32', [T, D]);
  const step = () =>
    scratchspace(space, (f) => {
      const encoder = device.createCommandEncoder();
      const pass = encoder.beginComputePass();
      const run = (name: KernelName, arrays: readonly GPUBufferBinding[], threads: number) => {
        pass.setPipeline(k[name]);
        pass.setBindGroup(0, bindGroup(device, k[name].getBindGroupLayout(0), arrays));
        pass.dispatchWorkgroups(Math.ceil(threads / 64));
      };
      const a = (rows: number, cols: number) => alloc(f, 'float32', [rows, cols]);
      const h1 = a(T, D);
      run('layernorm', [p.dims.ln, x, p.g1, p.b1, h1], T);
      const qkv = a(T, 3 * D);
      run('matmul', [p.dims.qkv, h1, p.wqkv, qkv], T * 3 * D);
      const att = a(T, D);
      run('attention', [p.dims.att, qkv, att], T * D);
      const o = a(T, D);
      run('matmul', [p.dims.o, att, p.wo, o], T * D);
      const r1 = a(T, D);
      run('add', [p.dims.add, x, o, r1], T * D);
      const h2 = a(T, D);
      run('layernorm', [p.dims.ln, r1, p.g2, p.b2, h2], T);
      const g = a(T, H);
      run('matmulGelu', [p.dims.w1, h2, p.w1, g], T * H);
      const ff = a(T, D);
      run('matmul', [p.dims.w2, g, p.w2, ff], T * D);
      run('add', [p.dims.add, r1, ff, out], T * D);
      pass.end();
      device.queue.submit([encoder.finish()]);
    });
  return { x, out, step };
}

/** The block's input: a fixed pattern, scaled by `scale`. */
export function input(scale = 1): Float32Array {
  return Float32Array.from({ length: T * D }, (_, i) => Math.sin(i * 0.3) * scale);
}
