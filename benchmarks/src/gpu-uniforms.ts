/**
 * A uniform-heavy step, shaped like a real layer stack: 3 layers of 4 kernels (an affine map, a
 * GELU, a residual add, a clamp), 12 dispatches over float32 activations of 1,024 elements, each
 * dispatch with a uniform of its own that the host rewrites before every step (what a diffusion
 * model's timestep, a schedule's rate or a dropout seed looks like to the GPU). The uniforms are
 * tiny, so what is measured is the cost of getting them there: a `writeBuffer` each, or one for
 * all of them.
 *
 * The step is a plan (`StepPlan`) that the peers run in plain WebGPU and that Pol runs on arenas:
 * the activations carved from a device arena per step (in a frame), the uniforms from a uniform
 * arena once, bind groups from Pol's cache.
 */
import type { PlainKernel, PlannedDispatch, Slot, StepPlan } from './gpu-plan.js';

/** Elements per activation array, layers, and the size of each dispatch's uniform (one vec4<f32>). */
export const N = 1024;
export const LAYERS = 3;
const UNIFORM_BYTES = 16;
const WORKGROUP = 64;

const uniform = /* wgsl */ `struct Params { a: f32, b: f32, c: f32, d: f32 }
@group(0) @binding(0) var<uniform> u: Params;`;
const io = (names: readonly string[]) =>
  names.map((n, i) => `@group(0) @binding(${i + 1}) var<storage, read_write> ${n}: array<f32>;`).join('\n');

/** The four kernels: y = f(x; u). Every one writes its last binding. */
export const uniformKernelSources: Readonly<Record<string, string>> = {
  affine: /* wgsl */ `${uniform}
${io(['x', 'y'])}
@compute @workgroup_size(${WORKGROUP}) fn main(@builtin(global_invocation_id) id: vec3u) {
  let i = id.x; if (i >= arrayLength(&y)) { return; }
  y[i] = x[i] * u.a + u.b;
}`,
  gelu: /* wgsl */ `${uniform}
${io(['x', 'y'])}
@compute @workgroup_size(${WORKGROUP}) fn main(@builtin(global_invocation_id) id: vec3u) {
  let i = id.x; if (i >= arrayLength(&y)) { return; }
  let v = x[i] * u.a;
  y[i] = 0.5 * v * (1.0 + tanh(0.7978845608 * (v + 0.044715 * v * v * v)));
}`,
  residual: /* wgsl */ `${uniform}
${io(['x', 'r', 'y'])}
@compute @workgroup_size(${WORKGROUP}) fn main(@builtin(global_invocation_id) id: vec3u) {
  let i = id.x; if (i >= arrayLength(&y)) { return; }
  y[i] = x[i] + u.a * r[i];
}`,
  clamp: /* wgsl */ `${uniform}
${io(['x', 'y'])}
@compute @workgroup_size(${WORKGROUP}) fn main(@builtin(global_invocation_id) id: vec3u) {
  let i = id.x; if (i >= arrayLength(&y)) { return; }
  y[i] = clamp(x[i], -u.a, u.a);
}`,
};

const COMPUTE = 0x4;

/** Compile the four kernels on `device`, with explicit layouts: a uniform at binding 0, storage after. */
export function uniformKernels(device: GPUDevice): Map<string, PlainKernel> {
  const kernels = new Map<string, PlainKernel>();
  for (const [name, code] of Object.entries(uniformKernelSources)) {
    const storage = (code.match(/var<storage/g) ?? []).length;
    const layout = device.createBindGroupLayout({
      label: name,
      entries: [
        { binding: 0, visibility: COMPUTE, buffer: { type: 'uniform' } },
        ...Array.from({ length: storage }, (_, i) => ({
          binding: i + 1,
          visibility: COMPUTE,
          buffer: { type: 'storage' as const },
        })),
      ],
    });
    const pipeline = device.createComputePipeline({
      label: name,
      layout: device.createPipelineLayout({ bindGroupLayouts: [layout] }),
      compute: { module: device.createShaderModule({ label: name, code }), entryPoint: 'main' },
    });
    kernels.set(name, { pipeline, layout });
  }
  return kernels;
}

/**
 * The plan: slot 0 is the input `x` (model), slot 1 the output (model), then 12 uniforms (inputs),
 * then 4 activations per layer (step). Layer l: a = affine(h), b = gelu(a), c = h + β·b,
 * h' = clamp(c), the last layer's clamp writing the output.
 */
export function uniformPlan(): StepPlan {
  const bytes = N * 4;
  const initial = new Float32Array(N);
  for (let i = 0; i < N; i++) initial[i] = Math.sin(i * 0.37) * 2;
  const slots: Slot[] = [
    { size: bytes, life: 'model', uniform: false, initial: new Uint8Array(initial.buffer) },
    { size: bytes, life: 'model', uniform: false },
  ];
  const uniformSlot = () => slots.push({ size: UNIFORM_BYTES, life: 'input', uniform: true }) - 1;
  const stepSlot = () => slots.push({ size: bytes, life: 'step', uniform: false }) - 1;
  const uniforms = Array.from({ length: LAYERS * 4 }, uniformSlot);
  const dispatches: PlannedDispatch[] = [];
  const workgroups = Math.ceil(N / WORKGROUP);
  let h = 0;
  for (let l = 0; l < LAYERS; l++) {
    const [a, b, c] = [stepSlot(), stepSlot(), stepSlot()];
    const out = l === LAYERS - 1 ? 1 : stepSlot();
    const u = (k: number) => uniforms[l * 4 + k] as number;
    dispatches.push(
      { kernel: 'affine', slots: [u(0), h, a], workgroups },
      { kernel: 'gelu', slots: [u(1), a, b], workgroups },
      { kernel: 'residual', slots: [u(2), h, b, c], workgroups },
      { kernel: 'clamp', slots: [u(3), c, out], workgroups },
    );
    h = out;
  }
  return { slots, dispatches };
}

/** The host data of every uniform, by slot, and a function that writes step t's values into it. */
export function uniformInputs(plan: StepPlan): { inputs: Map<number, Float32Array>; set: (t: number) => void } {
  const inputs = new Map<number, Float32Array>();
  plan.slots.forEach((slot, i) => {
    if (slot.life === 'input') inputs.set(i, new Float32Array(slot.size / 4));
  });
  const all = [...inputs.values()];
  const set = (t: number) => {
    // Values that change every step, as a timestep embedding's would; all keep the stack bounded.
    const phase = (t % 1000) / 1000;
    for (let k = 0; k < all.length; k++) {
      const u = all[k] as Float32Array;
      u[0] = 0.9 + 0.1 * phase + 0.01 * k;
      u[1] = 0.05 * phase;
      u[2] = 1 + phase;
      u[3] = 4;
    }
  };
  set(0);
  return { inputs, set };
}
