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
 * - two arenas, two `GPUBuffer`s (`ModelArenas`): the parameters (weights and biases) on one, and
 *   everything else (data, gradients, loss, the step's frames) on the other. The layers declare
 *   their weights and biases `var<storage, read>`, as real WGSL does, and SGD its gradients; that
 *   is valid only because no dispatch also writes the buffer those live on (WebGPU's usage rule is
 *   per whole buffer within a dispatch). The rest stays `read_write`: see the README;
 * - bind groups come from `bindGroup`'s cache: a steady step creates none;
 * - the gradients are the parameters' `Shadows`, carved once on the step's arena; the backward
 *   kernels add into them, so each step starts by zeroing them (`zeroShadows`), exactly as the
 *   CPU step does. A captured step records the clears, so every replay zeroes the gradients
 *   again before its backward pass: the loop clears nothing by hand;
 * - the path to a captured step: compile every pipeline first, run one step eagerly on generous
 *   slabs, read the watermarks, make slabs of exactly those sizes, capture the first step on
 *   them, and replay the graph for every later step.
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
// Each binding is declared once, with its access: `read` for what lives on the parameters'
// buffer and is only read there (weights, biases) and for the gradients SGD reads; `read_write`
// for everything on the buffer the dispatch writes (WebGPU refuses a buffer bound both ways in
// one dispatch, even as disjoint ranges).

type Access = 'read' | 'read_write';
/** A kernel: its bindings, its workgroup size, module-scope declarations, and the body of `main`. */
interface KernelSource {
  /** Each binding's name in WGSL and its access, in binding order (0, 1, 2, …). */
  readonly bindings: Readonly<Record<string, Access>>;
  /** The bindings whose elements are i32 (the others' are f32). */
  readonly i32?: readonly string[];
  readonly workgroupSize: number;
  readonly declarations?: string;
  readonly body: string;
}

const R = 'read';
const RW = 'read_write';

const kernelSources = {
  // y[r, c] = b[c] + Σ_j x[r, j] · w[j, c]
  linear: {
    bindings: { x: RW, w: R, b: R, y: RW },
    workgroupSize: 64,
    body: `
  let m = arrayLength(&b); let k = arrayLength(&w) / m; let n = arrayLength(&x) / k;
  let i = id.x; if (i >= n * m) { return; }
  let r = i / m; let c = i % m;
  var acc = b[c];
  for (var j = 0u; j < k; j++) { acc += x[r * k + j] * w[j * m + c]; }
  y[i] = acc;`,
  },
  relu: {
    bindings: { x: RW, y: RW },
    workgroupSize: 64,
    body: `
  let i = id.x; if (i >= arrayLength(&y)) { return; }
  y[i] = max(x[i], 0.0);`,
  },
  // Per row: probs = softmax(z), rowLoss = −log probs[label].
  softmaxCrossEntropy: {
    bindings: { z: RW, labels: RW, probs: RW, rowLoss: RW },
    i32: ['labels'],
    workgroupSize: 64,
    body: `
  let n = arrayLength(&rowLoss); let c = arrayLength(&z) / n;
  let r = id.x; if (r >= n) { return; }
  var top = z[r * c];
  for (var j = 1u; j < c; j++) { top = max(top, z[r * c + j]); }
  var sum = 0.0;
  for (var j = 0u; j < c; j++) { sum += exp(z[r * c + j] - top); }
  for (var j = 0u; j < c; j++) { probs[r * c + j] = exp(z[r * c + j] - top) / sum; }
  rowLoss[r] = -(z[r * c + u32(labels[r])] - top - log(sum));`,
  },
  // loss[0] = mean of rowLoss (one invocation: the batch is small).
  mean: {
    bindings: { values: RW, result: RW },
    workgroupSize: 1,
    body: `
  let n = arrayLength(&values);
  var sum = 0.0;
  for (var i = 0u; i < n; i++) { sum += values[i]; }
  result[0] = sum / f32(n);`,
  },
  // dz = (probs − onehot(labels)) / batch
  softmaxCrossEntropyBackward: {
    bindings: { probs: RW, labels: RW, dz: RW },
    i32: ['labels'],
    workgroupSize: 64,
    body: `
  let n = arrayLength(&labels); let c = arrayLength(&probs) / n;
  let i = id.x; if (i >= n * c) { return; }
  let r = i / c; let j = i % c;
  dz[i] = (probs[i] - select(0.0, 1.0, i32(j) == labels[r])) / f32(n);`,
  },
  // One invocation per gradient entry: dw += xᵀ·dy, db += Σ_rows dy (gradients add up, as in the
  // CPU kernels, so the step zeroes them first), dx = dy·wᵀ.
  linearBackward: {
    bindings: { w: R, x: RW, dy: RW, dx: RW, dw: RW, db: RW },
    workgroupSize: 64,
    body: `
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
  }`,
  },
  reluBackward: {
    bindings: { x: RW, dy: RW, dx: RW },
    workgroupSize: 64,
    body: `
  let i = id.x; if (i >= arrayLength(&dx)) { return; }
  dx[i] = select(0.0, dy[i], x[i] > 0.0);`,
  },
  // p −= lr · g, with lr a pipeline-overridable constant.
  sgd: {
    bindings: { p: RW, g: R },
    workgroupSize: 64,
    declarations: 'override lr: f32 = 0.1;',
    body: `
  let i = id.x; if (i >= arrayLength(&p)) { return; }
  p[i] -= lr * g[i];`,
  },
} as const satisfies Record<string, KernelSource>;

type KernelName = keyof typeof kernelSources;

/** A kernel's WGSL: its bindings declared as the source says, then its declarations and `main`. */
function wgslOf(source: KernelSource): string {
  const bindings = Object.entries(source.bindings).map(([name, access], i) => {
    const type = source.i32?.includes(name) === true ? 'i32' : 'f32';
    return `@group(0) @binding(${i}) var<storage, ${access}> ${name}: array<${type}>;`;
  });
  return `${bindings.join('\n')}
${source.declarations ?? ''}
@compute @workgroup_size(${source.workgroupSize}) fn main(@builtin(global_invocation_id) id: vec3u) {${source.body}
}`;
}

const COMPUTE = 4; // GPUShaderStage.COMPUTE, spelled out so that no WebGPU global is needed

/** One dispatch as the trace records it: which kernel, what it bound, and the step arena's frames then. */
export interface DispatchRecord {
  readonly kernel: KernelName;
  /** Each binding: its name in the kernel, the arena it lies on, and its range there. */
  readonly bindings: readonly {
    readonly name: string;
    readonly on: 'params' | 'arena';
    readonly offset: number;
    readonly size: number;
  }[];
  /** The step arena's offset, and where each open frame starts (outermost first), at the dispatch. */
  readonly offset: number;
  readonly frameMarks: readonly number[];
}

interface Compiled {
  readonly source: KernelSource;
  /** The bindings' names, in binding order. */
  readonly names: readonly string[];
  readonly pipeline: GPUComputePipeline;
  readonly layout: GPUBindGroupLayout;
}

/**
 * The compiled pipelines, and the compute pass the kernels encode into. Compiling is the cold
 * part of a warm-up: it happens here, once, before anything is captured.
 */
export class GpuKernels {
  readonly device: GPUDevice;
  readonly #compiled: Record<KernelName, Compiled>;
  /** The pass the kernels encode into while a step runs. */
  pass: GPUComputePassEncoder | undefined;
  // The pipeline last set, and on which pass: consecutive dispatches of one kernel (SGD's) set it once.
  #pipelineOf: GPUComputePassEncoder | undefined;
  #pipeline: GPUComputePipeline | undefined;
  /** When set, every dispatch is recorded here, with the step arena's state (for pictures). */
  trace: { arenas: ModelArenas; dispatches: DispatchRecord[] } | undefined;

  constructor(device: GPUDevice, options: { readonly lr: number }) {
    this.device = device;
    const compile = (name: KernelName): Compiled => {
      const source: KernelSource = kernelSources[name];
      const layout = device.createBindGroupLayout({
        label: name,
        entries: Object.values(source.bindings).map((access, binding) => ({
          binding,
          visibility: COMPUTE,
          buffer: { type: access === R ? 'read-only-storage' : 'storage' },
        })),
      });
      const pipeline = device.createComputePipeline({
        label: name,
        layout: device.createPipelineLayout({ bindGroupLayouts: [layout] }),
        compute: {
          module: device.createShaderModule({ label: name, code: wgslOf(source) }),
          entryPoint: 'main',
          ...(name === 'sgd' ? { constants: { lr: options.lr } } : {}),
        },
      });
      return { source, names: Object.keys(source.bindings), pipeline, layout };
    };
    this.#compiled = {
      linear: compile('linear'),
      relu: compile('relu'),
      softmaxCrossEntropy: compile('softmaxCrossEntropy'),
      mean: compile('mean'),
      softmaxCrossEntropyBackward: compile('softmaxCrossEntropyBackward'),
      linearBackward: compile('linearBackward'),
      reluBackward: compile('reluBackward'),
      sgd: compile('sgd'),
    };
  }

  /** Encode one dispatch of `kernel` over `threads` invocations, binding `arrays` in binding order. */
  dispatch(kernel: KernelName, threads: number, ...arrays: (G | GI)[]): void {
    const pass = this.pass;
    if (pass === undefined) throw new Error(`${kernel}: no compute pass is open (call it inside trainStep)`);
    const { source, names, pipeline, layout } = this.#compiled[kernel];
    if (arrays.length !== names.length) throw new Error(`${kernel} binds ${names.length} arrays, ${arrays.length} were given`);
    if (pipeline !== this.#pipeline || pass !== this.#pipelineOf) {
      pass.setPipeline(pipeline);
      this.#pipeline = pipeline;
      this.#pipelineOf = pass;
    }
    pass.setBindGroup(0, bindGroup(this.device, layout, arrays));
    pass.dispatchWorkgroups(Math.ceil(threads / source.workgroupSize));
    if (this.trace !== undefined) this.#record(kernel, arrays);
  }

  #record(kernel: KernelName, arrays: readonly (G | GI)[]): void {
    const trace = this.trace as NonNullable<GpuKernels['trace']>;
    const { offset, frameMarks } = trace.arenas.arena.describe();
    const params = trace.arenas.params.slab.buffer;
    const { names } = this.#compiled[kernel];
    trace.dispatches.push({
      kernel,
      bindings: arrays.map((a, i) => ({
        name: names[i] ?? '',
        on: a.buffer === params ? 'params' : 'arena',
        offset: a.offset,
        size: a.size,
      })),
      offset,
      frameMarks,
    });
  }
}

const rows = (x: { readonly dims: readonly number[] }) => x.dims[0] ?? 1;
const cols = (x: { readonly dims: readonly number[] }) => x.dims[x.dims.length - 1] ?? 1;

// --- the kernels, described, and their verbs -----------------------------------------------------

/** A dense layer, into `out.y`: `y = x · w + b`. */
export const linearInto = describe(
  function linearInto(out: { y: G }, k: GpuKernels, layer: GpuLayer, x: G): void {
    k.dispatch('linear', out.y.length, x, layer.w, layer.b, out.y);
  },
  { outputs: (_k: GpuKernels, layer: GpuLayer, x: G) => ({ y: Undef('float32', [rows(x), cols(layer.b)]) }) },
);

/** The rectifier, into `out.y`. */
export const reluInto = describe(
  function reluInto(out: { y: G }, k: GpuKernels, x: G): void {
    k.dispatch('relu', x.length, x, out.y);
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
    k.dispatch('softmaxCrossEntropy', rows(logits), logits, labels, options.probs, options.rowLoss);
    k.dispatch('mean', 1, options.rowLoss, out.loss);
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
    k.dispatch('softmaxCrossEntropyBackward', probs.length, probs, labels, grads.dlogits);
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
    k.dispatch('linearBackward', dlayer.w.length + dlayer.b.length + dx.length, layer.w, x, dy, dx, dlayer.w, dlayer.b);
  },
  {
    outputs: (_k: GpuKernels, layer: GpuLayer, x: G) => ({ dx: Undef(x), dlayer: { w: Undef(layer.w), b: Undef(layer.b) } }),
  },
);

/** The backward pass of the rectifier. */
export const reluBackwardInto = describe(
  function reluBackwardInto(grads: { dx: G }, k: GpuKernels, x: G, dy: G): void {
    k.dispatch('reluBackward', x.length, x, dy, grads.dx);
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
 * One SGD step, into `out.loss` (the loss before the update): zero `grads` (`zeroShadows`),
 * forward, backward into `grads`, then `p −= lr · g` for every parameter,
 * as one compute pass and one submit. The verbs inside take their outputs from the ambient space,
 * which the step's own verb binds to its frame.
 */
export const trainStepInto = describe(
  function trainStepInto(out: { loss: G }, k: GpuKernels, params: GpuMlp, grads: GpuMlp, x: G, labels: GI): void {
    zeroShadows(grads);
    // No descriptor: on Dawn a labelled encoder cost the eager step several microseconds, up to a
    // tenth of it (measured over SwiftShader); the captured graph has a label ('train step').
    const encoder = k.device.createCommandEncoder();
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
      walkShadows(params, grads, (p, g) => k.dispatch('sgd', p.length, p, g));
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

/**
 * The two arenas a model lives on, one `GPUBuffer` each. `params` holds the weights and biases,
 * which the layers bind `read` and only SGD writes; `arena` holds everything else (data, labels,
 * gradients, the loss) and the step's frames (activations, scratch). No dispatch writes both, so
 * each can be bound read-only where the other is written.
 */
export interface ModelArenas {
  readonly params: Arena<'gpu'>;
  readonly arena: Arena<'gpu'>;
}

/** Make the two arenas, of `bytes.params` and `bytes.arena` bytes, labelled after `label`. */
export function modelArenas(
  device: GPUDevice,
  bytes: { readonly params: number; readonly arena: number },
  options: { readonly label: string; readonly checked?: boolean },
): ModelArenas {
  const checked = options.checked ?? false;
  const params = deviceArena(device, bytes.params, { label: `${options.label} parameters`, checked });
  try {
    return { params, arena: deviceArena(device, bytes.arena, { label: options.label, checked }) };
  } catch (error) {
    params.slab.destroy();
    throw error;
  }
}

/** Destroy both arenas' slabs (the arenas stay readable as a record). */
export function destroyArenas(arenas: ModelArenas): void {
  arenas.params.slab.destroy();
  arenas.arena.slab.destroy();
}

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
 * Carve the model's buffers, the parameters from `arenas.params` and the rest from `arenas.arena`
 * (always in the same order, so on two pairs of arenas they land at the same offsets), and upload
 * the data and initial parameters, made on the host exactly as the CPU example makes them.
 */
export function placeModel(
  arenas: { readonly params: Arena<'gpu'> | Frame<'gpu'>; readonly arena: Arena<'gpu'> | Frame<'gpu'> },
  options: { readonly seed: number; readonly hidden: number },
): GpuModel {
  const host = Similar(new Float32Array(0)); // the GC space, for the host-side copies
  const random = seededRandom(options.seed);
  const data = blobs(host, random, 30, 3); // 90 points in the plane, 3 classes
  const init = initMlp(host, random, 2, options.hidden, 3);
  const params = alloc(arenas.params, likeMlp(init));
  const rest = alloc(arenas.arena, {
    x: Undef(data.x),
    labels: Undef(data.labels),
    grads: shadowSpec(init), // the parameters' Shadows: zeroed, of the same shapes, on the step's buffer
    loss: Undef('float32', [1]),
  });
  upload(rest.x, data.x);
  upload(rest.labels, data.labels);
  walkShadows(init, params, (h, g) => upload(g, h));
  return { ...rest, params };
}

export interface TrainOptions {
  readonly steps?: number;
  readonly seed?: number;
  readonly lr?: number;
  readonly hidden?: number;
  /** Each warm-up slab's size in bytes (default 4 MiB): generous, since it only measures. */
  readonly warmupBytes?: number;
  /** Called once the step is captured, before step 1's `onStep`: the arenas, the watermarks, the graph. */
  readonly onCaptured?: (run: CapturedRun) => void | Promise<void>;
  /** Called after every step with its loss (1-based steps; step 1 is the captured run). */
  readonly onStep?: (step: number, loss: number, how: 'captured' | 'replayed') => void | Promise<void>;
  /** Record every dispatch of the warm-up and captured runs (for pictures of the arena). */
  readonly trace?: boolean;
  /** Use checked arenas (`@pol/webgpu`'s usage-scope checks on every dispatch): for tests. */
  readonly checked?: boolean;
}

/** What `onCaptured` hears: the arenas the loop runs on, and how they were sized. */
export interface CapturedRun {
  /** The step's arena, over a slab of exactly its watermark. */
  readonly arena: Arena<'gpu'>;
  /** The parameters' arena, over a slab of exactly what they need. */
  readonly params: Arena<'gpu'>;
  /** The model on them, which the graph's replays train. */
  readonly model: GpuModel;
  /** What the step's arena needs (the data, gradients, loss and one step), measured on the warm-up slab. */
  readonly watermark: number;
  /** What the parameters need, measured on their warm-up slab. */
  readonly paramsBytes: number;
  /** Each warm-up slab's size. */
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
  /** What the step's arena needs, measured on the warm-up slab. */
  readonly watermark: number;
  /** What the parameters need, measured on their warm-up slab. */
  readonly paramsBytes: number;
  /** The step's arena the loop ran on, over a slab of exactly the watermark. */
  readonly arena: Arena<'gpu'>;
  /** The parameters' arena, over a slab of exactly `paramsBytes`. */
  readonly params: Arena<'gpu'>;
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
 * 2. warm up: place the model on two generous slabs and run one step eagerly; the step arena's
 *    watermark is then what the data, gradients, loss and one step need, scratch included, and
 *    the parameters' watermark what they need;
 * 3. place the model again, on new arenas over slabs of exactly those sizes (the same allocation
 *    sequence, so the same offsets: it fits to the byte);
 * 4. capture the first step: it runs for real while its commands are recorded;
 * 5. replay the graph for every later step: one encoder and one submit each, none of the step's
 *    JavaScript, no carve, no bind group; the gradients' clears are in the graph, so nothing is
 *    cleared by hand. (The graph pins what it binds in both arenas.)
 *
 * The slabs and the graph are released when it returns; the arenas stay readable as a record.
 */
export async function trainOnGpu(device: GPUDevice, options: TrainOptions = {}): Promise<TrainResult> {
  const steps = options.steps ?? 200;
  const placement = { seed: options.seed ?? 1, hidden: options.hidden ?? 16 };
  const kernels = new GpuKernels(device, { lr: options.lr ?? 0.1 });
  const checked = options.checked ?? false;
  const step = (arenas: ModelArenas, m: GpuModel) =>
    trainStep(arenas.arena, kernels, m.params, m.grads, m.x, m.labels, { loss: m.loss });

  // Warm up eagerly on generous slabs, and measure.
  const warmupBytes = options.warmupBytes ?? 4 << 20;
  const warm = modelArenas(device, { params: warmupBytes, arena: warmupBytes }, { label: 'warm-up', checked });
  const warmupTrace: DispatchRecord[] = [];
  let warmupLoss: number;
  const bytes = { params: 0, arena: 0 };
  try {
    const m = placeModel(warm, placement);
    if (options.trace === true) kernels.trace = { arenas: warm, dispatches: warmupTrace };
    step(warm, m);
    kernels.trace = undefined;
    warmupLoss = await readLoss(m.loss);
    bytes.params = watermark(warm.params);
    bytes.arena = watermark(warm.arena);
  } finally {
    destroyArenas(warm);
  }

  // Slabs of exactly the watermarks, the same placement, and the first step captured.
  const arenas = modelArenas(device, bytes, { label: 'perceptron', checked });
  const capturedTrace: DispatchRecord[] = [];
  try {
    const m = placeModel(arenas, placement);
    if (options.trace === true) kernels.trace = { arenas, dispatches: capturedTrace };
    const graph = await capture(device, () => step(arenas, m), { label: 'train step' });
    kernels.trace = undefined;
    const losses = [await readLoss(m.loss)];
    await options.onCaptured?.({
      ...arenas,
      model: m,
      watermark: bytes.arena,
      paramsBytes: bytes.params,
      warmupBytes,
      warmupLoss,
      stats: graph.stats,
      ...(options.trace === true ? { trace: capturedTrace } : {}),
    });
    await options.onStep?.(1, losses[0] ?? Number.NaN, 'captured');
    try {
      for (let n = 2; n <= steps; n++) {
        graph.replay();
        const loss = await readLoss(m.loss);
        losses.push(loss);
        await options.onStep?.(n, loss, 'replayed');
      }
    } finally {
      graph.dispose();
    }
    return {
      losses,
      warmupLoss,
      watermark: bytes.arena,
      paramsBytes: bytes.params,
      ...arenas,
      stats: graph.stats,
      ...(options.trace === true ? { trace: { warmup: warmupTrace, captured: capturedTrace } } : {}),
    };
  } finally {
    destroyArenas(arenas);
  }
}
