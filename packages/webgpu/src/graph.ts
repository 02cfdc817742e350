/// <reference lib="esnext.disposable" preserve="true" />
/**
 * The graph a capture makes: its recorded commands, replayable with one encoder and one submit,
 * valid while every buffer range it binds still holds what it held when it was recorded.
 *
 * @module
 */

import { InvalidArgumentError } from '@pol/core';
import { describeValue, readOptions } from '@pol/core/backend';
import type { BufferOwner, ReleaseListener } from './buffers.js';
import { type DeviceState, deviceName, type LossListener } from './device.js';
import { EncodeState, encodeOps } from './encode.js';
import { DeviceLostError, GraphInvalidError } from './errors.js';
import type { GraphStats, Pin } from './pins.js';
import type { EncoderOp } from './recorder.js';

/**
 * Options of {@link Graph.replay}.
 *
 * @example
 * ```ts
 * import { alloc } from '@pol/core';
 * import { capture, deviceArena, download, type ReplayOptions } from '@pol/webgpu';
 * const x = alloc(deviceArena(device, 4096), 'float32', [4]);
 * const module = device.createShaderModule({
 *   code: `@group(0) @binding(0) var<storage, read_write> x: array<f32>;
 *   @compute @workgroup_size(4) fn main(@builtin(global_invocation_id) id: vec3u) { x[id.x] += 1.0; }`,
 * });
 * const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
 * const group = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: x }] });
 * const graph = await capture(device, () => {
 *   const encoder = device.createCommandEncoder();
 *   const pass = encoder.beginComputePass();
 *   pass.setPipeline(pipeline);
 *   pass.setBindGroup(0, group);
 *   pass.dispatchWorkgroups(1);
 *   pass.end();
 *   device.queue.submit([encoder.finish()]);
 * }); // x is 1 everywhere
 * const fourSteps: ReplayOptions = { times: 4 }; // made once, so that the loop allocates nothing
 * graph.replay(fourSteps); // 4 steps, one command buffer, one submit
 * console.log((await download(x)).data); // Float32Array(4) [ 5, 5, 5, 5 ]
 * graph.dispose();
 * ```
 */
export interface ReplayOptions {
  /**
   * Steps to run, all encoded into one command buffer and submitted once (default 1). Right only
   * when no step needs the host between steps: the inputs are produced on the GPU (a simulation
   * step, training on data already on the device), or uploaded once for all of them. Whatever
   * is written before the call is what every one of the steps reads; what is read after it is
   * what the last step wrote.
   */
  readonly times?: number;
}

const replayOptionKeys = ['times'] as const;

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
   * step's JavaScript, creates no buffer and no bind group, and allocates nothing of its own:
   * adjacent compute passes are encoded as one, and pipelines and bind groups already set are
   * not set again. With `{ times: k }`, the k steps go into the same command buffer, one after
   * the other (see {@link ReplayOptions.times} for when that is right).
   *
   * @throws {InvalidArgumentError} for a bad option (`times` not a whole number of at least 1).
   * @throws {GraphInvalidError} at once when the graph is invalid or disposed (naming why).
   * @throws {DeviceLostError} when the device is lost.
   */
  replay(options?: ReplayOptions): void;
  /** Unpin the arenas, forget the recording. Replaying afterwards throws. Idempotent. */
  dispose(): void;
}

/** The graph; `attach` starts its listening, `invalidate` ends it. */
export class GraphImpl implements Graph, ReleaseListener, LossListener {
  // How messages name it: a static getter keeps `instanceof` fast (CONTRIBUTING.md, "Class names").
  static get name(): string {
    return 'Graph';
  }
  readonly stats: GraphStats;
  #ops: readonly EncoderOp[];
  #invalid: string | undefined;
  #lost = false;
  #detach: (() => void)[] = [];
  readonly #encoderDescriptor: GPUCommandEncoderDescriptor;
  readonly #submitList: GPUCommandBuffer[] = [];
  readonly #encodeState = new EncodeState();

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

  replay(options?: ReplayOptions): void {
    const times = options === undefined ? 1 : readTimes(options);
    if (this.#invalid !== undefined) throw this.#refusal(this.#invalid);
    const device = this.device;
    // Through the device's own (instrumented) methods: a replay inside another captured step is
    // recorded there, and checked mode checks it.
    const encoder = device.createCommandEncoder(this.#encoderDescriptor);
    encodeOps(encoder, this.#ops, times, this.#encodeState);
    // One list for every replay, its element overwritten (shrinking it would reallocate it).
    const list = this.#submitList;
    list[0] = encoder.finish();
    device.queue.submit(list);
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

function readTimes(options: ReplayOptions): number {
  const { times } = readOptions('graph.replay(options)', options, replayOptionKeys);
  if (times === undefined) return 1;
  if (typeof times !== 'number' || !Number.isSafeInteger(times) || times < 1) {
    throw new InvalidArgumentError(
      `graph.replay({ times }) needs a whole number of steps, at least 1, got ${describeValue(times)}. ` +
        'Pass { times: 4 } to run the step 4 times in one submit, or leave the option out for one step.',
    );
  }
  return times;
}
