/**
 * The errors `@pol/webgpu` adds to `@pol/core`'s: each extends {@link PolError} and has a stable
 * `code`. Messages name the resource (the device, the slab, the array) and the fix. An operation
 * that throws one of these has changed nothing: no arena, capture or device state is left
 * half-updated, and no GPU buffer it created is left behind.
 *
 * @module
 */

import { CaptureViolation, PolError } from '@pol/core';

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
 * import { DeviceLostError, upload } from '@pol/webgpu';
 * try {
 *   upload(x, data);
 * } catch (e) {
 *   if (e instanceof DeviceLostError) console.log(e.reason); // 'destroyed' or 'unknown'
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
 * import { GpuAllocationError } from '@pol/webgpu';
 * // e.code === 'POL_GPU_ALLOCATION_FAILED', e.cause is what the device threw
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
 * import { ReadbackError } from '@pol/webgpu';
 * // e.code === 'POL_GPU_READBACK_FAILED'
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
 * or the graph binds a device slab whose arena Pol does not know (so it could not be pinned).
 *
 * @example
 * ```ts
 * import { capture, CaptureFailedError } from '@pol/webgpu';
 * try {
 *   await capture(device, step);
 * } catch (e) {
 *   if (e instanceof CaptureFailedError) console.error(e.message);
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
 * import { GraphInvalidError } from '@pol/webgpu';
 * try {
 *   graph.replay();
 * } catch (e) {
 *   if (e instanceof GraphInvalidError) console.log(e.reason);
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
 * import { UsageConflictError } from '@pol/webgpu';
 * // thrown by pass.dispatchWorkgroups(...) on a device with a checked arena
 * ```
 */
export class UsageConflictError extends PolError {
  constructor(message: string) {
    super('POL_GPU_USAGE_CONFLICT', message);
  }
}

/**
 * A {@link CaptureViolation} raised by `@pol/webgpu` while a device records a capture: it has
 * `@pol/core`'s code (`'POL_CAPTURE_VIOLATION'`) and class, and a message that says what was
 * attempted, on which device or array, and what to do instead.
 *
 * @example
 * ```ts
 * import { CaptureViolation } from '@pol/core';
 * // device.createShaderModule(...) inside a captured step throws a CaptureViolation:
 * // "Creating a shader module on device 'main' while it records a capture: ... warm up first"
 * ```
 */
export class GpuCaptureViolation extends CaptureViolation {
  /** What was attempted, such as `'device.createShaderModule'`. */
  readonly attempted: string;

  constructor(attempted: string, message: string) {
    // core's default message explains buffer allocation; this one explains the operation at hand.
    super(attempted, 'a device', message);
    this.attempted = attempted;
  }
}
