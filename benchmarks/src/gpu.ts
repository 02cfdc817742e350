/**
 * WebGPU: the CPU-side cost of one step of 8 compute dispatches over 16 scratch arrays, by the
 * means a user has: a new GPUBuffer per array and a new bind group per dispatch every step; a
 * size-keyed buffer pool with new bind groups (the TensorFlow.js WebGPU backend's approach); Pol's
 * arena with its bind-group cache; and a graph captured from that step, replayed.
 *
 * Runs on Dawn's Node.js bindings (the `webgpu` package). Without a GPU, Dawn runs on SwiftShader,
 * a CPU Vulkan driver: set VK_ICD_FILENAMES to its ICD file (done here when Debian's is present).
 * The GPU work is tiny (arrays of 64 to 256 floats, one to four workgroups of a one-line shader),
 * so that what is measured is the JavaScript and driver work of building and submitting a step.
 */
import type { Arena } from '@pol/arena';
import { alloc, scratchspace } from '@pol/core';
import { bindGroup, capture, deviceArena, type GpuArray, type Graph } from '@pol/webgpu';
import { create } from 'webgpu';
import { countGpuObjects, type GpuObjectCounter } from './gpu-count.js';
import { prepareGpuEnvironment } from './gpu-environment.js';
import { measureGpuSteps } from './gpu-timing.js';
import { type Comparison, compare, type Measurement, type RunOptions, type SuiteResult } from './model.js';

export const gpuSection = 'WebGPU step: 8 dispatches, 16 scratch arrays (CPU-side time, Dawn over SwiftShader)';

// WebGPU's flag values (the spec's; Pol does not rely on WebGPU's globals, nor does this file).
const STORAGE = 0x80;
const COPY_SRC = 0x04;
const COPY_DST = 0x08;
const COMPUTE = 0x4;
const usage = STORAGE | COPY_SRC | COPY_DST;

/** Scratch arrays per step, and their lengths in floats: pairs of 64, 128, 192, 256. */
export const ARRAYS = 16;
export const DISPATCHES = 8;
const lengths = Array.from({ length: ARRAYS }, (_, i) => 64 * (1 + ((i >> 1) % 4)));
const groups = Array.from({ length: DISPATCHES }, (_, d) => Math.ceil((lengths[2 * d] ?? 64) / 64));

const shader = /* wgsl */ `
@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
  let i = id.x;
  if (i < arrayLength(&y)) { y[i] = x[i] * 2.0 + 1.0; }
}
`;

// Dawn frees its instance when the object create() returned is garbage-collected, even with work in
// flight, and the process then crashes: keep it for the life of the process.
let instance: GPU | undefined;

/**
 * This process's Dawn instance (made on first use, kept for the life of the process): every
 * adapter of the benchmarks comes from it, TensorFlow.js's included (its `navigator.gpu`).
 */
export function gpuInstance(): GPU {
  prepareGpuEnvironment();
  instance ??= create([]);
  return instance;
}

/** A GPU adapter, or an error that says how to get one. */
export async function openAdapter(): Promise<GPUAdapter> {
  const adapter = await gpuInstance().requestAdapter();
  if (adapter === null) {
    throw new Error(
      `No WebGPU adapter (VK_ICD_FILENAMES=${process.env.VK_ICD_FILENAMES ?? '(unset)'}). The GPU benchmarks need a real WebGPU: ` +
        "install Debian's chromium and libvulkan1 packages (apt-get install -y chromium libvulkan1), which provide SwiftShader " +
        'at /usr/lib/chromium/vk_swiftshader_icd.json, or run on a machine with a GPU.',
    );
  }
  return adapter;
}

/** `vendor architecture (description)` of an adapter. */
export function adapterName(adapter: GPUAdapter): string {
  const info = (adapter as { info?: GPUAdapterInfo }).info;
  if (info === undefined) return 'WebGPU adapter';
  const parts = [info.vendor, info.architecture, info.description].filter((p) => p !== '');
  return `Dawn: ${parts.join(', ')}`;
}

interface Kernel {
  readonly device: GPUDevice;
  readonly pipeline: GPUComputePipeline;
  readonly layout: GPUBindGroupLayout;
}

function kernel(device: GPUDevice): Kernel {
  const layout = device.createBindGroupLayout({
    entries: [0, 1].map((binding) => ({ binding, visibility: COMPUTE, buffer: { type: 'storage' as const } })),
  });
  const pipeline = device.createComputePipeline({
    layout: device.createPipelineLayout({ bindGroupLayouts: [layout] }),
    compute: { module: device.createShaderModule({ code: shader }), entryPoint: 'main' },
  });
  return { device, pipeline, layout };
}

/** Encode and submit the 8 dispatches, each binding its pair of buffers through `group(d)`. */
function encode(k: Kernel, group: (d: number) => GPUBindGroup): void {
  const encoder = k.device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  pass.setPipeline(k.pipeline);
  for (let d = 0; d < DISPATCHES; d++) {
    pass.setBindGroup(0, group(d));
    pass.dispatchWorkgroups(groups[d] ?? 1);
  }
  pass.end();
  k.device.queue.submit([encoder.finish()]);
}

/** Dispatch d's bind group over buffers 2d and 2d + 1, created anew on every call (the peers' way). */
function freshGroups(k: Kernel, buffers: readonly GPUBuffer[]): (d: number) => GPUBindGroup {
  const { device, layout } = k;
  return (d) =>
    device.createBindGroup({
      layout,
      entries: [
        { binding: 0, resource: { buffer: buffers[2 * d] as GPUBuffer } },
        { binding: 1, resource: { buffer: buffers[2 * d + 1] as GPUBuffer } },
      ],
    });
}

/** A new GPUBuffer per array and a new bind group per dispatch, every step; buffers destroyed after submit. */
export function bufferPerStep(k: Kernel): () => void {
  const { device } = k;
  const buffers: GPUBuffer[] = new Array(ARRAYS);
  const group = freshGroups(k, buffers);
  return () => {
    for (let i = 0; i < ARRAYS; i++) buffers[i] = device.createBuffer({ size: (lengths[i] ?? 0) * 4, usage });
    encode(k, group);
    for (let i = 0; i < ARRAYS; i++) buffers[i]?.destroy();
  };
}

/**
 * A buffer pool keyed by size and usage, as TensorFlow.js's WebGPU backend keeps one: acquire pops a
 * free buffer of the key (or creates one), release pushes it back at the end of the step. Bind
 * groups are created per dispatch, every step.
 */
export function pooled(k: Kernel): () => void {
  const { device } = k;
  const free = new Map<string, GPUBuffer[]>();
  const acquire = (size: number): GPUBuffer => {
    const list = free.get(`${size}_${usage}`);
    return list?.pop() ?? device.createBuffer({ size, usage });
  };
  const release = (buffer: GPUBuffer): void => {
    const key = `${buffer.size}_${usage}`;
    let list = free.get(key);
    if (list === undefined) {
      list = [];
      free.set(key, list);
    }
    list.push(buffer);
  };
  const buffers: GPUBuffer[] = new Array(ARRAYS);
  const group = freshGroups(k, buffers);
  return () => {
    for (let i = 0; i < ARRAYS; i++) buffers[i] = acquire((lengths[i] ?? 0) * 4);
    encode(k, group);
    for (let i = 0; i < ARRAYS; i++) release(buffers[i] as GPUBuffer);
  };
}

/** The floor: the same 8 dispatches over 16 buffers made once, with bind groups made once (plain WebGPU). */
export function prebuilt(k: Kernel): () => void {
  const { device, layout } = k;
  const buffers = lengths.map((n) => device.createBuffer({ size: n * 4, usage }));
  const fixed = Array.from({ length: DISPATCHES }, (_, d) =>
    device.createBindGroup({
      layout,
      entries: [
        { binding: 0, resource: { buffer: buffers[2 * d] as GPUBuffer } },
        { binding: 1, resource: { buffer: buffers[2 * d + 1] as GPUBuffer } },
      ],
    }),
  );
  return () => encode(k, (d) => fixed[d] as GPUBindGroup);
}

/** Pol: the 16 arrays from a frame on a device arena, bind groups from the cache. */
export function arenaStep(k: Kernel, arena: Arena<'gpu'>): () => void {
  const { device, layout } = k;
  const arrays: GpuArray<'float32'>[] = new Array(ARRAYS);
  const group = (d: number): GPUBindGroup =>
    bindGroup(device, layout, [arrays[2 * d] as GpuArray<'float32'>, arrays[2 * d + 1] as GpuArray<'float32'>]);
  return () => {
    scratchspace(arena, (frame) => {
      for (let i = 0; i < ARRAYS; i++) arrays[i] = alloc(frame, 'float32', lengths[i] ?? 0);
      encode(k, group);
    });
  };
}

const labels: Readonly<Record<string, string>> = {
  'buffer-per-step': 'new GPUBuffer per array + new bind groups, every step',
  pool: 'size-keyed buffer pool + new bind groups (TensorFlow.js style)',
  prebuilt: 'buffers and bind groups made once: encode + submit only (floor)',
  arena: 'Pol device arena + bind-group cache',
  replay: 'Pol captured graph, replayed',
};

/** The GPU suite. */
export async function gpuSteps(run: RunOptions): Promise<SuiteResult & { readonly adapter: string; readonly section: string }> {
  // Two devices (an adapter makes one): the peers never meet Pol, whose first contact instruments the
  // device (its creation methods, createCommandEncoder, the queue's submit and writeBuffer) for the
  // metadata, checked-mode and capture hooks.
  const found = await openAdapter();
  const plainDevice = await found.requestDevice({ label: 'peers' });
  const polDevice = await (await openAdapter()).requestDevice({ label: 'pol' });
  // Buffers and bind groups created per step, counted from before Pol meets the device (gpu-count.ts).
  const counters = new Map([plainDevice, polDevice].map((d) => [d, countGpuObjects(d)] as const));
  const graphs: Graph[] = [];
  try {
    const plain = kernel(plainDevice);
    const pol = kernel(polDevice);
    const arena = deviceArena(polDevice, 64 * 1024, { label: 'step' });
    const eager = arenaStep(pol, arena);
    eager(); // warm: the cache holds the step's bind groups
    await polDevice.queue.onSubmittedWorkDone();
    const graph = await capture(polDevice, eager, { label: 'step' });
    graphs.push(graph);
    const steps: Record<string, { readonly step: () => void; readonly device: GPUDevice }> = {
      'buffer-per-step': { step: bufferPerStep(plain), device: plainDevice },
      pool: { step: pooled(plain), device: plainDevice },
      prebuilt: { step: prebuilt(plain), device: plainDevice },
      arena: { step: eager, device: polDevice },
      replay: { step: () => graph.replay(), device: polDevice },
    };
    const names = Object.keys(steps);
    run.log(gpuSection);
    // Rounds of 16 steps per variant, interleaved, the median round kept (gpu-timing.ts).
    const measurements = await measureGpuSteps(
      gpuSection,
      names.map((name) => {
        const { step, device } = steps[name] as { step: () => void; device: GPUDevice };
        const counter = counters.get(device) as GpuObjectCounter;
        return {
          id: `gpu.${name}`,
          label: labels[name] ?? name,
          pol: name === 'arena' || name === 'replay',
          device,
          counter,
          run: step,
        };
      }),
      run,
    );
    const by = (name: string): Measurement => {
      const m = measurements[names.indexOf(name)];
      if (m === undefined) throw new Error(`missing measurement ${name}`);
      return m;
    };
    // Targets against the floor: on this stack encoding and submitting is most of a step, so what Pol
    // can promise is to add next to nothing to it (see the README).
    const comparisons: Comparison[] = [
      compare(by('arena'), by('prebuilt'), { kind: 'ratio-at-most', value: 1.05, zeroGpuObjects: true }),
      compare(by('replay'), by('prebuilt'), { kind: 'ratio-at-most', value: 1, noExtraBytes: true, zeroGpuObjects: true }),
      compare(by('arena'), by('buffer-per-step')),
      compare(by('arena'), by('pool')),
      compare(by('replay'), by('arena')),
      // The floor against the peers: the most that any way of getting buffers and bind groups could save.
      compare(by('prebuilt'), by('buffer-per-step')),
      compare(by('prebuilt'), by('pool')),
    ];
    arena.slab.destroy();
    return { measurements, comparisons, adapter: adapterName(found), section: gpuSection };
  } finally {
    for (const g of graphs) g.dispose();
    await plainDevice.queue.onSubmittedWorkDone();
    await polDevice.queue.onSubmittedWorkDone();
    plainDevice.destroy();
    polDevice.destroy();
  }
}
