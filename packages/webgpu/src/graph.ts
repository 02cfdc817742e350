/**
 * The graph a capture makes: its recorded commands, replayable with one encoder and one submit,
 * valid while every buffer range it binds still holds what it held when it was recorded.
 *
 * @module
 */

import type { BufferOwner, ReleaseListener } from './buffers.js';
import { type DeviceState, deviceName, type LossListener } from './device.js';
import { DeviceLostError, GraphInvalidError } from './errors.js';
import type { GraphStats, Pin } from './pins.js';
import type { DebugOp, EncoderOp, PassOp } from './recorder.js';

/**
 * A captured step: its recorded commands, replayable with one encoder and one submit.
 *
 * A graph binds the exact buffer ranges the step bound, so it stays valid only while those
 * ranges hold the same arrays: it becomes invalid (and `replay` throws at once, saying why) when
 * an arena it uses retracts or resets below the region it binds, when a slab, `Similar` buffer or
 * buffer of yours that it uses is destroyed or released, or when the device is lost. `dispose`
 * releases it.
 *
 * @example
 * ```ts
 * import { alloc } from '@pol/core';
 * import { bindGroup, capture, deviceArena, download, type Graph, upload } from '@pol/webgpu';
 * const arena = deviceArena(device, 1 << 16);
 * const module = device.createShaderModule({
 *   code: `@group(0) @binding(0) var<storage, read_write> x: array<f32>;
 *   @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3u) {
 *     if (id.x < arrayLength(&x)) { x[id.x] *= 2.0; }
 *   }`,
 * });
 * const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
 * const x = alloc(arena, 'float32', [4]);
 * const double = () => {
 *   const encoder = device.createCommandEncoder();
 *   const pass = encoder.beginComputePass();
 *   pass.setPipeline(pipeline);
 *   pass.setBindGroup(0, bindGroup(device, pipeline.getBindGroupLayout(0), [x]));
 *   pass.dispatchWorkgroups(1);
 *   pass.end();
 *   device.queue.submit([encoder.finish()]);
 * };
 * upload(x, Float32Array.of(1, 2, 3, 4));
 * const graph: Graph = await capture(device, double); // runs once, for real: x is [2, 4, 6, 8]
 * graph.replay(); // [4, 8, 12, 16]
 * upload(x, Float32Array.of(1, 1, 1, 1)); // a new input, written before a replay
 * graph.replay();
 * console.log((await download(x)).data); // Float32Array(4) [ 2, 2, 2, 2 ]
 * graph.dispose();
 * ```
 */
export interface Graph extends Disposable {
  /** The device it replays on. */
  readonly device: GPUDevice;
  /** Its label (from `capture`'s options, or `'graph'`). */
  readonly label: string;
  /** False once the graph is invalid or disposed. */
  readonly valid: boolean;
  /** Why the graph is invalid, or `undefined` while it is valid. */
  readonly invalidReason: string | undefined;
  /** What it holds. */
  readonly stats: GraphStats;
  /**
   * Encode the recorded commands into one command encoder and submit it once. Runs none of the
   * step's JavaScript and creates no buffer and no bind group.
   *
   * @throws {GraphInvalidError} at once when the graph is invalid or disposed (naming why).
   * @throws {DeviceLostError} when the device is lost.
   */
  replay(): void;
  /** Unpin the arenas, forget the recording. Replaying afterwards throws. Idempotent. */
  dispose(): void;
}

/** The graph; `attach` starts its listening, `invalidate` ends it. */
export class GraphImpl implements Graph, ReleaseListener, LossListener {
  readonly stats: GraphStats;
  #ops: readonly EncoderOp[];
  #invalid: string | undefined;
  #lost = false;
  #detach: (() => void)[] = [];
  readonly #encoderDescriptor: GPUCommandEncoderDescriptor;
  readonly #submitList: GPUCommandBuffer[] = [];

  constructor(
    readonly state: DeviceState,
    readonly label: string,
    ops: readonly EncoderOp[],
    stats: GraphStats,
  ) {
    this.#ops = ops;
    this.stats = stats;
    this.#encoderDescriptor = { label: `pol graph '${label}'` };
  }

  get device(): GPUDevice {
    return this.state.device;
  }

  get valid(): boolean {
    return this.#invalid === undefined;
  }

  get invalidReason(): string | undefined {
    return this.#invalid;
  }

  /** Start listening: the arenas' releases, the buffers' owners, the device's loss. */
  attach(pins: readonly Pin[], owners: readonly BufferOwner[]): void {
    for (const { arena, end } of pins) {
      if (end === 0) continue;
      this.#detach.push(
        arena.observe((event) => {
          if (event.offset >= end) return;
          const what = event.kind === 'reset' ? 'was reset' : `retracted to offset ${event.offset}`;
          this.invalidate(
            `${String(arena)} ${what}, below the ${end} bytes of it that the graph binds, which may now hold other arrays`,
          );
        }),
      );
    }
    for (const owner of owners) {
      owner.listeners.add(this);
      this.#detach.push(() => owner.listeners.delete(this));
    }
    this.state.listeners.add(this);
    this.#detach.push(() => this.state.listeners.delete(this));
  }

  invalidate(reason: string): void {
    if (this.#invalid !== undefined) return;
    this.#invalid = reason;
    const detach = this.#detach;
    this.#detach = [];
    for (const f of detach) f();
    this.#ops = [];
  }

  bufferReleased(owner: BufferOwner): void {
    this.invalidate(`${owner.name}, which it uses, is gone: ${owner.released ?? 'released'}`);
  }

  deviceLost(reason: string): void {
    this.#lost = true;
    this.invalidate(`${deviceName(this.device)} was ${reason === 'destroyed' ? 'destroyed' : 'lost'}`);
  }

  replay(): void {
    if (this.#invalid !== undefined) throw this.#refusal(this.#invalid);
    const device = this.device;
    // Through the device's own (instrumented) methods: a replay inside another captured step is
    // recorded there, and checked mode checks it.
    const encoder = device.createCommandEncoder(this.#encoderDescriptor);
    for (const op of this.#ops) {
      switch (op.k) {
        case 'pass': {
          const pass = encoder.beginComputePass(op.descriptor);
          for (const p of op.ops) replayPassOp(pass, p);
          pass.end();
          break;
        }
        case 'copy':
          encoder.copyBufferToBuffer(op.source, op.sourceOffset, op.destination, op.destinationOffset, op.size);
          break;
        case 'clear':
          encoder.clearBuffer(op.buffer, op.offset, op.size);
          break;
        default:
          replayDebugOp(encoder, op);
      }
    }
    const list = this.#submitList;
    list[0] = encoder.finish();
    try {
      device.queue.submit(list);
    } finally {
      list.length = 0;
    }
  }

  dispose(): void {
    this.invalidate(`graph '${this.label}' was disposed`);
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  toString(): string {
    const s = this.stats;
    return `Graph('${this.label}', ${s.dispatches} dispatches, ${s.copies} copies on ${deviceName(this.device)}${this.valid ? '' : ', invalid'})`;
  }

  #refusal(reason: string): Error {
    if (this.#lost) {
      const lost = this.state.lost;
      return new DeviceLostError(
        lost?.reason ?? 'unknown',
        `Cannot replay graph '${this.label}': ${reason}. Request a new device, then make its slabs and arenas and capture again.`,
      );
    }
    return new GraphInvalidError(
      reason,
      `Cannot replay graph '${this.label}': ${reason}. A graph replays against the exact buffer ranges it recorded and never rebinds: ` +
        'capture the step again once its arrays are allocated again (warm up, size the slab, capture), and dispose graphs you no longer replay.',
    );
  }
}

// Messages describe values by their class: name it as users know it.
Object.defineProperty(GraphImpl, 'name', { value: 'Graph' });

function replayPassOp(pass: GPUComputePassEncoder, op: PassOp): void {
  switch (op.k) {
    case 'pipeline':
      pass.setPipeline(op.pipeline);
      break;
    case 'group':
      if (op.offsets === undefined) pass.setBindGroup(op.index, op.group);
      else pass.setBindGroup(op.index, op.group, op.offsets);
      break;
    case 'dispatch':
      pass.dispatchWorkgroups(op.x, op.y, op.z);
      break;
    case 'indirect':
      pass.dispatchWorkgroupsIndirect(op.buffer, op.offset);
      break;
    default:
      replayDebugOp(pass, op);
  }
}

function replayDebugOp(target: GPUDebugCommandsMixin, op: DebugOp): void {
  if (op.k === 'push') target.pushDebugGroup(op.label);
  else if (op.k === 'pop') target.popDebugGroup();
  else target.insertDebugMarker(op.label);
}
