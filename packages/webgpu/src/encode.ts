/**
 * Encoding a recorded step again, as cheaply as hand-written code would: what `graph.replay()`
 * does with a recording.
 *
 * - Adjacent compute passes become one pass (in a compute pass every dispatch is a usage scope of
 *   its own, and WebGPU orders dispatches and makes their writes visible to the next ones, so one
 *   pass computes what several adjacent ones do). A pass with timestamp writes is never merged.
 * - A `setPipeline` of the pipeline already set, and a `setBindGroup` of the group already at its
 *   index (without dynamic offsets), are left out: they change no state.
 * - Several steps (`times`) are encoded one after the other into the same encoder, so that the
 *   passes of one step and the next merge too.
 *
 * The loops are indexed and the state lives in arrays made once per graph, so a replay allocates
 * nothing of its own: the encoder, the pass and the command buffer WebGPU returns are all.
 *
 * @module
 */

import type { DebugOp, EncoderOp, PassOp } from './recorder.js';

/** What the encoding of a replay keeps between ops: made once per graph, reused by every replay. */
export class EncodeState {
  pass: GPUComputePassEncoder | undefined;
  pipeline: GPUComputePipeline | undefined;
  /**
   * The bind group set at each index of the open pass, or `undefined` when unknown (none yet,
   * dynamic offsets, null). Cleared by writing `undefined`, never shrunk: an array that shrinks
   * gets a new backing store when it grows again, and a replay would allocate it every pass.
   */
  readonly groups: (GPUBindGroup | undefined)[] = [];

  reset(): void {
    this.pass = undefined;
    this.clearPass();
  }

  /** Forget the pipeline and bind groups, as a new pass starts without any. */
  clearPass(): void {
    this.pipeline = undefined;
    const groups = this.groups;
    for (let i = 0; i < groups.length; i++) groups[i] = undefined;
  }
}

/** Encode `ops`, `times` over, into `encoder` (see the module comment). Leaves `state` reset. */
export function encodeOps(encoder: GPUCommandEncoder, ops: readonly EncoderOp[], times: number, state: EncodeState): void {
  state.reset();
  try {
    for (let t = 0; t < times; t++) {
      for (let i = 0; i < ops.length; i++) {
        const op = ops[i] as EncoderOp;
        if (op.k === 'pass') encodePass(encoder, op.descriptor, op.ops, state);
        else encodeOutsidePass(encoder, op, state);
      }
    }
    state.pass?.end();
  } finally {
    state.reset();
  }
}

function mergeable(descriptor: GPUComputePassDescriptor | undefined): boolean {
  return descriptor === undefined || descriptor.timestampWrites === undefined;
}

function encodePass(
  encoder: GPUCommandEncoder,
  descriptor: GPUComputePassDescriptor | undefined,
  ops: readonly PassOp[],
  state: EncodeState,
): void {
  let pass = state.pass;
  if (pass === undefined || !mergeable(descriptor)) {
    pass?.end();
    pass = encoder.beginComputePass(descriptor);
    state.pass = pass;
    state.clearPass();
  }
  const groups = state.groups;
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i] as PassOp;
    switch (op.k) {
      case 'pipeline':
        if (op.pipeline !== state.pipeline) {
          pass.setPipeline(op.pipeline);
          state.pipeline = op.pipeline;
        }
        break;
      case 'group':
        if (op.offsets !== undefined) {
          pass.setBindGroup(op.index, op.group, op.offsets);
          groups[op.index] = undefined;
        } else if (op.group === null || groups[op.index] !== op.group) {
          pass.setBindGroup(op.index, op.group);
          groups[op.index] = op.group ?? undefined;
        }
        break;
      case 'dispatch':
        pass.dispatchWorkgroups(op.x, op.y, op.z);
        break;
      case 'indirect':
        pass.dispatchWorkgroupsIndirect(op.buffer, op.offset);
        break;
      default:
        encodeDebug(pass, op);
    }
  }
  // A pass with timestamp writes ends here; any other stays open for the next pass to merge into.
  if (!mergeable(descriptor)) {
    pass.end();
    state.pass = undefined;
  }
}

function encodeOutsidePass(encoder: GPUCommandEncoder, op: Exclude<EncoderOp, { k: 'pass' }>, state: EncodeState): void {
  if (state.pass !== undefined) {
    state.pass.end();
    state.pass = undefined;
  }
  switch (op.k) {
    case 'copy':
      encoder.copyBufferToBuffer(op.source, op.sourceOffset, op.destination, op.destinationOffset, op.size);
      break;
    case 'clear':
      encoder.clearBuffer(op.buffer, op.offset, op.size);
      break;
    default:
      encodeDebug(encoder, op);
  }
}

function encodeDebug(target: GPUDebugCommandsMixin, op: DebugOp): void {
  if (op.k === 'push') target.pushDebugGroup(op.label);
  else if (op.k === 'pop') target.popDebugGroup();
  else target.insertDebugMarker(op.label);
}
