/**
 * `GpuArray`: a typed range of a GPUBuffer, and the `'gpu'` array family that `Similar`,
 * `capturing` and `zeroArray` dispatch on.
 *
 * @module
 */

import type { ArrayLife } from '@pol/arena/backend';
import { byteLength, type DType, dtypeInfo, InvalidArgumentError, type PolArray } from '@pol/core';
import { type ArrayFamily, describeValue, familyKey, frozenDims, shapeText } from '@pol/core/backend';
import { BufferOwner, bufferName, ownerOf, setOwner } from './buffers.js';
import { assertAlive, type DeviceState, deviceName, knownState, whenIdle } from './device.js';
import { errorText, GpuAllocationError } from './errors.js';
import { Usage } from './flags.js';
import { bindingSize, checkBindingSize, checkBufferSize } from './limits.js';

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

class GpuArrayImpl<D extends DType> implements GpuArray<D> {
  // How messages name it: a static getter keeps `instanceof` fast (CONTRIBUTING.md, "Class names").
  static get name(): string {
    return 'GpuArray';
  }
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
    return `GpuArray(${shapeText(this.dtype, this.dims)} at ${this.offset} in ${bufferName(this.buffer)})`;
  }
}

/**
 * A GpuArray carved by a checked arena: reading its `buffer`, `offset` or `size` (which binding
 * it, uploading or downloading does) throws the arena's StaleArrayError once it has died.
 */
class CheckedGpuArrayImpl<D extends DType> implements GpuArray<D> {
  // How messages name it: a static getter keeps `instanceof` fast (CONTRIBUTING.md, "Class names").
  static get name(): string {
    return 'GpuArray';
  }
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
    return `GpuArray(${shapeText(this.dtype, this.dims)} at ${this.#offset} in ${bufferName(this.#buffer)}${this.#life.alive ? '' : ', stale'})`;
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

/** The array's buffer without a checked array's liveness check: for metadata only. */
function bufferOf(array: GpuArray): GPUBuffer {
  return array instanceof CheckedGpuArrayImpl ? CheckedGpuArrayImpl.rawBuffer(array) : array.buffer;
}

/** Throw if the array's buffer was released (slab destroyed, Similar frame closed, buffer destroyed). */
export function assertLive(array: GpuArray, what: string): void {
  const owner = ownerOf(bufferOf(array));
  if (owner?.released !== undefined) {
    throw new InvalidArgumentError(
      `Cannot ${what}: ${String(array)} is gone: ${owner.released}. Use an array whose buffer is alive.`,
    );
  }
}

/** Whether the array's buffer is still there (the test of {@link assertLive}, without building its message). */
export function isLive(array: GpuArray): boolean {
  return ownerOf(bufferOf(array))?.released === undefined;
}

/**
 * Whether `x` is a GpuArray of an unchecked arena (or a Similar one): its buffer, offset and size
 * never change and reading them checks nothing, so the bind-group cache may key on the array itself.
 */
export function isPlainGpuArray(x: unknown): boolean {
  return x instanceof GpuArrayImpl;
}

/** Whether the array came from a checked arena (its `buffer`, `offset` and `size` check that it is alive). */
export function isCheckedArray(array: GpuArray): boolean {
  return array instanceof CheckedGpuArrayImpl;
}

/** Pol's state for an array's device (an array's device always met Pol: its slab or buffer was made through it). */
export function arrayState(array: GpuArray): DeviceState {
  const state = knownState(array.device);
  if (state === undefined) throw new InvalidArgumentError(`${String(array)} belongs to a device Pol does not know.`);
  return state;
}

/**
 * A fresh GPUBuffer holding one `dtype` array on the exemplar's device, with the exemplar's buffer
 * usage: what `alloc(Similar(x), …)` does for a GpuArray `x`.
 */
function allocSimilar<D extends DType>(exemplar: PolArray, dtype: D, dims: readonly number[]): GpuArray<D> {
  const x = exemplar as GpuArray;
  const state = arrayState(x);
  const shape = shapeText(dtype, dims);
  assertAlive(state, `allocate a Similar ${shape}`);
  const bytes = byteLength(dtype, dims);
  const size = bindingSize(bytes);
  // The exemplar is dispatched on, never read: a stale checked exemplar still names its buffer's usage.
  const usage = bufferOf(x).usage;
  checkBufferSize(state.device, size, `A Similar ${shape} array`);
  if ((usage & Usage.STORAGE) !== 0) checkBindingSize(state.device, size, `A Similar ${shape} array`);
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
  setOwner(buffer, new BufferOwner('similar', state.device, `a Similar buffer (${shape}, '${label}')`));
  return makeGpuArray(state.device, buffer, 0, dtype, dims, bytes);
}

/** A frame on `Similar(gpuArray)` closed: its buffers die once the work submitted so far is done. */
function releaseSimilar(arrays: readonly PolArray[]): void {
  const byDevice = new Map<DeviceState, GPUBuffer[]>();
  for (const array of arrays) {
    if (!isGpuArray(array)) continue;
    const owner = ownerOf(array.buffer);
    if (owner?.kind !== 'similar' || owner.released !== undefined) continue;
    owner.release('the frame on Similar that allocated it has closed');
    const state = arrayState(array);
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
 * Zero a GpuArray over its binding range (`offset` and `size` are multiples of 4, as clearBuffer
 * and writeBuffer require: the arena's alignment, and the rounded binding size). Eagerly, the
 * zeroing is noted and reaches the queue before anything could observe it (`clears.ts`): a small
 * array's as a `writeBuffer` of zeros (one for a run of neighbours), a larger one's as a
 * `clearBuffer`, in one command buffer with every other clear noted on the device. Inside a captured step a `clearBuffer` is encoded and submitted
 * at once, so that it is recorded like any other command, and every replay zeroes the array again.
 */
function zeroGpuArray(array: PolArray): void {
  const x = array as GpuArray;
  const state = arrayState(x);
  const buffer = zeroableBuffer(x, state);
  if (state.recorder === undefined) {
    state.clears.zero(buffer, x.offset, x.size);
    return;
  }
  const encoder = state.device.createCommandEncoder({ label: 'pol zero' });
  encoder.clearBuffer(buffer, x.offset, x.size);
  state.device.queue.submit([encoder.finish()]);
}

/**
 * Refuse, writing nothing, a GpuArray that `zeroGpuArray` would refuse: its device lost, its slab
 * or buffer destroyed, or (checked) the array released. `zeroShadows` checks every shadow so
 * before it clears the first.
 */
function checkZeroGpuArray(array: PolArray): void {
  const x = array as GpuArray;
  zeroableBuffer(x, arrayState(x));
}

/** The buffer to zero `x` in, or the refusal `zeroGpuArray` gives. */
function zeroableBuffer(x: GpuArray, state: DeviceState): GPUBuffer {
  if (state.lost !== undefined || !isLive(x)) {
    // The message is built only when one is thrown: a steady step's zeroing allocates nothing.
    const what = `zero ${String(x)}`;
    assertAlive(state, what);
    assertLive(x, what);
  }
  return x.buffer; // a released checked array throws StaleArrayError here
}

/**
 * The `'gpu'` array family: `Similar(gpuArray)` allocates a GPUBuffer on the same device,
 * `capturing(gpuArray)` is true while that device records a capture, and `zeroArray(gpuArray)`
 * clears the array's range on the device.
 */
export const gpuFamily: ArrayFamily<'gpu'> = Object.freeze({
  kind: 'gpu',
  allocSimilar,
  capturing(exemplar: PolArray): boolean {
    return knownState((exemplar as GpuArray).device)?.recorder !== undefined;
  },
  release: releaseSimilar,
  checkZero: checkZeroGpuArray,
  zero: zeroGpuArray,
  describe(exemplar: PolArray): string {
    return `${shapeText(exemplar.dtype, exemplar.dims)} on ${deviceName((exemplar as GpuArray).device)}`;
  },
});

Object.defineProperty(GpuArrayImpl.prototype, familyKey, { value: gpuFamily });
Object.defineProperty(CheckedGpuArrayImpl.prototype, familyKey, { value: gpuFamily });
