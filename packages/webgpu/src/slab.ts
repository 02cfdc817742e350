/**
 * Device slabs: one GPUBuffer that an arena carves `GpuArray`s from.
 *
 * @module
 */

import {
  Arena,
  type ArenaOptions,
  type ArrayLife,
  defineStorage,
  InvalidAlignmentError,
  POISON_BYTE,
  type SlabStorage,
} from '@pol/arena';
import { byteLength, type DType, describeValue, InvalidArgumentError } from '@pol/core';
import { registerArena } from './arenas.js';
import {
  type BufferOwner,
  bindingSize,
  checkBindingSize,
  checkBufferSize,
  errorText,
  type GpuArray,
  makeCheckedGpuArray,
  makeGpuArray,
  type ReleaseListener,
  setOwner,
} from './array.js';
import { enableChecks } from './checked.js';
import { assertAlive, assertDevice, type DeviceState, deviceName, stateOf, Usage, whenIdle } from './device.js';
import { GpuAllocationError, GpuCaptureViolation, GpuLimitError } from './errors.js';

declare module '@pol/arena' {
  interface SlabTypes {
    /** GPU memory: a device slab made by `deviceSlab` (`@pol/webgpu`). */
    gpu: DeviceSlab;
  }
}

/**
 * One GPUBuffer on a device, for an arena to carve {@link GpuArray}s from:
 * `new Arena(deviceSlab(device, bytes))` is an `Arena<'gpu'>`. Make it with {@link deviceSlab}.
 *
 * @example
 * ```ts
 * import { Arena } from '@pol/arena';
 * import { type DeviceSlab, deviceSlab } from '@pol/webgpu';
 * const slab: DeviceSlab = deviceSlab(device, 1 << 20, { label: 'activations' });
 * const arena = new Arena(slab); // Arena<'gpu'>
 * console.log(slab.buffer.size, slab.label); // 1048576 'activations'
 * slab.destroy();
 * console.log(slab.destroyed); // true
 * ```
 */
export interface DeviceSlab {
  /** The device the buffer belongs to. */
  readonly device: GPUDevice;
  /** The buffer: usage STORAGE | COPY_SRC | COPY_DST, plus any extra usage asked for. */
  readonly buffer: GPUBuffer;
  /** The slab's size in bytes (what was asked, rounded up to a multiple of 4): the arena's capacity. */
  readonly byteLength: number;
  /** The buffer's label. */
  readonly label: string;
  /** Whether {@link DeviceSlab.destroy} was called. */
  readonly destroyed: boolean;
  /**
   * Destroy the buffer once the work submitted so far is done. Arrays carved from it are dead at
   * once (uploads, downloads and carves refuse them), and graphs that bind it become invalid.
   * Destroying a destroyed slab does nothing.
   */
  destroy(): void;
}

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

/**
 * The usage every device slab has: bindable as storage, and a copy source and destination
 * (`GPUBufferUsage.STORAGE | COPY_SRC | COPY_DST`).
 *
 * @example
 * ```ts
 * import { deviceSlab, slabUsage } from '@pol/webgpu';
 * console.log(deviceSlab(device, 256).buffer.usage === slabUsage); // true
 * ```
 */
export const slabUsage: number = Usage.STORAGE | Usage.COPY_SRC | Usage.COPY_DST;

class SlabImpl implements DeviceSlab, BufferOwner {
  readonly kind = 'slab';
  readonly listeners = new Set<ReleaseListener>();
  #released: string | undefined;

  constructor(
    readonly state: DeviceState,
    readonly buffer: GPUBuffer,
    readonly byteLength: number,
    readonly label: string,
  ) {}

  get device(): GPUDevice {
    return this.state.device;
  }

  get name(): string {
    return `device slab '${this.label}'`;
  }

  get destroyed(): boolean {
    return this.#released !== undefined;
  }

  get released(): string | undefined {
    return this.#released;
  }

  destroy(): void {
    if (this.#released !== undefined) return;
    this.#released = `${this.name} was destroyed`;
    for (const listener of [...this.listeners]) listener.bufferReleased(this);
    this.listeners.clear();
    const buffer = this.buffer;
    whenIdle(this.state, () => buffer.destroy());
  }

  toString(): string {
    return `DeviceSlab('${this.label}', ${this.byteLength} bytes on ${deviceName(this.device)}${this.destroyed ? ', destroyed' : ''})`;
  }
}

/**
 * Whether `x` is a device slab made by {@link deviceSlab}.
 *
 * @example
 * ```ts
 * import { deviceSlab, isDeviceSlab } from '@pol/webgpu';
 * console.log(isDeviceSlab(deviceSlab(device, 256)), isDeviceSlab(new ArrayBuffer(256))); // true false
 * ```
 */
export function isDeviceSlab(x: unknown): x is DeviceSlab {
  return x instanceof SlabImpl;
}

// Checked arenas poison what they release: the whole range with @pol/arena's integer pattern, then
// each released float array with all bits set, a NaN in float16, float32 and float64 alike.
const POISON_CHUNK = 1 << 20;
const poisons = new Map<number, Uint8Array>();

function poisonChunk(byte: number): Uint8Array {
  let chunk = poisons.get(byte);
  if (chunk === undefined) {
    chunk = new Uint8Array(POISON_CHUNK).fill(byte);
    poisons.set(byte, chunk);
  }
  return chunk;
}

/** The arena storage of device slabs (registered by the first `deviceSlab` call). */
const gpuStorage: SlabStorage<DeviceSlab, 'gpu'> = {
  name: 'GPUBuffer',
  kind: 'gpu',
  residency: 'device',
  matches: isDeviceSlab,
  byteLength: (slab) => slab.byteLength,
  checkSlab(slab) {
    const s = slab as SlabImpl;
    if (s.destroyed) {
      throw new InvalidArgumentError(
        `Cannot make an arena over ${s.name}: it was destroyed. Make a new slab with deviceSlab(device, bytes).`,
      );
    }
    assertAlive(s.state, `make an arena over ${s.name}`);
  },
  checkAlignment(slab, alignment) {
    const s = slab as SlabImpl;
    const limits = s.device.limits;
    const checks: [string, number][] = [['minStorageBufferOffsetAlignment', limits.minStorageBufferOffsetAlignment]];
    if ((s.buffer.usage & Usage.UNIFORM) !== 0) {
      checks.push(['minUniformBufferOffsetAlignment', limits.minUniformBufferOffsetAlignment]);
    }
    for (const [limit, required] of checks) {
      if (alignment < required || alignment % required !== 0) {
        throw new GpuLimitError(
          limit,
          alignment,
          required,
          `An arena over ${s.name} with alignment ${alignment} would start arrays at offsets ${deviceName(s.device)} cannot bind: ` +
            `its ${limit} is ${required}, and every binding offset must be a multiple of it. ` +
            `Make the arena with new Arena(slab, { alignment: ${required} }) (or a larger power of two), or use deviceArena, which reads the limit for you.`,
        );
      }
    }
  },
  reserve: bindingSize,
  carve<D extends DType>(slab: DeviceSlab, offset: number, dtype: D, dims: readonly number[]): GpuArray<D> {
    const bytes = checkCarve(slab as SlabImpl, offset, dtype, dims);
    return makeGpuArray(slab.device, slab.buffer, offset, dtype, dims, bytes);
  },
  carveChecked<D extends DType>(
    slab: DeviceSlab,
    offset: number,
    dtype: D,
    dims: readonly number[],
    life: ArrayLife,
  ): GpuArray<D> {
    const s = slab as SlabImpl;
    const bytes = checkCarve(s, offset, dtype, dims);
    // An arena in checked mode over this device: check every dispatch's bindings from now on.
    enableChecks(s.state);
    return makeCheckedGpuArray(s.device, s.buffer, offset, dtype, dims, bytes, life);
  },
  poison(slab, offset, length, dtype) {
    const s = slab as SlabImpl;
    if (s.destroyed || s.state.lost !== undefined) return;
    // WebGPU writes whole 4-byte words; released ranges start on the arena's alignment.
    const start = Math.ceil(offset / 4) * 4;
    const end = Math.min(s.byteLength, Math.ceil((offset + length) / 4) * 4);
    if (end <= start) return;
    const pattern = poisonChunk(dtype === undefined ? POISON_BYTE : 0xff);
    // The queue's own writeBuffer: while a capture records, the instance's is refused, but a frame
    // closing inside the captured step still poisons what it released (in the eager run only).
    const queue = s.device.queue;
    const write = Object.getPrototypeOf(queue).writeBuffer as GPUQueue['writeBuffer'];
    for (let at = start; at < end; at += POISON_CHUNK) {
      write.call(queue, s.buffer, at, pattern.buffer, 0, Math.min(POISON_CHUNK, end - at));
    }
  },
};

/** Check a carve the arena asks for; its byte length. */
function checkCarve(slab: SlabImpl, offset: number, dtype: DType, dims: readonly number[]): number {
  const shape = `${dtype}[${dims.join(', ')}]`;
  if (slab.destroyed) {
    throw new InvalidArgumentError(`Cannot carve ${shape} from ${slab.name}: it was destroyed. Make a new slab and arena.`);
  }
  assertAlive(slab.state, `carve ${shape} from ${slab.name}`);
  const bytes = byteLength(dtype, dims);
  const size = bindingSize(bytes);
  if (!Number.isSafeInteger(offset) || offset < 0 || offset % 4 !== 0 || offset + size > slab.byteLength) {
    throw new InvalidArgumentError(
      `Cannot carve ${shape} (${size} bytes) at offset ${describeValue(offset)} of ${slab.name} (${slab.byteLength} bytes): ` +
        'the offset must be a non-negative multiple of 4 and the range must fit in the slab.',
    );
  }
  if ((slab.buffer.usage & Usage.STORAGE) !== 0) checkBindingSize(slab.state, size, `${shape} in ${slab.name}`);
  return bytes;
}

let registered = false;

function register(): void {
  if (registered) return;
  registered = true;
  defineStorage(gpuStorage);
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
  assertDevice(device, 'deviceSlab(device, byteLength)');
  if (typeof byteLength !== 'number' || !Number.isSafeInteger(byteLength) || byteLength < 1) {
    throw new InvalidArgumentError(
      `deviceSlab(device, byteLength) needs a positive whole number of bytes, got ${describeValue(byteLength)}. ` +
        'Size the slab from watermark(arena) after a warm-up pass.',
    );
  }
  const { usage, label } = readSlabOptions(options, 'deviceSlab');
  const state = stateOf(device);
  assertAlive(state, `make a device slab of ${byteLength} bytes`);
  if (state.recording !== undefined) {
    throw new GpuCaptureViolation(
      'deviceSlab',
      `deviceSlab(device, ${byteLength}) was called while ${deviceName(device)} records a capture: a buffer created now would belong to this ` +
        "one eager run, not to the graph. Make device slabs (and their arenas) before capture(); size them from a warm-up arena's watermark.",
    );
  }
  const size = Math.ceil(byteLength / 4) * 4;
  checkBufferSize(state, size, `A device slab of ${byteLength} bytes`);
  register();
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
  const slab = new SlabImpl(state, buffer, size, label);
  setOwner(buffer, slab);
  return slab;
}

const slabOptionKeys = new Set(['usage', 'label']);
const arenaOptionKeys = new Set(['usage', 'label', 'alignment', 'checked']);

function readSlabOptions(options: unknown, what: 'deviceSlab' | 'deviceArena'): { usage: number; label: string } {
  if (options === undefined) return { usage: slabUsage, label: 'pol device slab' };
  if (typeof options !== 'object' || options === null) {
    throw new InvalidArgumentError(
      `${what}: options must be an object such as { label: 'activations' }, got ${describeValue(options)}.`,
    );
  }
  const known = what === 'deviceSlab' ? slabOptionKeys : arenaOptionKeys;
  for (const key of Object.keys(options)) {
    if (!known.has(key)) {
      throw new InvalidArgumentError(`${what}: unknown option '${key}'. The options are ${[...known].join(', ')}.`);
    }
  }
  const o = options as { usage?: unknown; label?: unknown };
  const extra = o.usage ?? 0;
  if (typeof extra !== 'number' || !Number.isInteger(extra) || extra < 0 || extra > 0x3ff) {
    throw new InvalidArgumentError(`${what}: usage must be GPUBufferUsage flags (a whole number), got ${describeValue(extra)}.`);
  }
  if ((extra & (Usage.MAP_READ | Usage.MAP_WRITE)) !== 0) {
    throw new InvalidArgumentError(
      `${what}: usage includes MAP_READ or MAP_WRITE, which WebGPU does not allow together with STORAGE. ` +
        'Read arrays back with download() (it maps a staging buffer of its own) and write them with upload().',
    );
  }
  if (o.label !== undefined && typeof o.label !== 'string') {
    throw new InvalidArgumentError(`${what}: label must be a string, got ${describeValue(o.label)}.`);
  }
  return { usage: slabUsage | extra, label: o.label ?? 'pol device slab' };
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
  assertDevice(device, 'deviceArena(device, byteLength)');
  const { usage, label } = readSlabOptions(options, 'deviceArena');
  const o = (options ?? {}) as { alignment?: unknown; checked?: unknown };
  if (o.checked !== undefined && typeof o.checked !== 'boolean') {
    throw new InvalidArgumentError(`deviceArena: checked must be true or false, got ${describeValue(o.checked)}.`);
  }
  const limit = device.limits.minStorageBufferOffsetAlignment;
  const alignment = o.alignment ?? Math.max(256, limit);
  // Checked here, before the slab exists, so that a refused alignment creates nothing.
  if (typeof alignment !== 'number' || !Number.isSafeInteger(alignment) || alignment < 1 || Math.log2(alignment) % 1 !== 0) {
    throw new InvalidAlignmentError(
      `deviceArena: alignment must be a power of two, at least ${deviceName(device)}'s minStorageBufferOffsetAlignment (${limit}), got ${describeValue(alignment)}.`,
    );
  }
  if (alignment < limit) {
    throw new GpuLimitError(
      'minStorageBufferOffsetAlignment',
      alignment,
      limit,
      `deviceArena: alignment ${alignment} is below ${deviceName(device)}'s minStorageBufferOffsetAlignment (${limit}), so arrays could not be bound. ` +
        `Leave the alignment out (it defaults to ${Math.max(256, limit)}), or pass a larger power of two.`,
    );
  }
  const arenaOptions: ArenaOptions = { alignment, checked: o.checked === true };
  const slab = deviceSlab(device, byteLength, { usage: usage & ~slabUsage, label });
  let arena: Arena<'gpu'>;
  try {
    arena = new Arena(slab, arenaOptions);
  } catch (error) {
    (slab as SlabImpl).destroy();
    throw error;
  }
  registerArena(arena);
  return arena;
}
