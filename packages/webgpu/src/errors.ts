/**
 * The errors `@pol/webgpu` adds to `@pol/core`'s: each extends {@link PolError} and has a stable
 * `code`. Messages name the resource (the device, the slab, the array) and the fix. An operation
 * that throws one of these has changed nothing: no arena, capture or device state is left
 * half-updated, and no GPU buffer it created is left behind.
 *
 * @module
 */

import { PolError } from '@pol/core';

/**
 * A size is past one of the device's limits (`maxBufferSize`, `maxStorageBufferBindingSize`), or
 * an arena's alignment is below the device's `minStorageBufferOffsetAlignment`. `limit` names the
 * limit as `GPUSupportedLimits` spells it.
 *
 * @example
 * ```ts
 * import { deviceSlab, GpuLimitError } from '@pol/webgpu';
 * try {
 *   deviceSlab(device, 2 ** 40);
 * } catch (e) {
 *   if (e instanceof GpuLimitError) console.log(e.limit); // 'maxBufferSize'
 * }
 * ```
 */
export class GpuLimitError extends PolError {
  /** The limit, such as `'maxBufferSize'` or `'minStorageBufferOffsetAlignment'`. */
  readonly limit: string;
  /** What was asked for, in bytes. */
  readonly requested: number;
  /** What the device allows, in bytes. */
  readonly allowed: number;

  constructor(limit: string, requested: number, allowed: number, message: string) {
    super('POL_GPU_LIMIT', message);
    this.limit = limit;
    this.requested = requested;
    this.allowed = allowed;
  }
}

/**
 * The device was lost or destroyed (`device.lost` resolved, or `device.destroy()` was called), so
 * nothing more can run on it. Make a new device and new slabs.
 *
 * @example
 * ```ts
 * import { alloc } from '@pol/core';
 * import { DeviceLostError, deviceArena, upload } from '@pol/webgpu';
 * const otherAdapter = await gpu.requestAdapter(); // gpu: navigator.gpu in a browser
 * if (otherAdapter === null) throw new Error('No WebGPU adapter.');
 * const other = await otherAdapter.requestDevice();
 * const x = alloc(deviceArena(other, 4096), 'float32', [4]);
 * other.destroy();
 * try {
 *   upload(x, Float32Array.of(1, 2, 3, 4));
 * } catch (e) {
 *   if (e instanceof DeviceLostError) console.log(e.code, e.reason); // 'POL_GPU_DEVICE_LOST' 'destroyed'
 * }
 * ```
 */
export class DeviceLostError extends PolError {
  /** `device.lost`'s reason: `'destroyed'` or `'unknown'`. */
  readonly reason: string;

  constructor(reason: string, message: string) {
    super('POL_GPU_DEVICE_LOST', message);
    this.reason = reason;
  }
}

/**
 * `device.createBuffer` failed (it threw, as a browser does for an out-of-memory mapped buffer, or
 * the device reported an out-of-memory error). The cause is attached.
 *
 * @example
 * ```ts
 * import { deviceSlab, GpuAllocationError } from '@pol/webgpu';
 * const otherAdapter = await gpu.requestAdapter(); // gpu: navigator.gpu in a browser
 * if (otherAdapter === null) throw new Error('No WebGPU adapter.');
 * const other = await otherAdapter.requestDevice();
 * other.createBuffer = () => {
 *   throw new RangeError('out of memory'); // as a device out of memory would
 * };
 * try {
 *   deviceSlab(other, 1 << 20);
 * } catch (e) {
 *   if (e instanceof GpuAllocationError) console.log(e.code, (e.cause as Error).message); // 'POL_GPU_ALLOCATION_FAILED' 'out of memory'
 * }
 * other.destroy();
 * ```
 */
export class GpuAllocationError extends PolError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('POL_GPU_ALLOCATION_FAILED', message, options);
  }
}

/**
 * Reading a GPU array back to the host failed (the staging buffer could not be mapped). The
 * cause is attached; a lost device is reported as {@link DeviceLostError} instead.
 *
 * @example
 * ```ts
 * import { alloc } from '@pol/core';
 * import { DeviceLostError, deviceArena, download, ReadbackError } from '@pol/webgpu';
 * const y = alloc(deviceArena(device, 4096), 'float32', [4]);
 * try {
 *   console.log((await download(y)).data); // Float32Array(4) [ 0, 0, 0, 0 ]
 * } catch (e) {
 *   // The mapping was refused, or the device went away during the read: the data is not coming.
 *   if (!(e instanceof ReadbackError || e instanceof DeviceLostError)) throw e;
 * }
 * ```
 */
export class ReadbackError extends PolError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('POL_GPU_READBACK_FAILED', message, options);
  }
}

/**
 * A capture could not produce a graph: the device reported a validation or out-of-memory error
 * for the captured step (the device's message is in this message), the step submitted no work,
 * or it uses a buffer that is gone, or one made before Pol met the device (which a graph could
 * not watch).
 *
 * @example
 * ```ts
 * import { alloc } from '@pol/core';
 * import { CaptureFailedError, capture, deviceArena } from '@pol/webgpu';
 * const x = alloc(deviceArena(device, 4096), 'float32', [4]);
 * try {
 *   await capture(device, () => {
 *     const encoder = device.createCommandEncoder();
 *     encoder.clearBuffer(x.buffer, 2, 4); // offsets must be multiples of 4: a validation error
 *     device.queue.submit([encoder.finish()]);
 *   });
 * } catch (e) {
 *   if (e instanceof CaptureFailedError) console.log(e.code); // 'POL_GPU_CAPTURE_FAILED'
 * }
 * ```
 */
export class CaptureFailedError extends PolError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('POL_GPU_CAPTURE_FAILED', message, options);
  }
}

/**
 * A graph was replayed after it became invalid: it was disposed, an arena it uses retracted or
 * reset below the region the graph binds, a slab or `Similar` buffer it binds was released, or
 * its device was lost. `reason` says which, in words.
 *
 * @example
 * ```ts
 * import { mark, retract } from '@pol/arena';
 * import { alloc } from '@pol/core';
 * import { bindGroup, capture, deviceArena, GraphInvalidError } from '@pol/webgpu';
 * const arena = deviceArena(device, 4096);
 * const module = device.createShaderModule({
 *   code: `@group(0) @binding(0) var<storage, read_write> x: array<f32>;
 *   @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3u) {
 *     if (id.x < arrayLength(&x)) { x[id.x] *= 2.0; }
 *   }`,
 * });
 * const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
 * const start = mark(arena);
 * const x = alloc(arena, 'float32', [4]);
 * const graph = await capture(device, () => {
 *   const encoder = device.createCommandEncoder();
 *   const pass = encoder.beginComputePass();
 *   pass.setPipeline(pipeline);
 *   pass.setBindGroup(0, bindGroup(device, pipeline.getBindGroupLayout(0), [x]));
 *   pass.dispatchWorkgroups(1);
 *   pass.end();
 *   device.queue.submit([encoder.finish()]);
 * });
 * retract(arena, start); // x's bytes are released: replaying would write to whatever is carved there next
 * try {
 *   graph.replay();
 * } catch (e) {
 *   if (e instanceof GraphInvalidError) console.log(e.code, graph.valid); // 'POL_GPU_GRAPH_INVALID' false
 * }
 * ```
 */
export class GraphInvalidError extends PolError {
  /** Why the graph is invalid. */
  readonly reason: string;

  constructor(reason: string, message: string) {
    super('POL_GPU_GRAPH_INVALID', message);
    this.reason = reason;
  }
}

/**
 * Checked mode found a dispatch that WebGPU would reject: one buffer bound both as writable
 * `storage` and as read-only (`read-only-storage` or `uniform`), or two overlapping writable
 * ranges. WebGPU tracks usage per whole buffer, so two disjoint ranges of one slab conflict when
 * one of them is read-only. The message names both bindings.
 *
 * @example
 * ```ts
 * import { alloc } from '@pol/core';
 * import { deviceArena, UsageConflictError } from '@pol/webgpu';
 * const arena = deviceArena(device, 4096, { checked: true }); // before the module and pipeline
 * const module = device.createShaderModule({
 *   code: `@group(0) @binding(0) var<storage, read> src: array<f32>;
 *   @group(0) @binding(1) var<storage, read_write> dst: array<f32>;
 *   @compute @workgroup_size(1) fn main() { dst[0] = src[0]; }`,
 * });
 * const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
 * const src = alloc(arena, 'float32', [4]);
 * const dst = alloc(arena, 'float32', [4]); // another range of the same GPUBuffer
 * const encoder = device.createCommandEncoder();
 * const pass = encoder.beginComputePass();
 * pass.setPipeline(pipeline);
 * const entries = [src, dst].map((resource, binding) => ({ binding, resource }));
 * pass.setBindGroup(0, device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries }));
 * try {
 *   pass.dispatchWorkgroups(1); // one buffer, read-only and writable in one dispatch
 * } catch (e) {
 *   if (e instanceof UsageConflictError) console.log(e.code); // 'POL_GPU_USAGE_CONFLICT'
 * }
 * pass.end();
 * ```
 */
export class UsageConflictError extends PolError {
  constructor(message: string) {
    super('POL_GPU_USAGE_CONFLICT', message);
  }
}

/**
 * Placing a step's arrays on slabs failed, or a placed arena was asked for what its placement
 * does not cover: the warm-up step produced a validation error, bound arrays whose binding types
 * Pol could not read, or was asynchronous; or a step carved more arrays than its warm-up did, or
 * a larger one. Nothing was created or carved.
 *
 * @example
 * ```ts
 * import { alloc } from '@pol/core';
 * import { PlacementError, placedArena, planPlacement } from '@pol/webgpu';
 * const placement = await planPlacement(device, (space) => {
 *   alloc(space, 'float32', [4]);
 * });
 * const arena = placedArena(device, placement);
 * alloc(arena, 'float32', [4]); // the warm-up's one carve
 * try {
 *   alloc(arena, 'float32', [4]); // one more than the warm-up made
 * } catch (e) {
 *   if (e instanceof PlacementError) console.log(e.code); // 'POL_GPU_PLACEMENT'
 * }
 * arena.destroy();
 * ```
 */
export class PlacementError extends PolError {
  constructor(message: string) {
    super('POL_GPU_PLACEMENT', message);
  }
}

/** A thrown value's message, for wrapping it in one of these errors. */
export function errorText(x: unknown): string {
  return x instanceof Error ? x.message : String(x);
}
