/**
 * The perceptron's training loop, the captured way: warm up eagerly on generous slabs, size new
 * slabs from the watermarks, capture the first step on them, and replay the graph for every other.
 *
 * @module
 */
import type { Arena } from '@pol/arena';
import { watermark } from '@pol/arena';
import { capture, download, type GraphStats } from '../index.js';
import { type DispatchRecord, GpuKernels } from './kernels.js';
import { destroyArenas, type GpuModel, type ModelArenas, modelArenas, placeModel } from './model.js';
import { trainStep } from './train-step.js';
import type { GpuF32 } from './types.js';

/**
 * How `trainOnGpu` trains, and what it tells you on the way. Every field is optional.
 *
 * @example
 * ```ts
 * import { type TrainOptions, trainOnGpu } from '@pol/webgpu/examples';
 * const options: TrainOptions = { steps: 2, seed: 1, lr: 0.1, hidden: 16, warmupBytes: 1 << 16 };
 * const { losses } = await trainOnGpu(device, options);
 * console.log(losses.length); // 2
 * ```
 */
export interface TrainOptions {
  /** How many steps (default 200). */
  readonly steps?: number;
  /** The seed of the data and initial weights (default 1). */
  readonly seed?: number;
  /** SGD's learning rate (default 0.1). */
  readonly lr?: number;
  /** The hidden layer's width (default 16). */
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

/**
 * What `onCaptured` hears: the arenas the loop runs on, and how they were sized.
 *
 * @example
 * ```ts
 * import { type CapturedRun, trainOnGpu } from '@pol/webgpu/examples';
 * let run: CapturedRun | undefined;
 * await trainOnGpu(device, { steps: 1, onCaptured: (captured) => { run = captured; } });
 * console.log(run?.watermark, run?.paramsBytes, run?.stats.dispatches); // 30672 780 13
 * ```
 */
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

/**
 * What `trainOnGpu` returns: every step's loss, and how the run was sized.
 *
 * @example
 * ```ts
 * import { type TrainResult, trainOnGpu } from '@pol/webgpu/examples';
 * const result: TrainResult = await trainOnGpu(device, { steps: 3 });
 * console.log(result.losses.length, result.warmupLoss.toFixed(4), result.stats.dispatches, result.stats.copies); // 3 '1.4116' 13 4
 * ```
 */
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

async function readLoss(loss: GpuF32): Promise<number> {
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
 *
 * @example
 * ```ts
 * import { trainOnGpu } from '@pol/webgpu/examples';
 * const result = await trainOnGpu(device, { steps: 200 });
 * console.log(result.losses[0]?.toFixed(4), result.losses.at(-1)?.toFixed(4)); // '1.4116' '0.0786'
 * console.log(String(result.arena)); // 'Arena(device, 30.0 KiB, offset 2308, watermark 30672, 0 open frames)'
 * ```
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
