/**
 * A step plan (`StepPlan`) run on Pol, as a user of Pol writes a step: the model's arrays carved
 * once from a device arena per slot group (the perceptron's parameters apart, as its example keeps
 * them), the per-step inputs (uniforms) once from a uniform arena, the step's own arrays carved per
 * step in a frame (`scratchspace`) of group 0's arena, every bind group from Pol's cache
 * (`bindGroup`), inputs written with `upload`, zeroed slots cleared in the step's encoder. The same
 * plan runs on the peers (`gpu-plan.ts`).
 */
import type { Arena } from '@pol/arena';
import { alloc, scratchspace } from '@pol/core';
import { bindGroup, deviceArena, type GpuArray, upload, uploadBatch } from '@pol/webgpu';
import { type PlainKernel, type PlannedDispatch, type Slot, type StepPlan, zeroedSlots } from './gpu-plan.js';

const UNIFORM = 0x40;

/** The plan on Pol: model arrays and uniforms carved once, the step's arrays per step in a frame. */
export interface PolPlanStep {
  /** Group 0's arena: its model slots, and the step's frame. */
  readonly arena: Arena<'gpu'>;
  /** An arena per slot group, `arena` first. */
  readonly arenas: readonly Arena<'gpu'>[];
  readonly uniforms: Arena<'gpu'>;
  /** The arrays of the model and input slots, by slot (undefined for step slots). */
  readonly arrays: readonly (GpuArray<'float32'> | undefined)[];
  /** Upload every input slot's host data, one `upload` each. */
  readonly writeInputs: () => void;
  /** The same through one `uploadBatch`: the data copied into its host copy, one flush. */
  readonly writeInputsBatched: () => void;
  /** One eager step: carve the step's arrays in a frame, bind through the cache, encode, submit. */
  readonly step: () => void;
  /** Destroy every slab. */
  readonly destroy: () => void;
}

/** Run `plan` on Pol, on arenas of `device`, with the kernels compiled there. */
export function polPlanStep(
  device: GPUDevice,
  kernels: ReadonlyMap<string, PlainKernel>,
  plan: StepPlan,
  inputs: ReadonlyMap<number, Float32Array>,
  label: string,
): PolPlanStep {
  let inputBytes = 0;
  const groupBytes: number[] = [0]; // storage bytes per group: its model slots, and for group 0 the step's too
  const { minStorageBufferOffsetAlignment, minUniformBufferOffsetAlignment } = device.limits;
  const alignment = Math.max(256, minStorageBufferOffsetAlignment, minUniformBufferOffsetAlignment);
  const align = (n: number) => Math.ceil(n / alignment) * alignment;
  for (const slot of plan.slots) {
    const group = slot.group ?? 0;
    if (slot.life === 'input') inputBytes += align(slot.size);
    else if (slot.life === 'step' && group !== 0) throw new Error('a plan step carves its step slots from group 0 only');
    else groupBytes[group] = (groupBytes[group] ?? 0) + align(slot.size);
  }
  const arenas: Arena<'gpu'>[] = [];
  const uniforms = deviceArena(device, Math.max(256, inputBytes), { label: `${label} uniforms`, usage: UNIFORM });
  const destroy = () => {
    for (const a of arenas) a.slab.destroy();
    uniforms.slab.destroy();
  };
  try {
    for (let g = 0; g < groupBytes.length; g++) {
      arenas.push(deviceArena(device, Math.max(256, groupBytes[g] ?? 0), { label: g === 0 ? label : `${label} group ${g}` }));
    }
  } catch (error) {
    destroy();
    throw error;
  }
  const arena = arenas[0] as Arena<'gpu'>;
  const arrays: (GpuArray<'float32'> | undefined)[] = plan.slots.map((slot) => {
    if (slot.life === 'step') return undefined;
    const a = alloc(slot.life === 'input' ? uniforms : (arenas[slot.group ?? 0] as Arena<'gpu'>), 'float32', slot.size / 4);
    if (slot.initial !== undefined) upload(a, new Float32Array(slot.initial.buffer, slot.initial.byteOffset, slot.size / 4));
    return a;
  });
  const resolved = plan.dispatches.map((d) => {
    const k = kernels.get(d.kernel);
    if (k === undefined) throw new Error(`no kernel '${d.kernel}'`);
    return k;
  });
  const bindings = plan.dispatches.map((d) => new Array<GpuArray<'float32'>>(d.slots.length));
  const current = [...arrays];
  const stepSlots = plan.slots.map((s, i) => (s.life === 'step' ? i : -1)).filter((i) => i >= 0);
  // Each step array's dims, made once: the same dims array every step is what keeps a carve free of garbage.
  const stepDims = stepSlots.map((i) => Object.freeze([(plan.slots[i] as Slot).size / 4]));
  const inputSlots = plan.slots.map((s, i) => (s.life === 'input' ? i : -1)).filter((i) => i >= 0);
  const inputData = inputSlots.map((i) => inputs.get(i) as Float32Array);
  const list: GPUCommandBuffer[] = [];
  const zeroed = zeroedSlots(plan);
  const step = () => {
    scratchspace(arena, (frame) => {
      for (let k = 0; k < stepSlots.length; k++) {
        const i = stepSlots[k] as number;
        current[i] = alloc(frame, 'float32', stepDims[k] as readonly number[]);
      }
      const encoder = device.createCommandEncoder();
      for (let z = 0; z < zeroed.length; z++) {
        const a = current[zeroed[z] as number] as GpuArray<'float32'>;
        encoder.clearBuffer(a.buffer, a.offset, a.size);
      }
      const pass = encoder.beginComputePass();
      let pipeline: GPUComputePipeline | undefined;
      for (let d = 0; d < plan.dispatches.length; d++) {
        const kernel = resolved[d] as PlainKernel;
        const slots = (plan.dispatches[d] as PlannedDispatch).slots;
        const b = bindings[d] as GpuArray<'float32'>[];
        for (let j = 0; j < slots.length; j++) b[j] = current[slots[j] as number] as GpuArray<'float32'>;
        if (kernel.pipeline !== pipeline) {
          pass.setPipeline(kernel.pipeline);
          pipeline = kernel.pipeline;
        }
        pass.setBindGroup(0, bindGroup(device, kernel.layout, b));
        pass.dispatchWorkgroups((plan.dispatches[d] as PlannedDispatch).workgroups);
      }
      pass.end();
      list[0] = encoder.finish();
      device.queue.submit(list);
    });
  };
  const writeInputs = () => {
    for (let k = 0; k < inputSlots.length; k++)
      upload(arrays[inputSlots[k] as number] as GpuArray<'float32'>, inputData[k] as Float32Array);
  };
  const inputArrays = inputSlots.map((i) => arrays[i] as GpuArray<'float32'>);
  const batch = inputArrays.length === 0 ? undefined : uploadBatch(inputArrays);
  const views = inputArrays.map((a) => batch?.data(a) as Float32Array);
  const writeInputsBatched = () => {
    for (let k = 0; k < views.length; k++) (views[k] as Float32Array).set(inputData[k] as Float32Array);
    batch?.flush();
  };
  return { arena, arenas, uniforms, arrays, writeInputs, writeInputsBatched, step, destroy };
}
