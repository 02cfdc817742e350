/**
 * A two-layer perceptron trained on WebGPU with Pol: the same model, data, initial weights and
 * SGD step as `trainStep` in `@pol/verbs/examples` (the CPU version), written as WGSL kernels.
 *
 * Runs anywhere WebGPU does: hand it a `GPUDevice` from Dawn's Node.js bindings or from the
 * browser's `navigator.gpu`. (This file is shared verbatim by examples/node-webgpu and
 * examples/browser-webgpu; a test keeps the two copies identical.)
 *
 * How Pol is used:
 * - each WGSL kernel is a Pol kernel: it takes its destinations first, *describes* them next to
 *   itself (`describe`), and is made a functional verb with `Allocating`, exactly like the CPU
 *   kernels; the verbs carve their outputs from whatever space is ambient, so inside the training
 *   step every activation and intermediate gradient is a carve in the step's frame;
 * - everything lives in one arena over one `GPUBuffer` (`deviceArena`), so every binding is a
 *   range of the same buffer, bound `var<storage, read_write>` (WebGPU's usage rule is per
 *   whole buffer within a dispatch);
 * - bind groups come from `bindGroup`'s cache: a steady step creates none;
 * - the gradients are the parameters' `Shadows`, carved once next to them; the backward kernels
 *   add into them, so each step starts by zeroing them (`zeroShadows`, a `clearBuffer` on the
 *   device), exactly as the CPU step does. A captured step records the clears, so every replay
 *   zeroes the gradients again before its backward pass: the loop clears nothing by hand;
 * - the path to a captured step: compile every pipeline first, run one step eagerly on a generous
 *   slab, read the watermark, make a slab of exactly that size, capture the first step on it, and
 *   replay the graph for every later step.
 */
import { type Arena, watermark } from '@pol/arena';
import { alloc, describe, type Frame, Similar, Undef } from '@pol/core';
import { Allocating, shadowSpec, walkShadows, zeroShadows } from '@pol/verbs';
import { blobs, initMlp, type Mlp, seededRandom } from '@pol/verbs/examples';
import { bindGroup, capture, deviceArena, download, type GpuArray, type GraphStats, upload } from '@pol/webgpu';

/** A float32 array on the device. */
export type G = GpuArray<'float32'>;
/** An int32 array on the device (class labels). */
export type GI = GpuArray<'int32'>;
/** One dense layer's parameters on the device: `w` is `[inputs, outputs]`, `b` is `[outputs]`. */
export interface GpuLayer {
  w: G;
  b: G;
}
/** The perceptron's parameters (or their gradients) on the device. */
export interface GpuMlp {
  layer1: GpuLayer;
  layer2: GpuLayer;
}

// --- WGSL --------------------------------------------------------------------------------------
// Shapes are read from the bound ranges (arrayLength), so one pipeline serves every layer size.
// Every binding is `read_write`: all arrays are ranges of one arena's buffer (see above).

const rw = (names: readonly string[], type = 'f32') =>
  names.map((n, i) => `@group(0) @binding(${i}) var<storage, read_write> ${n}: array<${type}>;`).join('\n');

const wgsl = {
  // y[r, c] = b[c] + Σ_j x[r, j] · w[j, c]
  linear: /* wgsl */ `${rw(['x', 'w', 'b', 'y'])}
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3u) {
  let m = arrayLength(&b); let k = arrayLength(&w) / m; let n = arrayLength(&x) / k;
  let i = id.x; if (i >= n * m) { return; }
  let r = i / m; let c = i % m;
  var acc = b[c];
  for (var j = 0u; j < k; j++) { acc += x[r * k + j] * w[j * m + c]; }
  y[i] = acc;
}`,
  relu: /* wgsl */ `${rw(['x', 'y'])}
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3u) {
  let i = id.x; if (i >= arrayLength(&y)) { return; }
  y[i] = max(x[i], 0.0);
}`,
  // Per row: probs = softmax(z), rowLoss = −log probs[label].
  softmaxCrossEntropy: /* wgsl */ `${rw(['z'])}
@group(0) @binding(1) var<storage, read_write> labels: array<i32>;
@group(0) @binding(2) var<storage, read_write> probs: array<f32>;
@group(0) @binding(3) var<storage, read_write> rowLoss: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3u) {
  let n = arrayLength(&rowLoss); let c = arrayLength(&z) / n;
  let r = id.x; if (r >= n) { return; }
  var top = z[r * c];
  for (var j = 1u; j < c; j++) { top = max(top, z[r * c + j]); }
  var sum = 0.0;
  for (var j = 0u; j < c; j++) { sum += exp(z[r * c + j] - top); }
  for (var j = 0u; j < c; j++) { probs[r * c + j] = exp(z[r * c + j] - top) / sum; }
  rowLoss[r] = -(z[r * c + u32(labels[r])] - top - log(sum));
}`,
  // loss[0] = mean of rowLoss (one invocation: the batch is small).
  mean: /* wgsl */ `${rw(['values', 'result'])}
@compute @workgroup_size(1) fn main() {
  let n = arrayLength(&values);
  var sum = 0.0;
  for (var i = 0u; i < n; i++) { sum += values[i]; }
  result[0] = sum / f32(n);
}`,
  // dz = (probs − onehot(labels)) / batch
  softmaxCrossEntropyBackward: /* wgsl */ `${rw(['probs'])}
@group(0) @binding(1) var<storage, read_write> labels: array<i32>;
@group(0) @binding(2) var<storage, read_write> dz: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3u) {
  let n = arrayLength(&labels); let c = arrayLength(&probs) / n;
  let i = id.x; if (i >= n * c) { return; }
  let r = i / c; let j = i % c;
  dz[i] = (probs[i] - select(0.0, 1.0, i32(j) == labels[r])) / f32(n);
}`,
  // One invocation per gradient entry: dw += xᵀ·dy, db += Σ_rows dy (gradients add up, as in the
  // CPU kernels, so the step zeroes them first), dx = dy·wᵀ.
  linearBackward: /* wgsl */ `${rw(['w', 'x', 'dy', 'dx', 'dw', 'db'])}
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3u) {
  let m = arrayLength(&db); let k = arrayLength(&dw) / m; let n = arrayLength(&dy) / m;
  let i = id.x;
  if (i < k * m) {
    let j = i / m; let c = i % m;
    var acc = 0.0;
    for (var r = 0u; r < n; r++) { acc += x[r * k + j] * dy[r * m + c]; }
    dw[i] += acc;
  } else if (i < k * m + m) {
    let c = i - k * m;
    var acc = 0.0;
    for (var r = 0u; r < n; r++) { acc += dy[r * m + c]; }
    db[c] += acc;
  } else if (i < k * m + m + n * k) {
    let t = i - k * m - m; let r = t / k; let j = t % k;
    var acc = 0.0;
    for (var c = 0u; c < m; c++) { acc += dy[r * m + c] * w[j * m + c]; }
    dx[t] = acc;
  }
}`,
  reluBackward: /* wgsl */ `${rw(['x', 'dy', 'dx'])}
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3u) {
  let i = id.x; if (i >= arrayLength(&dx)) { return; }
  dx[i] = select(0.0, dy[i], x[i] > 0.0);
}`,
  // p −= lr · g, with lr a pipeline-overridable constant.
  sgd: /* wgsl */ `${rw(['p', 'g'])}
override lr: f32 = 0.1;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3u) {
  let i = id.x; if (i >= arrayLength(&p)) { return; }
  p[i] -= lr * g[i];
}`,
} as const;

type KernelName = keyof typeof wgsl;
const workgroupSize: Record<KernelName, number> = {
  linear: 64,
  relu: 64,
  softmaxCrossEntropy: 64,
  mean: 1,
  softmaxCrossEntropyBackward: 64,
  linearBackward: 64,
  reluBackward: 64,
  sgd: 64,
};
const COMPUTE = 4; // GPUShaderStage.COMPUTE, spelled out so that no WebGPU global is needed

/** One dispatch as the trace records it: which kernel, what it bound, and the arena's frames then. */
export interface DispatchRecord {
  readonly kernel: KernelName;
  readonly bindings: readonly { readonly name: string; readonly offset: number; readonly size: number }[];
  /** The arena's offset, and where each open frame starts (outermost first), at the dispatch. */
  readonly offset: number;
  readonly frameMarks: readonly number[];
}

/**
 * The compiled pipelines, and the compute pass the kernels encode into. Compiling is the cold
 * part of a warm-up: it happens here, once, before anything is captured.
 */
export class GpuKernels {
  readonly device: GPUDevice;
  readonly #pipelines = new Map<KernelName, { pipeline: GPUComputePipeline; layout: GPUBindGroupLayout }>();
  /** The pass the kernels encode into while a step runs. */
  pass: GPUComputePassEncoder | undefined;
  /** When set, every dispatch is recorded here, with the arena's state (for pictures). */
  trace: { arena: Arena<'gpu'>; dispatches: DispatchRecord[] } | undefined;

  constructor(device: GPUDevice, options: { readonly lr: number }) {
    this.device = device;
    for (const name of Object.keys(wgsl) as KernelName[]) {
      const count = (wgsl[name].match(/@binding/g) ?? []).length;
      const layout = device.createBindGroupLayout({
        label: name,
        entries: Array.from({ length: count }, (_, binding) => ({ binding, visibility: COMPUTE, buffer: { type: 'storage' } })),
      });
      const pipeline = device.createComputePipeline({
        label: name,
        layout: device.createPipelineLayout({ bindGroupLayouts: [layout] }),
        compute: {
          module: device.createShaderModule({ label: name, code: wgsl[name] }),
          entryPoint: 'main',
          ...(name === 'sgd' ? { constants: { lr: options.lr } } : {}),
        },
      });
      this.#pipelines.set(name, { pipeline, layout });
    }
  }

  /** Encode one dispatch of `kernel` over `threads` invocations, binding `arrays` in order. */
  dispatch(kernel: KernelName, arrays: Readonly<Record<string, G | GI>>, threads: number): void {
    const pass = this.pass;
    const entry = this.#pipelines.get(kernel);
    if (pass === undefined || entry === undefined)
      throw new Error(`${kernel}: no compute pass is open (call it inside trainStep)`);
    const bindings = Object.values(arrays);
    pass.setPipeline(entry.pipeline);
    pass.setBindGroup(0, bindGroup(this.device, entry.layout, bindings));
    pass.dispatchWorkgroups(Math.ceil(threads / workgroupSize[kernel]));
    if (this.trace !== undefined) {
      const { offset, frameMarks } = this.trace.arena.describe();
      this.trace.dispatches.push({
        kernel,
        bindings: Object.entries(arrays).map(([name, a]) => ({ name, offset: a.offset, size: a.size })),
        offset,
        frameMarks,
      });
    }
  }
}

const rows = (x: { readonly dims: readonly number[] }) => x.dims[0] ?? 1;
const cols = (x: { readonly dims: readonly number[] }) => x.dims[x.dims.length - 1] ?? 1;

// --- the kernels, described, and their verbs -----------------------------------------------------

/** A dense layer, into `out.y`: `y = x · w + b`. */
export const linearInto = describe(
  function linearInto(out: { y: G }, k: GpuKernels, layer: GpuLayer, x: G): void {
    k.dispatch('linear', { x, w: layer.w, b: layer.b, y: out.y }, out.y.length);
  },
  { outputs: (_k: GpuKernels, layer: GpuLayer, x: G) => ({ y: Undef('float32', [rows(x), cols(layer.b)]) }) },
);

/** The rectifier, into `out.y`. */
export const reluInto = describe(
  function reluInto(out: { y: G }, k: GpuKernels, x: G): void {
    k.dispatch('relu', { x, y: out.y }, x.length);
  },
  { outputs: (_k: GpuKernels, x: G) => ({ y: Undef(x) }) },
);

/**
 * Softmax cross-entropy, into `out.loss` (the batch mean), saving `probs` as a checkpoint for the
 * backward pass; the per-row losses are scratch, carved in the verb's own frame.
 */
export const softmaxCrossEntropyInto = describe(
  function softmaxCrossEntropyInto(
    out: { loss: G },
    k: GpuKernels,
    logits: G,
    labels: GI,
    options: { probs: G; rowLoss: G },
  ): void {
    k.dispatch('softmaxCrossEntropy', { z: logits, labels, probs: options.probs, rowLoss: options.rowLoss }, rows(logits));
    k.dispatch('mean', { values: options.rowLoss, result: out.loss }, 1);
  },
  {
    outputs: () => ({ loss: Undef('float32', [1]) }),
    checkpoints: (_k: GpuKernels, logits: G) => ({ probs: Undef(logits) }),
    scratch: (_k: GpuKernels, logits: G) => ({ rowLoss: Undef('float32', [rows(logits)]) }),
  },
);

/** The backward pass of softmax cross-entropy: `dlogits = (probs − onehot(labels)) / batch`. */
export const softmaxCrossEntropyBackwardInto = describe(
  function softmaxCrossEntropyBackwardInto(grads: { dlogits: G }, k: GpuKernels, probs: G, labels: GI): void {
    k.dispatch('softmaxCrossEntropyBackward', { probs, labels, dz: grads.dlogits }, probs.length);
  },
  { outputs: (_k: GpuKernels, probs: G) => ({ dlogits: Undef(probs) }) },
);

/**
 * The backward pass of a dense layer: `dx`, and the layer's gradients `dlayer`, which this kernel
 * adds into (pass the model's gradients, its Shadows, under `dlayer`, zeroed).
 */
export const linearBackwardInto = describe(
  function linearBackwardInto(grads: { dx: G; dlayer: GpuLayer }, k: GpuKernels, layer: GpuLayer, x: G, dy: G): void {
    const { dx, dlayer } = grads;
    k.dispatch(
      'linearBackward',
      { w: layer.w, x, dy, dx, dw: dlayer.w, db: dlayer.b },
      dlayer.w.length + dlayer.b.length + dx.length,
    );
  },
  {
    outputs: (_k: GpuKernels, layer: GpuLayer, x: G) => ({ dx: Undef(x), dlayer: { w: Undef(layer.w), b: Undef(layer.b) } }),
  },
);

/** The backward pass of the rectifier. */
export const reluBackwardInto = describe(
  function reluBackwardInto(grads: { dx: G }, k: GpuKernels, x: G, dy: G): void {
    k.dispatch('reluBackward', { x, dy, dx: grads.dx }, x.length);
  },
  { outputs: (_k: GpuKernels, x: G) => ({ dx: Undef(x) }) },
);

export const linear = Allocating(linearInto);
export const relu = Allocating(reluInto);
export const softmaxCrossEntropy = Allocating(softmaxCrossEntropyInto);
export const softmaxCrossEntropyBackward = Allocating(softmaxCrossEntropyBackwardInto);
export const linearBackward = Allocating(linearBackwardInto);
export const reluBackward = Allocating(reluBackwardInto);

/**
 * One SGD step, into `out.loss` (the loss before the update): zero `grads` (one `clearBuffer` per
 * array, on the device), forward, backward into `grads`, then `p −= lr · g` for every parameter,
 * as one compute pass and one submit. The verbs inside take their outputs from the ambient space,
 * which the step's own verb binds to its frame.
 */
export const trainStepInto = describe(
  function trainStepInto(out: { loss: G }, k: GpuKernels, params: GpuMlp, grads: GpuMlp, x: G, labels: GI): void {
    zeroShadows(grads);
    const encoder = k.device.createCommandEncoder({ label: 'train step' });
    k.pass = encoder.beginComputePass();
    try {
      const h = linear(k, params.layer1, x).y;
      const a = relu(k, h).y;
      const logits = linear(k, params.layer2, a).y;
      const { probs } = softmaxCrossEntropy(k, logits, labels, { loss: out.loss });
      const { dlogits } = softmaxCrossEntropyBackward(k, probs, labels);
      const da = linearBackward(k, params.layer2, a, dlogits, { dlayer: grads.layer2 }).dx;
      const dh = reluBackward(k, h, da).dx;
      linearBackward(k, params.layer1, x, dh, { dlayer: grads.layer1 });
      walkShadows(params, grads, (p, g) => k.dispatch('sgd', { p, g }, p.length));
    } finally {
      k.pass.end();
      k.pass = undefined;
    }
    k.device.queue.submit([encoder.finish()]);
  },
  { outputs: () => ({ loss: Undef('float32', [1]) }) },
);

export const trainStep = Allocating(trainStepInto);

// --- the training loop ---------------------------------------------------------------------------

/** Everything one model needs on the device: data, parameters, their gradients (Shadows) and the loss. */
export interface GpuModel {
  readonly x: G;
  readonly labels: GI;
  readonly params: GpuMlp;
  readonly grads: GpuMlp;
  readonly loss: G;
}

function likeMlp(p: Mlp) {
  return {
    layer1: { w: Undef(p.layer1.w), b: Undef(p.layer1.b) },
    layer2: { w: Undef(p.layer2.w), b: Undef(p.layer2.b) },
  };
}

/**
 * Carve the model's buffers from `arena` (always in the same order, so on two arenas they land
 * at the same offsets) and upload the data and initial parameters, made on the host exactly as
 * the CPU example makes them.
 */
export function placeModel(
  arena: Arena<'gpu'> | Frame<'gpu'>,
  options: { readonly seed: number; readonly hidden: number },
): GpuModel {
  const host = Similar(new Float32Array(0)); // the GC space, for the host-side copies
  const random = seededRandom(options.seed);
  const data = blobs(host, random, 30, 3); // 90 points in the plane, 3 classes
  const init = initMlp(host, random, 2, options.hidden, 3);
  const model = alloc(arena, {
    x: Undef(data.x),
    labels: Undef(data.labels),
    params: likeMlp(init),
    grads: shadowSpec(init), // the parameters' Shadows: zeroed, of the same shapes
    loss: Undef('float32', [1]),
  });
  upload(model.x, data.x);
  upload(model.labels, data.labels);
  walkShadows(init, model.params, (h, g) => upload(g, h));
  return model;
}

export interface TrainOptions {
  readonly steps?: number;
  readonly seed?: number;
  readonly lr?: number;
  readonly hidden?: number;
  /** The warm-up slab's size in bytes (default 4 MiB): generous, since it only measures. */
  readonly warmupBytes?: number;
  /** Called once the step is captured, before step 1's `onStep`: the arena, the watermark, the graph. */
  readonly onCaptured?: (run: CapturedRun) => void | Promise<void>;
  /** Called after every step with its loss (1-based steps; step 1 is the captured run). */
  readonly onStep?: (step: number, loss: number, how: 'captured' | 'replayed') => void | Promise<void>;
  /** Record every dispatch of the warm-up and captured runs (for pictures of the arena). */
  readonly trace?: boolean;
  /** Use checked arenas (`@pol/webgpu`'s usage-scope checks on every dispatch): for tests. */
  readonly checked?: boolean;
}

/** What `onCaptured` hears: the arena the loop runs on, and how it was sized. */
export interface CapturedRun {
  /** The arena over a slab of exactly the watermark. */
  readonly arena: Arena<'gpu'>;
  /** The model on it, which the graph's replays train. */
  readonly model: GpuModel;
  /** What the model and one step need, measured on the warm-up slab. */
  readonly watermark: number;
  /** The warm-up slab's size. */
  readonly warmupBytes: number;
  /** The loss of the eager warm-up step. */
  readonly warmupLoss: number;
  /** The captured graph's contents. */
  readonly stats: GraphStats;
  /** The captured step's dispatches, when `trace` was asked for. */
  readonly trace?: readonly DispatchRecord[];
}

export interface TrainResult {
  /** The loss of every step, before its update. */
  readonly losses: number[];
  /** The loss the eager warm-up step computed (the same as step 1's: same data, same weights). */
  readonly warmupLoss: number;
  /** What one model and one step need, measured on the warm-up slab. */
  readonly watermark: number;
  /** The arena the loop ran on, over a slab of exactly the watermark. */
  readonly arena: Arena<'gpu'>;
  /** The captured graph's contents. */
  readonly stats: GraphStats;
  /** Dispatches of the warm-up step and of the captured step, when asked for. */
  readonly trace?: { readonly warmup: DispatchRecord[]; readonly captured: DispatchRecord[] };
}

async function readLoss(loss: G): Promise<number> {
  return (await download(loss)).data[0] ?? Number.NaN;
}

/**
 * Train the perceptron for `steps` steps on `device`, the captured way:
 *
 * 1. compile every pipeline (`new GpuKernels`);
 * 2. warm up: place the model on a generous slab and run one step eagerly; the arena's watermark
 *    is then what the model and one step need, scratch included;
 * 3. place the model again, on a new arena over a slab of exactly the watermark (the same
 *    allocation sequence, so the same offsets: it fits to the byte);
 * 4. capture the first step: it runs for real while its commands are recorded;
 * 5. replay the graph for every later step: one encoder and one submit each, none of the step's
 *    JavaScript, no carve, no bind group; the gradients' clears are in the graph, so nothing is
 *    cleared by hand.
 *
 * The slab and the graph are released when it returns; `arena` stays readable as a record.
 */
export async function trainOnGpu(device: GPUDevice, options: TrainOptions = {}): Promise<TrainResult> {
  const steps = options.steps ?? 200;
  const placement = { seed: options.seed ?? 1, hidden: options.hidden ?? 16 };
  const kernels = new GpuKernels(device, { lr: options.lr ?? 0.1 });

  // Warm up eagerly on a generous slab, and measure.
  const checked = options.checked ?? false;
  const warmupBytes = options.warmupBytes ?? 4 << 20;
  const warm = deviceArena(device, warmupBytes, { label: 'warm-up', checked });
  const warmupTrace: DispatchRecord[] = [];
  let warmupLoss: number;
  let bytes: number;
  try {
    const m = placeModel(warm, placement);
    if (options.trace === true) kernels.trace = { arena: warm, dispatches: warmupTrace };
    trainStep(warm, kernels, m.params, m.grads, m.x, m.labels, { loss: m.loss });
    kernels.trace = undefined;
    warmupLoss = await readLoss(m.loss);
    bytes = watermark(warm);
  } finally {
    warm.slab.destroy();
  }

  // A slab of exactly the watermark, the same placement, and the first step captured.
  const arena = deviceArena(device, bytes, { label: 'perceptron', checked });
  const capturedTrace: DispatchRecord[] = [];
  try {
    const m = placeModel(arena, placement);
    if (options.trace === true) kernels.trace = { arena, dispatches: capturedTrace };
    const graph = await capture(device, () => trainStep(arena, kernels, m.params, m.grads, m.x, m.labels, { loss: m.loss }), {
      label: 'train step',
    });
    kernels.trace = undefined;
    const losses = [await readLoss(m.loss)];
    await options.onCaptured?.({
      arena,
      model: m,
      watermark: bytes,
      warmupBytes,
      warmupLoss,
      stats: graph.stats,
      ...(options.trace === true ? { trace: capturedTrace } : {}),
    });
    await options.onStep?.(1, losses[0] ?? Number.NaN, 'captured');
    try {
      for (let step = 2; step <= steps; step++) {
        graph.replay();
        const loss = await readLoss(m.loss);
        losses.push(loss);
        await options.onStep?.(step, loss, 'replayed');
      }
    } finally {
      graph.dispose();
    }
    return {
      losses,
      warmupLoss,
      watermark: bytes,
      arena,
      stats: graph.stats,
      ...(options.trace === true ? { trace: { warmup: warmupTrace, captured: capturedTrace } } : {}),
    };
  } finally {
    arena.slab.destroy();
  }
}
