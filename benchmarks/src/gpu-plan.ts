/**
 * A GPU step written out in plain WebGPU terms (which kernel, which arrays, how many workgroups),
 * so that the ways of getting buffers and bind groups that a user has without Pol can run the very
 * same dispatches as Pol does:
 *
 * - a new GPUBuffer per array and a new bind group per dispatch, every step;
 * - a size-keyed buffer pool with new bind groups every step (the TensorFlow.js WebGPU backend's
 *   approach);
 * - everything made once, the step reduced to encoding and submitting (the floor: the cheapest
 *   hand-written code doing the same job), with host inputs written one `writeBuffer` per array or
 *   one for all of them, and one step or several per submit.
 */

// WebGPU's flag values (the spec's): nothing here relies on WebGPU's globals.
const STORAGE = 0x80;
const UNIFORM = 0x40;
const COPY_SRC = 0x04;
const COPY_DST = 0x08;

/** What every storage buffer of the peers is made with; uniforms get UNIFORM | COPY_DST. */
export const storageUsage = STORAGE | COPY_SRC | COPY_DST;
export const uniformUsage = UNIFORM | COPY_DST;

/** The WebGPU uniform-offset alignment the batched floor lays its inputs out with (the spec's default limit). */
export const UNIFORM_ALIGNMENT = 256;

/** One array a step binds. */
export interface Slot {
  /** Its binding size in bytes (a multiple of 4). */
  readonly size: number;
  /**
   * How long it lives: `model` across steps (data, weights, gradients, the loss: made once by
   * every variant), `step` within one step (activations, scratch: what the peers make or take from
   * their pool every step), `input` across steps and written from the host before each one
   * (per-step uniforms).
   */
  readonly life: 'model' | 'step' | 'input';
  /** Bound as `uniform` rather than as storage. */
  readonly uniform: boolean;
  /**
   * Which buffer the plan's source keeps it on (0 unless said): slots of different groups must not
   * share a buffer, since the step binds some of them read-only beside writable ones of another
   * group in one dispatch (WebGPU's usage rule is per whole buffer). The peers give every slot a
   * buffer of its own; Pol's plan step makes an arena per group.
   */
  readonly group?: number;
  /** A model slot's contents, written once when the variant makes it. */
  readonly initial?: Uint8Array;
  /**
   * Cleared to zero at the start of every step, before its dispatches: the gradients, which the
   * backward kernels add into (what a framework's `zero_grad()` does; Pol's step zeroes its
   * Shadows).
   */
  readonly zeroed?: boolean;
}

/** One dispatch: the kernel, the slot bound at each binding (0, 1, 2, …), the workgroup count. */
export interface PlannedDispatch {
  readonly kernel: string;
  readonly slots: readonly number[];
  readonly workgroups: number;
}

/** A step: its arrays and its dispatches, in order, in one compute pass. */
export interface StepPlan {
  readonly slots: readonly Slot[];
  readonly dispatches: readonly PlannedDispatch[];
}

/** A compiled kernel on the peers' device. */
export interface PlainKernel {
  readonly pipeline: GPUComputePipeline;
  readonly layout: GPUBindGroupLayout;
}

/**
 * The host data of the input slots, by slot index: the section rewrites these arrays before each
 * step, and every variant writes them to the device before encoding it.
 */
export type Inputs = ReadonlyMap<number, Float32Array>;

/** A peer, ready to run: `run()` is one call (one step, or `times` steps per submit for the floor). */
export interface PeerStep {
  readonly run: () => void;
  /** The buffers of the model slots, by slot index (for reading results back). */
  readonly model: readonly (GPUBuffer | undefined)[];
}

/** Everything a peer needs: the device, the compiled kernels by name, the plan, the inputs. */
export interface PlainStep {
  readonly device: GPUDevice;
  readonly kernels: ReadonlyMap<string, PlainKernel>;
  readonly plan: StepPlan;
  readonly inputs: Inputs;
}

function usageOf(slot: Slot): number {
  return slot.uniform ? uniformUsage : storageUsage;
}

/** The indices of the slots every step zeroes first. */
export function zeroedSlots(plan: StepPlan): number[] {
  return plan.slots.map((slot, i) => (slot.zeroed === true ? i : -1)).filter((i) => i >= 0);
}

function kernelsOf(s: PlainStep): PlainKernel[] {
  return s.plan.dispatches.map((d) => {
    const k = s.kernels.get(d.kernel);
    if (k === undefined) throw new Error(`no compiled kernel '${d.kernel}' on the peers' device`);
    return k;
  });
}

/** A buffer per model slot, with its initial contents (undefined for the other slots). */
function modelBuffers(s: PlainStep): (GPUBuffer | undefined)[] {
  return s.plan.slots.map((slot) => {
    if (slot.life !== 'model') return undefined;
    const buffer = s.device.createBuffer({ size: slot.size, usage: usageOf(slot) });
    if (slot.initial !== undefined) write(s.device.queue, buffer, 0, slot.initial);
    return buffer;
  });
}

/**
 * `queue.writeBuffer` of a whole host array, in the form Dawn's Node binding takes fastest: the
 * ArrayBuffer and a byte range. Handed the TypedArray itself, the same write costs about 2.5× as
 * much there (measured: ~4.5 µs against ~1.8 µs a 16-byte write), and a floor must be the cheapest
 * code for its job; Pol's `upload` and `uploadBatch` write this way too.
 */
function write(queue: GPUQueue, buffer: GPUBuffer, offset: number, data: ArrayBufferView): void {
  queue.writeBuffer(buffer, offset, data.buffer, data.byteOffset, data.byteLength);
}

function inputOf(s: PlainStep, slot: number): Float32Array {
  const data = s.inputs.get(slot);
  if (data === undefined) throw new Error(`input slot ${slot} has no host data`);
  return data;
}

/**
 * Encode the dispatches into one compute pass, `times` over, and submit once. The pipeline is set
 * only when it changes, as careful hand-written code does. A plan with zeroed slots clears them
 * (`buffers[i]`, whole) before each step's dispatches, which ends the pass there: clears are
 * encoder commands, not pass commands.
 */
function encode(
  device: GPUDevice,
  kernels: readonly PlainKernel[],
  plan: StepPlan,
  group: (d: number) => GPUBindGroup,
  list: GPUCommandBuffer[],
  times: number,
  zeroed: readonly number[],
  buffers: readonly (GPUBuffer | undefined)[],
): void {
  const encoder = device.createCommandEncoder();
  let pass: GPUComputePassEncoder | undefined;
  const dispatches = plan.dispatches;
  let current: GPUComputePipeline | undefined;
  for (let t = 0; t < times; t++) {
    if (pass === undefined || zeroed.length > 0) {
      pass?.end();
      for (let z = 0; z < zeroed.length; z++) encoder.clearBuffer(buffers[zeroed[z] as number] as GPUBuffer);
      pass = encoder.beginComputePass();
      current = undefined;
    }
    for (let d = 0; d < dispatches.length; d++) {
      const pipeline = (kernels[d] as PlainKernel).pipeline;
      if (pipeline !== current) {
        pass.setPipeline(pipeline);
        current = pipeline;
      }
      pass.setBindGroup(0, group(d));
      pass.dispatchWorkgroups((dispatches[d] as PlannedDispatch).workgroups);
    }
  }
  pass?.end();
  list[0] = encoder.finish();
  device.queue.submit(list);
}

/** A bind group over whole buffers, made now. */
function freshGroup(
  device: GPUDevice,
  layout: GPUBindGroupLayout,
  slots: readonly number[],
  buffers: readonly (GPUBuffer | undefined)[],
) {
  return device.createBindGroup({
    layout,
    entries: slots.map((slot, binding) => ({ binding, resource: { buffer: buffers[slot] as GPUBuffer } })),
  });
}

/**
 * A peer that gets every step and input array's buffer anew each step, from `acquire`, and hands
 * it to `release` after the submit; bind groups are created per dispatch, every step; inputs are
 * written one `writeBuffer` each.
 */
function perStep(
  s: PlainStep,
  acquire: (size: number, usage: number) => GPUBuffer,
  release: (buffer: GPUBuffer) => void,
): PeerStep {
  const { device, plan } = s;
  const kernels = kernelsOf(s);
  const buffers = modelBuffers(s);
  const list: GPUCommandBuffer[] = [];
  const group = (d: number) => {
    const dispatch = plan.dispatches[d] as PlannedDispatch;
    return freshGroup(device, (kernels[d] as PlainKernel).layout, dispatch.slots, buffers);
  };
  const model = [...buffers];
  const zeroed = zeroedSlots(plan);
  const run = () => {
    for (let i = 0; i < plan.slots.length; i++) {
      const slot = plan.slots[i] as Slot;
      if (slot.life === 'model') continue;
      const buffer = acquire(slot.size, usageOf(slot));
      if (slot.life === 'input') write(device.queue, buffer, 0, inputOf(s, i));
      buffers[i] = buffer;
    }
    encode(device, kernels, plan, group, list, 1, zeroed, buffers);
    for (let i = 0; i < plan.slots.length; i++) if ((plan.slots[i] as Slot).life !== 'model') release(buffers[i] as GPUBuffer);
  };
  return { run, model };
}

/** A new GPUBuffer for every step and input array and a new bind group per dispatch, every step; the buffers destroyed after the submit. */
export function bufferPerStep(s: PlainStep): PeerStep {
  return perStep(
    s,
    (size, usage) => s.device.createBuffer({ size, usage }),
    (buffer) => buffer.destroy(),
  );
}

/**
 * A buffer pool keyed by size and usage, as TensorFlow.js's WebGPU backend keeps one: a step's
 * buffers are taken from the free list of their key (or created) and given back after the
 * submit; bind groups are created per dispatch, every step.
 */
export function pooled(s: PlainStep): PeerStep {
  const free = new Map<string, GPUBuffer[]>();
  const acquire = (size: number, usage: number): GPUBuffer =>
    free.get(`${size}_${usage}`)?.pop() ?? s.device.createBuffer({ size, usage });
  const release = (buffer: GPUBuffer): void => {
    const key = `${buffer.size}_${buffer.usage}`;
    const list = free.get(key);
    if (list === undefined) free.set(key, [buffer]);
    else list.push(buffer);
  };
  return perStep(s, acquire, release);
}

/** Options of {@link prebuilt}. */
export interface PrebuiltOptions {
  /** Write every input with one `writeBuffer` over one buffer holding them all (default: one write per input). */
  readonly batched?: boolean;
  /** Steps encoded per submit, all in one compute pass (default 1). The step function then runs that many steps. */
  readonly times?: number;
}

/**
 * The floor: every buffer and bind group made once; a step writes its inputs and encodes and
 * submits its dispatches, nothing else. Batched, the inputs live in one buffer at offsets aligned
 * for uniforms and are written from one host array with one `writeBuffer`; the section's input
 * arrays are copied into that host array (a copy a real program would avoid by writing there
 * directly, so the floor is if anything a little dear).
 */
export function prebuilt(s: PlainStep, options: PrebuiltOptions = {}): PeerStep {
  const { device, plan } = s;
  const times = options.times ?? 1;
  const kernels = kernelsOf(s);
  const buffers = modelBuffers(s);
  const inputSlots = plan.slots.map((slot, i) => (slot.life === 'input' ? i : -1)).filter((i) => i >= 0);
  const offsets = new Map<number, number>(); // input slot → byte offset in the shared input buffer
  let shared: GPUBuffer | undefined;
  let staging: Float32Array | undefined;
  if (options.batched === true && inputSlots.length > 0) {
    let at = 0;
    for (const i of inputSlots) {
      offsets.set(i, at);
      at += Math.ceil((plan.slots[i] as Slot).size / UNIFORM_ALIGNMENT) * UNIFORM_ALIGNMENT;
    }
    const last = inputSlots[inputSlots.length - 1] as number;
    const bytes = (offsets.get(last) ?? 0) + (plan.slots[last] as Slot).size;
    shared = device.createBuffer({ size: bytes, usage: uniformUsage | storageUsage });
    staging = new Float32Array(bytes / 4);
  }
  for (let i = 0; i < plan.slots.length; i++) {
    const slot = plan.slots[i] as Slot;
    if (slot.life !== 'model' && !offsets.has(i)) buffers[i] = device.createBuffer({ size: slot.size, usage: usageOf(slot) });
  }
  const groups = plan.dispatches.map((d, index) =>
    device.createBindGroup({
      layout: (kernels[index] as PlainKernel).layout,
      entries: d.slots.map((slot, binding) => {
        const offset = offsets.get(slot);
        const resource =
          offset === undefined
            ? { buffer: buffers[slot] as GPUBuffer }
            : { buffer: shared as GPUBuffer, offset, size: (plan.slots[slot] as Slot).size };
        return { binding, resource };
      }),
    }),
  );
  const list: GPUCommandBuffer[] = [];
  const group = (d: number) => groups[d] as GPUBindGroup;
  const queue = device.queue;
  const zeroed = zeroedSlots(plan);
  if (staging !== undefined && shared !== undefined) {
    const host = staging;
    const target = shared;
    const data = inputSlots.map((i) => inputOf(s, i));
    const at = inputSlots.map((i) => (offsets.get(i) ?? 0) / 4);
    const run = () => {
      for (let i = 0; i < data.length; i++) host.set(data[i] as Float32Array, at[i]);
      write(queue, target, 0, host);
      encode(device, kernels, plan, group, list, times, zeroed, buffers);
    };
    return { run, model: buffers };
  }
  const targets = inputSlots.map((i) => buffers[i] as GPUBuffer);
  const data = inputSlots.map((i) => inputOf(s, i));
  const run = () => {
    for (let i = 0; i < targets.length; i++) write(queue, targets[i] as GPUBuffer, 0, data[i] as Float32Array);
    encode(device, kernels, plan, group, list, times, zeroed, buffers);
  };
  return { run, model: buffers };
}

const MAP_READ = 0x01;

/** Read `size` bytes of a buffer back (a staging copy, mapped): for checking what a peer computed. */
export async function readBuffer(device: GPUDevice, buffer: GPUBuffer, offset: number, size: number): Promise<Uint8Array> {
  const staging = device.createBuffer({ size, usage: MAP_READ | COPY_DST });
  try {
    const encoder = device.createCommandEncoder();
    encoder.copyBufferToBuffer(buffer, offset, staging, 0, size);
    device.queue.submit([encoder.finish()]);
    await staging.mapAsync(MAP_READ);
    return new Uint8Array(staging.getMappedRange(0, size).slice(0));
  } finally {
    staging.destroy();
  }
}

/**
 * The kernels `compile` creates on `device`, by label: while it runs, the device's
 * `createComputePipeline` notes each pipeline it returns (its label naming the kernel), and
 * `createBindGroupLayout` each layout of the same label. A kernel whose layout is not seen gets
 * its pipeline's `getBindGroupLayout(0)`, asked once.
 */
export function compiledKernels(device: GPUDevice, compile: () => void): Map<string, PlainKernel> {
  const pipelines = new Map<string, GPUComputePipeline>();
  const layouts = new Map<string, GPUBindGroupLayout>();
  const createComputePipeline = device.createComputePipeline;
  const createBindGroupLayout = device.createBindGroupLayout;
  device.createComputePipeline = function (this: GPUDevice, descriptor: GPUComputePipelineDescriptor) {
    const pipeline = createComputePipeline.call(this, descriptor);
    if (descriptor.label !== undefined) pipelines.set(descriptor.label, pipeline);
    return pipeline;
  };
  device.createBindGroupLayout = function (this: GPUDevice, descriptor: GPUBindGroupLayoutDescriptor) {
    const layout = createBindGroupLayout.call(this, descriptor);
    if (descriptor.label !== undefined) layouts.set(descriptor.label, layout);
    return layout;
  };
  try {
    compile();
  } finally {
    // The counters of gpu-count.ts, if any, sit below these wrappers and stay.
    device.createComputePipeline = createComputePipeline;
    device.createBindGroupLayout = createBindGroupLayout;
  }
  const kernels = new Map<string, PlainKernel>();
  for (const [name, pipeline] of pipelines) {
    kernels.set(name, { pipeline, layout: layouts.get(name) ?? pipeline.getBindGroupLayout(0) });
  }
  return kernels;
}
