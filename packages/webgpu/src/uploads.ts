/**
 * Batched uploads: the per-step inputs of a step (uniforms, a batch of data) written with as few
 * `queue.writeBuffer` calls as their places allow, instead of one each. Each `writeBuffer` costs
 * about as much as a dispatch on the CPU side, whatever its size, so a step that rewrites a dozen
 * small uniforms spends more on the calls than on the bytes.
 *
 * An `UploadBatch` keeps one host copy of its arrays, laid out as they lie on the device: arrays
 * that are neighbours in one buffer share a *run*, and a flush writes each run with one
 * `writeBuffer`. Two arrays are neighbours when nothing else can lie between them: no offset of
 * the device's `minStorageBufferOffsetAlignment` falls in the gap between the end of one and the
 * start of the next, and every array of every arena on the device starts at such an offset. The
 * gap itself (the alignment padding after an array, which no array owns) is written with zeros.
 *
 * @module
 */

import { type DType, dtypeInfo, type HostArray, InvalidArgumentError, type TypedArrayOf } from '@pol/core';
import { describeValue } from '@pol/core/backend';
import { arrayState, assertGpuArray, type GpuArray, isCheckedArray } from './array.js';
import { type DeviceState, deviceName } from './device.js';
import { neighbours } from './neighbours.js';
import { assertWritable, typedDataOf } from './transfer.js';

/**
 * The host copy of some GPU arrays, written to the device with one `queue.writeBuffer` per run of
 * neighbouring arrays: fill each array's host copy ({@link UploadBatch.data}, or
 * {@link UploadBatch.set}), then {@link UploadBatch.flush}. What the arrays hold after a flush is
 * exactly what one `upload` each would have written. Make one with {@link uploadBatch}.
 *
 * @example
 * ```ts
 * import { alloc } from '@pol/core';
 * import { deviceArena, download, type UploadBatch, uploadBatch } from '@pol/webgpu';
 * const uniforms = deviceArena(device, 4096, { label: 'uniforms', usage: GPUBufferUsage.UNIFORM });
 * const scale = alloc(uniforms, 'float32', [4]);
 * const shift = alloc(uniforms, 'float32', [4]);
 * const batch: UploadBatch = uploadBatch([scale, shift]);
 * batch.data(scale).fill(2); // write into the batch's host copy...
 * batch.set(shift, Float32Array.of(1, 2, 3, 4)); // ...or copy into it
 * batch.flush(); // one writeBuffer for both: they are neighbours
 * console.log(batch.writes, (await download(shift)).data); // 1 Float32Array(4) [ 1, 2, 3, 4 ]
 * ```
 */
export interface UploadBatch {
  /** The arrays, in the order given. */
  readonly arrays: readonly GpuArray[];
  /** `queue.writeBuffer` calls one flush makes: one per run of neighbouring arrays. */
  readonly writes: number;
  /** Bytes one flush writes: the arrays' binding sizes, and the padding between neighbours. */
  readonly bytes: number;
  /**
   * The batch's host copy of `array` (one of its arrays, or its index): a TypedArray of the
   * array's dtype and length, the same object every time. Write the next values into it, then
   * flush.
   *
   * @throws {InvalidArgumentError} when `array` is not one of the batch's arrays.
   */
  data<D extends DType>(array: GpuArray<D> | number): TypedArrayOf<D>;
  /**
   * Copy `data` (a TypedArray or HostArray of the array's dtype, of exactly its length) into the
   * batch's host copy of `array`.
   *
   * @throws {InvalidArgumentError} when `array` is not one of the batch's arrays, or `data` is not of its dtype.
   * @throws {InvalidShapeError} when the lengths differ.
   */
  set<D extends DType>(array: GpuArray<D> | number, data: TypedArrayOf<D> | HostArray<D>): void;
  /**
   * Write every array's host copy to the device: one `writeBuffer` per run. Ordered before any
   * work submitted after it returns, as `upload` is; call it before `graph.replay()` to feed a
   * captured step.
   *
   * @throws {InvalidArgumentError} when an array's buffer is gone (a destroyed slab).
   * @throws {StaleArrayError} when an array of a checked arena has been released.
   * @throws {DeviceLostError} when the device is lost.
   * @throws {CaptureViolation} while the device records a capture (host writes are not replayed).
   */
  flush(): void;
}

/** One `writeBuffer`: bytes [hostOffset, hostOffset + bytes) of the host copy to `offset` of `buffer`. */
interface Run {
  readonly buffer: GPUBuffer;
  readonly offset: number;
  readonly hostOffset: number;
  readonly bytes: number;
  /** An array of the run, for the checks of a flush (its buffer is the run's). */
  readonly first: GpuArray;
}

class UploadBatchImpl implements UploadBatch {
  // How messages name it: a static getter keeps `instanceof` fast (CONTRIBUTING.md, "Class names").
  static get name(): string {
    return 'UploadBatch';
  }
  readonly arrays: readonly GpuArray[];
  readonly writes: number;
  readonly bytes: number;
  readonly #state: DeviceState;
  readonly #host: ArrayBuffer;
  readonly #runs: readonly Run[];
  readonly #views: readonly ArrayBufferView[];
  readonly #index: ReadonlyMap<GpuArray, number>;
  /** The arrays of checked arenas: a flush reads their `buffer`, which refuses a released one. */
  readonly #checked: readonly GpuArray[];

  constructor(state: DeviceState, arrays: readonly GpuArray[], layout: Layout) {
    this.#state = state;
    this.arrays = arrays;
    this.#host = layout.host;
    this.#runs = layout.runs;
    this.#views = layout.views;
    this.#index = new Map(arrays.map((a, i) => [a, i]));
    this.#checked = arrays.filter(isCheckedArray);
    this.writes = layout.runs.length;
    this.bytes = layout.runs.reduce((n, r) => n + r.bytes, 0);
  }

  #at(array: GpuArray | number, call: string): number {
    const i = typeof array === 'number' ? array : this.#index.get(array);
    if (i === undefined || !Number.isInteger(i) || i < 0 || i >= this.arrays.length) {
      throw new InvalidArgumentError(
        `${call}: ${describeValue(array)} is not one of the batch's ${this.arrays.length} arrays. ` +
          'Pass one of the arrays given to uploadBatch (the same object), or its index in that list.',
      );
    }
    return i;
  }

  data<D extends DType>(array: GpuArray<D> | number): TypedArrayOf<D> {
    return this.#views[this.#at(array, 'batch.data(array)')] as unknown as TypedArrayOf<D>;
  }

  set<D extends DType>(array: GpuArray<D> | number, data: TypedArrayOf<D> | HostArray<D>): void {
    const i = this.#at(array, 'batch.set(array, data)');
    const typed = typedDataOf(data, this.arrays[i] as GpuArray, 'batch.set(array, data)');
    (this.#views[i] as unknown as { set(source: ArrayLike<unknown>): void }).set(typed);
  }

  flush(): void {
    const state = this.#state;
    const runs = this.#runs;
    for (let i = 0; i < runs.length; i++) assertWritable((runs[i] as Run).first, state, 'a batched upload into');
    const checked = this.#checked;
    // A released checked array's bytes may belong to another array now: its getter refuses it.
    for (let i = 0; i < checked.length; i++) void (checked[i] as GpuArray).buffer;
    const queue = state.device.queue;
    const host = this.#host;
    for (let i = 0; i < runs.length; i++) {
      const run = runs[i] as Run;
      queue.writeBuffer(run.buffer, run.offset, host, run.hostOffset, run.bytes);
    }
  }

  toString(): string {
    return `UploadBatch(${this.arrays.length} arrays in ${this.writes} writes of ${this.bytes} bytes on ${deviceName(this.#state.device)})`;
  }
}

interface Layout {
  readonly host: ArrayBuffer;
  readonly runs: readonly Run[];
  readonly views: readonly ArrayBufferView[];
}

/** The runs of neighbouring arrays, their host copy, and each array's view of it. */
function layOut(arrays: readonly GpuArray[], grid: number): Layout {
  const order = arrays.map((_, i) => i).filter((i) => (arrays[i] as GpuArray).byteLength > 0);
  const a = (i: number) => arrays[i] as GpuArray;
  order.sort((i, j) => {
    const x = a(i);
    const y = a(j);
    return x.buffer === y.buffer ? x.offset - y.offset : bufferOrder(x.buffer) - bufferOrder(y.buffer);
  });
  const runs: { buffer: GPUBuffer; offset: number; end: number; members: number[] }[] = [];
  for (const i of order) {
    const x = a(i);
    const last = runs[runs.length - 1];
    if (last !== undefined && last.buffer === x.buffer) {
      if (x.offset < last.end) {
        const other = a(last.members[last.members.length - 1] as number);
        throw new InvalidArgumentError(
          `uploadBatch: ${String(x)} overlaps ${String(other)}, so the batch could not say which one its bytes belong to. ` +
            'Batch arrays that do not overlap (each live array once).',
        );
      }
      // Neighbours: no array of any arena can start between them.
      if (neighbours(last.end, x.offset, grid)) {
        last.end = x.offset + x.size;
        last.members.push(i);
        continue;
      }
    }
    runs.push({ buffer: x.buffer, offset: x.offset, end: x.offset + x.size, members: [i] });
  }
  let total = 0;
  const hostOffsets = runs.map((r) => {
    const at = total;
    total += Math.ceil((r.end - r.offset) / 8) * 8; // 8: every typed view of the copy is aligned
    return at;
  });
  const host = new ArrayBuffer(total);
  const views: ArrayBufferView[] = arrays.map((x) => new (typedArrayOf(x))(0));
  runs.forEach((r, k) => {
    for (const i of r.members) {
      const x = a(i);
      views[i] = new (typedArrayOf(x))(host, (hostOffsets[k] ?? 0) + x.offset - r.offset, x.length);
    }
  });
  return {
    host,
    views,
    runs: runs.map((r, k) => ({
      buffer: r.buffer,
      offset: r.offset,
      hostOffset: hostOffsets[k] ?? 0,
      bytes: r.end - r.offset,
      first: a(r.members[0] as number),
    })),
  };
}

type TypedArrayClass = new (...args: [number] | [ArrayBuffer, number, number]) => ArrayBufferView;

function typedArrayOf(x: GpuArray): TypedArrayClass {
  return dtypeClass(x.dtype);
}

// The order buffers get in a batch: the order they are first seen (any fixed order serves).
const seen = new WeakMap<GPUBuffer, number>();
let nextBuffer = 0;
function bufferOrder(buffer: GPUBuffer): number {
  let n = seen.get(buffer);
  if (n === undefined) {
    n = nextBuffer++;
    seen.set(buffer, n);
  }
  return n;
}

function dtypeClass(dtype: DType): TypedArrayClass {
  return dtypeInfo(dtype).TypedArray as unknown as TypedArrayClass;
}

/**
 * A batch over `arrays` (GPU arrays of one device): one host copy of them all, written to the
 * device with one `queue.writeBuffer` per run of arrays that are neighbours in one buffer. Carve
 * the per-step inputs of a step one after the other from one arena (a uniform arena, say), and
 * a flush is a single write. Made once, a batch serves every step: filling its host copies and
 * flushing allocate nothing.
 *
 * The arrays must not overlap (each live array once). Empty arrays are kept, and written by no
 * run.
 *
 * @throws {InvalidArgumentError} when `arrays` is not an array of GpuArrays of one device, or two
 * of them overlap, or one's buffer is gone.
 * @throws {StaleArrayError} for a released array of a checked arena.
 * @throws {DeviceLostError} when the device is lost.
 * @example
 * ```ts
 * import { alloc } from '@pol/core';
 * import { capture, deviceArena, download, uploadBatch } from '@pol/webgpu';
 * // 12 per-step uniforms, carved one after the other: neighbours, so one write feeds them all
 * const uniforms = deviceArena(device, 1 << 14, { label: 'uniforms', usage: GPUBufferUsage.UNIFORM });
 * const params = Array.from({ length: 12 }, () => alloc(uniforms, 'float32', [4]));
 * const batch = uploadBatch(params);
 * for (let step = 0; step < 3; step++) {
 *   params.forEach((u, i) => {
 *     batch.data(u).fill(step + i); // the step's values, into the host copy
 *   });
 *   batch.flush(); // then encode the step, or replay its graph
 * }
 * const [last] = params.slice(-1);
 * if (last !== undefined) console.log(batch.writes, (await download(last)).data); // 1 Float32Array(4) [ 13, 13, 13, 13 ]
 * ```
 */
export function uploadBatch(arrays: readonly GpuArray[]): UploadBatch {
  if (!Array.isArray(arrays)) {
    throw new InvalidArgumentError(`uploadBatch(arrays) needs an array of GpuArrays, got ${describeValue(arrays)}.`);
  }
  arrays.forEach((x, i) => {
    assertGpuArray(x, `uploadBatch(arrays): arrays[${i}]`);
  });
  const list = [...arrays];
  if (list.length === 0) {
    throw new InvalidArgumentError('uploadBatch(arrays) needs at least one array; a batch of none would write nothing.');
  }
  const device = (list[0] as GpuArray).device;
  const state = arrayState(list[0] as GpuArray);
  list.forEach((x, i) => {
    if (x.device !== device) {
      throw new InvalidArgumentError(
        `uploadBatch(arrays): arrays[${i}] (${String(x)}) is on ${deviceName(x.device)}, arrays[0] on ${deviceName(device)}. ` +
          'A batch writes through one device’s queue: make a batch per device.',
      );
    }
    assertWritable(x, state, `batch an upload into`);
    void x.buffer; // a released checked array refuses here
  });
  return new UploadBatchImpl(state, Object.freeze(list), layOut(list, device.limits.minStorageBufferOffsetAlignment));
}

/**
 * Write several arrays at once, each `[array, data]` pair as `upload(array, data)` would, with one
 * `queue.writeBuffer` per run of neighbouring arrays: for an eager step whose inputs change from
 * one call to the next. A loop that writes the same arrays every step should keep an
 * {@link uploadBatch} instead, which plans the runs once and allocates nothing per flush.
 *
 * @throws as {@link uploadBatch}, {@link UploadBatch.set} and {@link UploadBatch.flush} do; a bad
 * pair is refused before anything is written.
 * @example
 * ```ts
 * import { alloc } from '@pol/core';
 * import { deviceArena, download, uploadAll } from '@pol/webgpu';
 * const arena = deviceArena(device, 4096);
 * const x = alloc(arena, 'float32', [2]);
 * const labels = alloc(arena, 'int32', [2]);
 * uploadAll([
 *   [x, Float32Array.of(0.5, 1.5)],
 *   [labels, Int32Array.of(1, 0)],
 * ]);
 * console.log((await download(labels)).data); // Int32Array(2) [ 1, 0 ]
 * ```
 */
export function uploadAll(pairs: readonly (readonly [GpuArray, ArrayBufferView | HostArray])[]): void {
  if (!Array.isArray(pairs) || pairs.some((p) => !Array.isArray(p) || p.length !== 2)) {
    throw new InvalidArgumentError(
      `uploadAll(pairs) needs an array of [array, data] pairs, got ${describeValue(pairs)}. Pass [[x, xData], [y, yData]].`,
    );
  }
  const batch = uploadBatch(pairs.map((p) => p[0]));
  for (let i = 0; i < pairs.length; i++) batch.set(i, (pairs[i] as readonly [GpuArray, never])[1]);
  batch.flush();
}
