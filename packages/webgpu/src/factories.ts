/**
 * Making device slabs and arenas over them: `deviceSlab` and `deviceArena`.
 *
 * @module
 */

import { Arena, type ArenaOptions } from '@pol/arena';
import { InvalidArgumentError } from '@pol/core';
import { closeAfterFailure, describeValue, readOptions } from '@pol/core/backend';
import { setOwner } from './buffers.js';
import { assertAlive, assertDevice, deviceName } from './device.js';
import { errorText, GpuAllocationError } from './errors.js';
import { ALL_USAGES, Usage } from './flags.js';
import { stateOf } from './instrument.js';
import { checkAlignment, checkBufferSize, defaultAlignment } from './limits.js';
import { refuseWhileRecording } from './recorder.js';
import { type DeviceSlab, SlabImpl, slabUsage } from './slab.js';
import { registerStorage } from './storage.js';

/**
 * Options of {@link deviceSlab}.
 *
 * @example
 * ```ts
 * import { deviceSlab, type DeviceSlabOptions } from '@pol/webgpu';
 * const options: DeviceSlabOptions = { label: 'uniforms', usage: GPUBufferUsage.UNIFORM };
 * const slab = deviceSlab(device, 4096, options);
 * console.log((slab.buffer.usage & GPUBufferUsage.UNIFORM) !== 0); // true
 * ```
 */
export interface DeviceSlabOptions {
  /**
   * Extra `GPUBufferUsage` flags on top of STORAGE | COPY_SRC | COPY_DST (UNIFORM, INDIRECT,
   * VERTEX, INDEX, QUERY_RESOLVE). MAP_READ and MAP_WRITE cannot be combined with STORAGE.
   */
  readonly usage?: number;
  /** The buffer's label, shown in Pol's messages and the device's. Default `'pol device slab'`. */
  readonly label?: string;
  /**
   * Data that kernels only read: weights of a model used for inference, constants, lookup tables.
   * Its arrays are written from the host (`upload`, `uploadBatch`), by copies and clears, and
   * bound by kernels as `var<storage, read>` or `var<uniform>`; in checked mode, binding one
   * as writable `storage` in a dispatch is refused with `UsageConflictError`. Keeping such data in
   * a slab of its own is what lets third-party WGSL, which declares its inputs `read`, bind it
   * beside the arrays it writes. Default false. (Weights that a training step updates are
   * written by its optimizer: keep them in an arena of their own without this flag.)
   */
  readonly readOnly?: boolean;
}

/**
 * Options of {@link deviceArena}: the slab's and the arena's.
 *
 * @example
 * ```ts
 * import { type DeviceArenaOptions, deviceArena } from '@pol/webgpu';
 * const options: DeviceArenaOptions = { label: 'activations', checked: true };
 * const arena = deviceArena(device, 1 << 20, options);
 * console.log(arena.checked, arena.alignment >= device.limits.minStorageBufferOffsetAlignment); // true true
 * ```
 */
export interface DeviceArenaOptions extends DeviceSlabOptions {
  /**
   * Where each carve starts: a power of two, at least the device's
   * `minStorageBufferOffsetAlignment`. Default: 256, or that limit if it is larger.
   */
  readonly alignment?: number;
  /** Checked mode (see `@pol/arena`, and this package's usage-scope checks). Default false. */
  readonly checked?: boolean;
}

const slabOptionKeys = ['usage', 'label', 'readOnly'] as const;
const arenaOptionKeys = ['usage', 'label', 'readOnly', 'alignment', 'checked'] as const;

function readSlabOptions(
  call: string,
  o: { readonly usage?: unknown; readonly label?: unknown; readonly readOnly?: unknown },
): { usage: number; label: string; readOnly: boolean } {
  const extra = o.usage ?? 0;
  if (typeof extra !== 'number' || !Number.isInteger(extra) || extra < 0 || extra > ALL_USAGES) {
    throw new InvalidArgumentError(`${call}: usage must be GPUBufferUsage flags (a whole number), got ${describeValue(extra)}.`);
  }
  if ((extra & (Usage.MAP_READ | Usage.MAP_WRITE)) !== 0) {
    throw new InvalidArgumentError(
      `${call}: usage includes MAP_READ or MAP_WRITE, which WebGPU does not allow together with STORAGE. ` +
        'Read arrays back with download() (it maps a staging buffer of its own) and write them with upload().',
    );
  }
  if (o.label !== undefined && typeof o.label !== 'string') {
    throw new InvalidArgumentError(`${call}: label must be a string, got ${describeValue(o.label)}.`);
  }
  if (o.readOnly !== undefined && typeof o.readOnly !== 'boolean') {
    throw new InvalidArgumentError(`${call}: readOnly must be true or false, got ${describeValue(o.readOnly)}.`);
  }
  return { usage: slabUsage | extra, label: o.label ?? 'pol device slab', readOnly: o.readOnly === true };
}

/**
 * Make a device slab: one GPUBuffer of `byteLength` bytes (rounded up to a multiple of 4) with
 * usage STORAGE | COPY_SRC | COPY_DST and any extra `options.usage`, for an arena to carve from.
 * Size it from a warm-up arena's watermark (see the README's capture workflow).
 *
 * The first call also registers the device-slab storage with `@pol/arena`, so `new Arena(slab)`
 * and `carve(slab, …)` recognize slabs.
 *
 * @throws {InvalidArgumentError} for a bad device, size or option.
 * @throws {GpuLimitError} when `byteLength` is past the device's `maxBufferSize`.
 * @throws {DeviceLostError} when the device is lost.
 * @throws {GpuAllocationError} when `device.createBuffer` throws.
 * @throws {CaptureViolation} while the device records a capture.
 * @example
 * ```ts
 * import { Arena } from '@pol/arena';
 * import { alloc } from '@pol/core';
 * import { deviceSlab } from '@pol/webgpu';
 * const arena = new Arena(deviceSlab(device, 1 << 20), { alignment: device.limits.minStorageBufferOffsetAlignment });
 * const x = alloc(arena, 'float32', [256]); // GpuArray<'float32'>
 * ```
 */
export function deviceSlab(device: GPUDevice, byteLength: number, options?: DeviceSlabOptions): DeviceSlab {
  const call = 'deviceSlab(device, byteLength, options)';
  assertDevice(device, call);
  if (typeof byteLength !== 'number' || !Number.isSafeInteger(byteLength) || byteLength < 1) {
    throw new InvalidArgumentError(
      `deviceSlab(device, byteLength) needs a positive whole number of bytes, got ${describeValue(byteLength)}. ` +
        'Size the slab from watermark(arena) after a warm-up pass.',
    );
  }
  const { usage, label, readOnly } = readSlabOptions(call, readOptions(call, options, slabOptionKeys));
  return makeSlab(device, byteLength, usage, label, readOnly);
}

function makeSlab(device: GPUDevice, byteLength: number, usage: number, label: string, readOnly: boolean): SlabImpl {
  const state = stateOf(device);
  assertAlive(state, `make a device slab of ${byteLength} bytes`);
  refuseWhileRecording(
    state,
    `deviceSlab(device, ${byteLength})`,
    "A buffer made now would belong to this one eager run: make device slabs before capture(), sized from a warm-up arena's watermark.",
  );
  const size = Math.ceil(byteLength / 4) * 4;
  checkBufferSize(device, size, `A device slab of ${byteLength} bytes`);
  registerStorage();
  let buffer: GPUBuffer;
  try {
    buffer = device.createBuffer({ size, usage, label });
  } catch (cause) {
    throw new GpuAllocationError(
      `device.createBuffer failed for a device slab of ${size} bytes ('${label}') on ${deviceName(device)}: ${errorText(cause)}. ` +
        'Free GPU memory (destroy unused slabs) or make a smaller slab.',
      { cause },
    );
  }
  const slab = new SlabImpl(state, buffer, size, label, readOnly);
  setOwner(buffer, slab);
  return slab;
}

/**
 * Make a device slab and an arena over it in one call, with the arena's alignment read from the
 * device's limits, and tell Pol about the arena so that `capture` pins the region a graph uses.
 * The arena is an ordinary `Arena<'gpu'>` of `@pol/arena`.
 *
 * @throws everything {@link deviceSlab} throws, and `@pol/arena`'s `InvalidAlignmentError` or
 * {@link GpuLimitError} for an alignment that is not a power of two or is below the device's
 * `minStorageBufferOffsetAlignment`. Nothing is left allocated when it throws.
 * @example
 * ```ts
 * import { watermark } from '@pol/arena';
 * import { alloc, scratchspace } from '@pol/core';
 * import { deviceArena } from '@pol/webgpu';
 * const step = (arena: typeof warm) => {
 *   alloc(arena, 'float32', [1000]); // an output
 *   scratchspace(arena, (frame) => alloc(frame, 'float32', [4000])); // and scratch
 * };
 * const warm = deviceArena(device, 64 << 20); // generous, for the warm-up pass
 * step(warm);
 * const arena = deviceArena(device, watermark(warm), { label: 'step' }); // sized to fit
 * step(arena); // fits exactly
 * console.log(watermark(warm), arena.capacity); // 20096 20096
 * ```
 */
export function deviceArena(device: GPUDevice, byteLength: number, options?: DeviceArenaOptions): Arena<'gpu'> {
  const call = 'deviceArena(device, byteLength, options)';
  assertDevice(device, call);
  const o = readOptions(call, options, arenaOptionKeys);
  const { usage, label, readOnly } = readSlabOptions(call, o);
  if (o.checked !== undefined && typeof o.checked !== 'boolean') {
    throw new InvalidArgumentError(`${call}: checked must be true or false, got ${describeValue(o.checked)}.`);
  }
  const alignment = o.alignment ?? defaultAlignment(device);
  // Checked here, before the slab exists, so that a refused alignment creates nothing.
  checkAlignment(device, usage, alignment, call, 'Leave the alignment out for the default, or pass a larger power of two.');
  if (typeof byteLength !== 'number' || !Number.isSafeInteger(byteLength) || byteLength < 1) {
    throw new InvalidArgumentError(
      `deviceArena(device, byteLength) needs a positive whole number of bytes, got ${describeValue(byteLength)}. ` +
        'Size the slab from watermark(arena) after a warm-up pass.',
    );
  }
  const arenaOptions: ArenaOptions = { alignment: alignment as number, checked: o.checked === true };
  const slab = makeSlab(device, byteLength, usage, label, readOnly);
  let arena: Arena<'gpu'>;
  try {
    arena = new Arena(slab, arenaOptions);
  } catch (error) {
    closeAfterFailure({ close: () => slab.destroy() }, error);
    throw error;
  }
  return arena;
}
