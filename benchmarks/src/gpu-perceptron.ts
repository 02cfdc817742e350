/**
 * The node-webgpu example's training step (a 2 → 16 → 3 perceptron, batch 90: forward, backward,
 * SGD, 13 dispatches in one compute pass) by the means a user has: a buffer per array per step, a
 * size-keyed pool, Pol eager on a device arena with its bind-group cache, Pol replayed, and
 * everything made once (the floor).
 *
 * The kernels are the example's own, imported: Pol's variants run its `trainStep` as it is; the
 * peers run the same dispatches written out in plain WebGPU. Their plan is read off one eager run
 * of the example's step (which kernel, which arrays, how many workgroups, through a `GpuKernels`
 * subclass that watches its own `dispatch`), and their pipelines are the ones the example's
 * `GpuKernels` compiles on the peers' device. So every variant does the same work from the same
 * weights and data, which the tests check by comparing losses.
 */
import { capture, type Graph } from '@pol/webgpu';
import {
  destroyArenas,
  GpuKernels,
  type GpuModel,
  type ModelArenas,
  modelArenas,
  placeModel,
  trainStep,
} from '@pol/webgpu/examples';
import {
  bufferPerStep,
  compiledKernels,
  type PeerStep,
  type PlainStep,
  pooled,
  prebuilt,
  readBuffer,
  type Slot,
  type StepPlan,
} from './gpu-plan.js';
import { type PolPlanStep, polPlanStep } from './gpu-pol-plan.js';

// The example's pieces that the tfjs sections run on models of their own, re-exported from here so
// that the example is imported in one place.
export { destroyArenas, GpuKernels, type GpuModel, type ModelArenas, modelArenas, trainStep };

/** The example's settings: its data and weights come from this seed, its SGD uses this rate. */
export const placement = { seed: 1, hidden: 16 } as const;
export const lr = 0.1;

type KernelName = Parameters<GpuKernels['dispatch']>[0];
type Bound = Parameters<GpuKernels['dispatch']>[2];

interface Watched {
  readonly kernel: KernelName;
  readonly bindings: readonly GPUBufferBinding[];
  readonly workgroups: number;
}

/** The example's kernels, noting each dispatch they encode while `watching` is on. */
class WatchedKernels extends GpuKernels {
  readonly seen: Watched[] = [];
  watching = false;

  override dispatch(kernel: KernelName, threads: number, ...arrays: Bound[]): void {
    const pass = this.pass;
    if (!this.watching || pass === undefined) {
      super.dispatch(kernel, threads, ...arrays);
      return;
    }
    let workgroups = 0;
    // A pass that forwards what dispatch encodes and remembers the workgroup count.
    this.pass = {
      setPipeline: (pipeline: GPUComputePipeline) => pass.setPipeline(pipeline),
      setBindGroup: (index: number, group: GPUBindGroup) => pass.setBindGroup(index, group),
      dispatchWorkgroups: (x: number, y?: number, z?: number) => {
        if ((y ?? 1) !== 1 || (z ?? 1) !== 1) throw new Error(`${kernel}: the plan holds one-dimensional dispatches only`);
        workgroups = x;
        pass.dispatchWorkgroups(x);
      },
    } as unknown as GPUComputePassEncoder;
    try {
      super.dispatch(kernel, threads, ...arrays);
    } finally {
      this.pass = pass;
    }
    this.seen.push({ kernel, bindings: arrays, workgroups });
  }
}

/** The example's step on arenas of its own (its parameters' and its step's): the model placed, the step ready to call. */
export interface PolPerceptron {
  readonly arenas: ModelArenas;
  readonly model: GpuModel;
  readonly step: () => void;
}

// The model and one step need about 31 KiB, the parameters under 1 KiB.
const ARENA_BYTES = { params: 1 << 14, arena: 1 << 18 } as const;

/** Place the example's model on new arenas of `device` and return its training step there. */
export function polPerceptron(device: GPUDevice, kernels: GpuKernels, label: string): PolPerceptron {
  const arenas = modelArenas(device, ARENA_BYTES, { label });
  const model = placeModel(arenas, placement);
  const { arena } = arenas;
  const step = () => trainStep(arena, kernels, model.params, model.grads, model.x, model.labels, { loss: model.loss });
  return { arenas, model, step };
}

/** The model's parameters (or, from `model.grads`, their gradients), in a fixed order. */
function paramsOf(model: GpuModel, of: 'params' | 'grads' = 'params'): GPUBufferBinding[] {
  const { layer1, layer2 } = model[of];
  return [layer1.w, layer1.b, layer2.w, layer2.b];
}

/**
 * The step's plan, read off one eager run of the example's step on `device`, and the slots of the
 * parameters. What the step reads and keeps (the data, the labels, the parameters) is a `model`
 * slot, made once by every variant, with the example's initial contents; everything the step
 * produces (activations, gradients, scratch, the loss) is a `step` slot, which the peers make or
 * take from their pool every step, as a framework without an arena does with every tensor a step
 * creates. (Pol keeps the gradients and the loss in the model's region because the example carves
 * them once; that is one of the things an arena lets it do.) The gradients are `zeroed` slots:
 * the example's step zeroes them before its dispatches, and every variant clears them likewise.
 * The parameters are slots of `group` 1: the example keeps them on a buffer of their own, which
 * its layers bind `read` beside writable arrays of the step's buffer (group 0), so a variant that
 * shares buffers between slots (Pol's by hand) must keep the groups apart; the peers give every
 * slot a buffer of its own anyway.
 */
export async function perceptronPlan(device: GPUDevice): Promise<{ plan: StepPlan; paramSlots: number[] }> {
  const kernels = new WatchedKernels(device, { lr });
  const pol = polPerceptron(device, kernels, 'perceptron plan');
  try {
    const m = pol.model;
    const { params, arena } = pol.arenas;
    const groupOf = (b: GPUBufferBinding): number => {
      if (b.buffer === arena.slab.buffer) return 0;
      if (b.buffer === params.slab.buffer) return 1;
      throw new Error('the step bound a buffer outside its two arenas');
    };
    const keyOf = (b: GPUBufferBinding) => `${groupOf(b)}:${b.offset ?? 0}:${b.size ?? 0}`;
    const kept = new Set([m.x, m.labels, ...paramsOf(m)].map(keyOf));
    // The gradients: the example's step zeroes them first (its Shadows), and the backward kernels add into them.
    const zeroed = new Set(paramsOf(m, 'grads').map(keyOf));
    const initial = [
      await readBuffer(device, arena.slab.buffer, 0, arena.offset),
      await readBuffer(device, params.slab.buffer, 0, params.offset),
    ];
    kernels.watching = true;
    pol.step();
    kernels.watching = false;
    const slots: Slot[] = [];
    const index = new Map<string, number>();
    const slotOf = (b: GPUBufferBinding): number => {
      const key = keyOf(b);
      let i = index.get(key);
      if (i === undefined) {
        i = slots.length;
        index.set(key, i);
        const offset = b.offset ?? 0;
        const size = b.size ?? 0;
        const group = groupOf(b);
        const contents = initial[group] as Uint8Array;
        slots.push(
          kept.has(key)
            ? { size, life: 'model', uniform: false, group, initial: contents.slice(offset, offset + size) }
            : { size, life: 'step', uniform: false, group, ...(zeroed.has(key) ? { zeroed: true } : {}) },
        );
      }
      return i;
    };
    const dispatches = kernels.seen.map((w) => ({ kernel: w.kernel, slots: w.bindings.map(slotOf), workgroups: w.workgroups }));
    const paramSlots = paramsOf(m).map((p) => {
      const i = index.get(keyOf(p));
      if (i === undefined) throw new Error('the step never bound a parameter');
      return i;
    });
    await device.queue.onSubmittedWorkDone();
    return { plan: { slots, dispatches }, paramSlots };
  } finally {
    destroyArenas(pol.arenas);
  }
}

/** The example's kernels compiled on the peers' device, by name. */
export function plainKernels(device: GPUDevice): PlainStep['kernels'] {
  return compiledKernels(device, () => new GpuKernels(device, { lr }));
}

/** The variants, by name. */
export type PerceptronVariantName = 'bufferPerStep' | 'pool' | 'floor' | 'floor4' | 'eager' | 'replayed' | 'byHand';

/** Every variant of the step, and how to read each one's loss (for checking that they agree). */
export interface PerceptronVariants {
  readonly bufferPerStep: PeerStep;
  readonly pool: PeerStep;
  readonly floor: PeerStep;
  /** The floor encoding 4 steps in one pass and one submit: `run()` is 4 steps. */
  readonly floor4: PeerStep;
  readonly eager: PolPerceptron;
  readonly replayed: PolPerceptron & { readonly graph: Graph };
  /** Pol's memory without its verbs: the plan's dispatches written by hand on a device arena, bind groups from the cache. */
  readonly byHand: PolPlanStep;
  /** A variant's parameters now (after its last step), concatenated: for checking that all do the same work. */
  readonly params: (variant: PerceptronVariantName) => Promise<Float32Array>;
  /** The plan on the peers' device: for more floors. */
  readonly plain: PlainStep;
  /** Destroy the arenas and graphs (the peers' buffers go with their device). */
  readonly dispose: () => void;
}

/**
 * Make every variant: the peers on `plainDevice` (which Pol never meets), Pol's on `polDevice`,
 * each with its own copy of the model, all starting from the same weights.
 */
export async function perceptronVariants(plainDevice: GPUDevice, polDevice: GPUDevice): Promise<PerceptronVariants> {
  const { plan, paramSlots } = await perceptronPlan(polDevice);
  const plain: PlainStep = { device: plainDevice, kernels: plainKernels(plainDevice), plan, inputs: new Map() };
  const kernels = new GpuKernels(polDevice, { lr });
  const eager = polPerceptron(polDevice, kernels, 'perceptron eager');
  const byHand = polPlanStep(polDevice, plainKernels(polDevice), plan, new Map(), 'perceptron by hand');
  const captured = polPerceptron(polDevice, kernels, 'perceptron replayed');
  let graph: Graph;
  try {
    graph = await capture(polDevice, captured.step, { label: 'perceptron step' });
  } catch (error) {
    for (const a of [eager.arenas, captured.arenas]) destroyArenas(a);
    byHand.destroy();
    throw error;
  }
  const concat = (parts: readonly Uint8Array[]) => {
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) {
      out.set(p, at);
      at += p.length;
    }
    return new Float32Array(out.buffer);
  };
  const variants = {
    bufferPerStep: bufferPerStep(plain),
    pool: pooled(plain),
    floor: prebuilt(plain),
    floor4: prebuilt(plain, { times: 4 }),
    eager,
    replayed: { ...captured, graph },
    byHand,
  };
  return {
    ...variants,
    plain,
    params: async (name) => {
      const pol = name === 'eager' || name === 'replayed' || name === 'byHand';
      let ranges: GPUBufferBinding[];
      if (name === 'eager' || name === 'replayed') ranges = paramsOf(variants[name].model);
      else if (name === 'byHand') ranges = paramSlots.map((i) => byHand.arrays[i] as GPUBufferBinding);
      else ranges = paramSlots.map((i) => ({ buffer: variants[name].model[i] as GPUBuffer, size: (plan.slots[i] as Slot).size }));
      const device = pol ? polDevice : plainDevice;
      return concat(await Promise.all(ranges.map((p) => readBuffer(device, p.buffer, p.offset ?? 0, p.size ?? 0))));
    },
    dispose: () => {
      graph.dispose();
      for (const a of [eager.arenas, captured.arenas]) destroyArenas(a);
      byHand.destroy();
    },
  };
}
