/// <reference types="@webgpu/types" preserve="true" />
/**
 * `GpuArray`: a typed range of a GPUBuffer, and the `'gpu'` array family that `Similar` and
 * `capturing` dispatch on.
 *
 * @module
 */

import type { ArrayLife } from '@pol/arena';
import {
  type ArrayFamily,
  byteLength,
  type DType,
  describeValue,
  dtypeInfo,
  familyKey,
  frozenDims,
  InvalidArgumentError,
  type PolArray,
} from '@pol/core';
import { assertAlive, type DeviceState, deviceName, knownState, stateOf, Usage, whenIdle } from './device.js';
import { GpuAllocationError, GpuLimitError } from './errors.js';

declare module '@pol/core' {
  interface ArrayTypes<D extends DType> {
    /** A range of a GPUBuffer: what a device slab's arena or `Similar(gpuArray)` hands out. */
    gpu: GpuArray<D>;
  }
}

/**
 * A `dims`-shaped `dtype` array in GPU memory: a range of a GPUBuffer. It *is* a
 * `GPUBufferBinding` (`buffer`, `offset`, `size`), so it goes straight into a bind group entry's
 * `resource`. Its bytes are not readable from JavaScript: write them with `upload` and read them
 * with `download`.
 *
 * `size` is the binding size: the byte length rounded up to a multiple of 4, and at least 4
 * (WebGPU requires both of a binding), so a `uint8[3]` array has `byteLength` 3 and `size` 4.
 *
 * @example
 * ```ts
 * import { alloc } from '@pol/core';
 * import { deviceArena, type GpuArray } from '@pol/webgpu';
 * const arena = deviceArena(device, 1 << 16);
 * const y: GpuArray<'float32'> = alloc(arena, 'float32', [64]);
 * const layout = device.createBindGroupLayout({
 *   entries: [{ binding: 0, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'storage' } }],
 * });
 * device.createBindGroup({ layout, entries: [{ binding: 0, resource: y }] }); // y is a GPUBufferBinding
 * console.log(y.offset, y.size, y.buffer === arena.slab.buffer); // 0 256 true
 * ```
 */
export interface GpuArray<D extends DType = DType> extends PolArray<D>, GPUBufferBinding {
  /** The buffer holding the array: the device slab's, or its own for a `Similar` array. */
  readonly buffer: GPUBuffer;
  /** Where the array starts in `buffer`, in bytes (a multiple of the arena's alignment). */
  readonly offset: number;
  /** The binding size in bytes: `byteLength` rounded up to a multiple of 4, at least 4. */
  readonly size: number;
  /** The bytes the elements take: element count × element size. */
  readonly byteLength: number;
  /** The number of elements, `prod(dims)`. */
  readonly length: number;
  /** The device the buffer belongs to. */
  readonly device: GPUDevice;
}

/** Something that must learn when a buffer it uses goes away (a graph). */
export interface ReleaseListener {
  bufferReleased(owner: BufferOwner): void;
}

/** Who owns a GPUBuffer Pol made: a device slab, or one `Similar` allocation. */
export interface BufferOwner {
  readonly kind: 'slab' | 'similar';
  /** The buffer, for messages: `device slab 'acts'`, `a Similar buffer (float32[4])`. */
  readonly name: string;
  /** Why the buffer is gone (destroyed slab, closed frame), or `undefined` while it is alive. */
  readonly released: string | undefined;
  /** Graphs that bind this buffer. */
  readonly listeners: Set<ReleaseListener>;
}

const owners = new WeakMap<GPUBuffer, BufferOwner>();
const bufferPrototypes = new Set<object>();

/** Register who owns a buffer Pol made. */
export function setOwner(buffer: GPUBuffer, owner: BufferOwner): void {
  owners.set(buffer, owner);
  const proto: unknown = Object.getPrototypeOf(buffer);
  if (typeof proto === 'object' && proto !== null) bufferPrototypes.add(proto);
}

/**
 * The GPUBuffer prototypes Pol has seen (the global `GPUBuffer`'s, and those of the buffers it
 * made), where a capture refuses `mapAsync`.
 */
export function knownBufferPrototypes(): object[] {
  const global = (globalThis as { GPUBuffer?: { prototype?: unknown } }).GPUBuffer?.prototype;
  const all = new Set(bufferPrototypes);
  if (typeof global === 'object' && global !== null) all.add(global);
  return [...all];
}

/** The owner of a buffer Pol made, or `undefined` for a buffer made elsewhere. */
export function ownerOf(buffer: GPUBuffer): BufferOwner | undefined {
  return owners.get(buffer);
}

/** `device slab 'acts'`, `a Similar buffer (…)`, `buffer 'label'` or `an unlabeled buffer`. */
export function bufferName(buffer: GPUBuffer): string {
  const owner = owners.get(buffer);
  if (owner !== undefined) return owner.name;
  const label = typeof buffer.label === 'string' ? buffer.label : '';
  return label === '' ? 'an unlabeled buffer' : `buffer '${label}'`;
}

/** Round a byte length up to what WebGPU accepts as a binding or copy size: a multiple of 4, at least 4. */
export function bindingSize(bytes: number): number {
  return Math.max(4, Math.ceil(bytes / 4) * 4);
}

class GpuArrayImpl<D extends DType> implements GpuArray<D> {
  declare readonly [familyKey]: ArrayFamily;
  constructor(
    readonly device: GPUDevice,
    readonly buffer: GPUBuffer,
    readonly offset: number,
    readonly size: number,
    readonly byteLength: number,
    readonly length: number,
    readonly dtype: D,
    readonly dims: readonly number[],
  ) {}

  toString(): string {
    return `GpuArray(${this.dtype}[${this.dims.join(', ')}] at ${this.offset} in ${bufferName(this.buffer)})`;
  }
}

/**
 * A GpuArray carved by a checked arena: reading its `buffer`, `offset` or `size` (which binding
 * it, uploading or downloading does) throws the arena's StaleArrayError once it has died.
 */
class CheckedGpuArrayImpl<D extends DType> implements GpuArray<D> {
  declare readonly [familyKey]: ArrayFamily;
  readonly #buffer: GPUBuffer;
  readonly #offset: number;
  readonly #size: number;
  readonly #life: ArrayLife;

  constructor(
    readonly device: GPUDevice,
    buffer: GPUBuffer,
    offset: number,
    size: number,
    readonly byteLength: number,
    readonly length: number,
    readonly dtype: D,
    readonly dims: readonly number[],
    life: ArrayLife,
  ) {
    this.#buffer = buffer;
    this.#offset = offset;
    this.#size = size;
    this.#life = life;
  }

  get buffer(): GPUBuffer {
    this.#life.assertAlive();
    return this.#buffer;
  }

  get offset(): number {
    this.#life.assertAlive();
    return this.#offset;
  }

  get size(): number {
    this.#life.assertAlive();
    return this.#size;
  }

  /** The buffer, without the liveness check: for reading metadata (its usage), never for binding. */
  static rawBuffer(array: CheckedGpuArrayImpl<DType>): GPUBuffer {
    return array.#buffer;
  }

  toString(): string {
    return `GpuArray(${this.dtype}[${this.dims.join(', ')}] at ${this.#offset} in ${bufferName(this.#buffer)}${this.#life.alive ? '' : ', stale'})`;
  }
}

/** Make a checked GpuArray (see CheckedGpuArrayImpl). */
export function makeCheckedGpuArray<D extends DType>(
  device: GPUDevice,
  buffer: GPUBuffer,
  offset: number,
  dtype: D,
  dims: readonly number[],
  bytes: number,
  life: ArrayLife,
): GpuArray<D> {
  const frozen = frozenDims(dims);
  const length = bytes / dtypeInfo(dtype).byteSize;
  return new CheckedGpuArrayImpl(device, buffer, offset, bindingSize(bytes), bytes, length, dtype, frozen, life);
}

/** Make a GpuArray over a range already validated by the caller (a carve, a Similar buffer). */
export function makeGpuArray<D extends DType>(
  device: GPUDevice,
  buffer: GPUBuffer,
  offset: number,
  dtype: D,
  dims: readonly number[],
  bytes: number,
): GpuArray<D> {
  const frozen = frozenDims(dims);
  return new GpuArrayImpl(device, buffer, offset, bindingSize(bytes), bytes, bytes / dtypeInfo(dtype).byteSize, dtype, frozen);
}

/**
 * Whether `x` is a {@link GpuArray}.
 *
 * @example
 * ```ts
 * import { alloc } from '@pol/core';
 * import { deviceArena, isGpuArray } from '@pol/webgpu';
 * const arena = deviceArena(device, 4096);
 * console.log(isGpuArray(alloc(arena, 'float32', 4)), isGpuArray(new Float32Array(4))); // true false
 * ```
 */
export function isGpuArray(x: unknown): x is GpuArray {
  return x instanceof GpuArrayImpl || x instanceof CheckedGpuArrayImpl;
}

/** Throw unless `x` is a GpuArray; `what` names the call. */
export function assertGpuArray(x: unknown, what: string): asserts x is GpuArray {
  if (!isGpuArray(x)) {
    throw new InvalidArgumentError(
      `${what} needs a GpuArray (from alloc on an arena over a device slab, or Similar of a GpuArray), got ${describeValue(x)}.`,
    );
  }
}

/** Throw if the array's buffer was released (slab destroyed, Similar frame closed). */
export function assertLive(array: GpuArray, what: string): void {
  const owner = owners.get(array.buffer);
  if (owner?.released !== undefined) {
    throw new InvalidArgumentError(
      `Cannot ${what}: ${String(array)} is gone: ${owner.released}. Use an array whose buffer is alive.`,
    );
  }
}

function describeArray(exemplar: PolArray): string {
  const device = (exemplar as GpuArray).device;
  return `${exemplar.dtype}[${exemplar.dims.join(', ')}] on ${deviceName(device)}`;
}

class SimilarOwner implements BufferOwner {
  readonly kind = 'similar';
  released: string | undefined;
  readonly listeners = new Set<ReleaseListener>();
  constructor(readonly name: string) {}

  release(why: string): void {
    if (this.released !== undefined) return;
    this.released = why;
    for (const listener of [...this.listeners]) listener.bufferReleased(this);
    this.listeners.clear();
  }
}

/**
 * A fresh GPUBuffer holding one `dtype` array on the exemplar's device, with the exemplar's buffer
 * usage: what `alloc(Similar(x), …)` does for a GpuArray `x`.
 */
function allocSimilar<D extends DType>(exemplar: PolArray, dtype: D, dims: readonly number[]): GpuArray<D> {
  const x = exemplar as GpuArray;
  const state = stateOf(x.device);
  const shape = `${dtype}[${dims.join(', ')}]`;
  assertAlive(state, `allocate a Similar ${shape}`);
  const bytes = byteLength(dtype, dims);
  const size = bindingSize(bytes);
  // The exemplar is dispatched on, never read: a stale checked exemplar still names its buffer's usage.
  const usage = (x instanceof CheckedGpuArrayImpl ? CheckedGpuArrayImpl.rawBuffer(x) : x.buffer).usage;
  checkBufferSize(state, size, `A Similar ${shape} array`);
  if ((usage & Usage.STORAGE) !== 0) checkBindingSize(state, size, `A Similar ${shape} array`);
  let buffer: GPUBuffer;
  const label = `pol Similar ${shape}`;
  try {
    buffer = state.device.createBuffer({ size, usage, label });
  } catch (cause) {
    throw new GpuAllocationError(
      `device.createBuffer failed for a Similar ${shape} array (${size} bytes) on ${deviceName(state.device)}: ${errorText(cause)}. ` +
        'Free GPU memory (close frames on Similar, destroy unused slabs), or allocate from an arena on a device slab.',
      { cause },
    );
  }
  setOwner(buffer, new SimilarOwner(`a Similar buffer (${shape}, '${label}')`));
  return makeGpuArray(state.device, buffer, 0, dtype, dims, bytes);
}

/** A frame on `Similar(gpuArray)` closed: its buffers die once the work submitted so far is done. */
function releaseSimilar(arrays: readonly PolArray[]): void {
  const byDevice = new Map<DeviceState, GPUBuffer[]>();
  for (const array of arrays) {
    if (!isGpuArray(array)) continue;
    const owner = owners.get(array.buffer);
    if (!(owner instanceof SimilarOwner) || owner.released !== undefined) continue;
    owner.release('the frame on Similar that allocated it has closed');
    const state = stateOf(array.device);
    let list = byDevice.get(state);
    if (list === undefined) {
      list = [];
      byDevice.set(state, list);
    }
    list.push(array.buffer);
  }
  for (const [state, buffers] of byDevice) {
    whenIdle(state, () => {
      for (const buffer of buffers) buffer.destroy();
    });
  }
}

/**
 * The `'gpu'` array family: `Similar(gpuArray)` allocates a GPUBuffer on the same device, and
 * `capturing(gpuArray)` is true while that device records a capture.
 */
export const gpuFamily: ArrayFamily<'gpu'> = Object.freeze({
  kind: 'gpu',
  allocSimilar,
  capturing(exemplar: PolArray): boolean {
    return knownState((exemplar as GpuArray).device)?.recording !== undefined;
  },
  release: releaseSimilar,
  describe: describeArray,
});

Object.defineProperty(GpuArrayImpl.prototype, familyKey, { value: gpuFamily });
Object.defineProperty(CheckedGpuArrayImpl.prototype, familyKey, { value: gpuFamily });

/** Throw {@link GpuLimitError} if a buffer of `size` bytes is past the device's `maxBufferSize`. */
export function checkBufferSize(state: DeviceState, size: number, what: string): void {
  checkLimit(
    state,
    'maxBufferSize',
    size,
    `${what} needs a buffer of ${size} bytes`,
    'or split the data across several buffers.',
  );
}

/** Throw {@link GpuLimitError} if a storage binding of `size` bytes is past `maxStorageBufferBindingSize`. */
export function checkBindingSize(state: DeviceState, size: number, what: string): void {
  checkLimit(
    state,
    'maxStorageBufferBindingSize',
    size,
    `${what} is ${size} bytes`,
    'or split the array.',
    ', so it could not be bound as a storage buffer',
  );
}

function checkLimit(
  state: DeviceState,
  limit: 'maxBufferSize' | 'maxStorageBufferBindingSize',
  size: number,
  subject: string,
  otherwise: string,
  consequence = '',
): void {
  const allowed = state.device.limits[limit];
  if (size <= allowed) return;
  throw new GpuLimitError(
    limit,
    size,
    allowed,
    `${subject}, past ${deviceName(state.device)}'s ${limit} (${allowed} bytes)${consequence}. ` +
      `The adapter may allow more (see adapter.limits.${limit}): request it when making the device, ` +
      `adapter.requestDevice({ requiredLimits: { ${limit}: ${size} } }), ${otherwise}`,
  );
}

/** A thrown value's message, for wrapping it. */
export function errorText(x: unknown): string {
  return x instanceof Error ? x.message : String(x);
}
