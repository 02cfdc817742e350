/**
 * Moving data between host and device: `upload` writes a TypedArray into a GpuArray, `download`
 * reads a GpuArray back into a host array through a staging buffer.
 *
 * @module
 */

import {
  type AnyTypedArray,
  type DType,
  dtypeInfo,
  dtypeOfTypedArray,
  type HostArray,
  hostArray,
  InvalidArgumentError,
  InvalidShapeError,
  isArray,
  type TypedArrayOf,
} from '@pol/core';
import { describeValue } from '@pol/core/backend';
import { arrayState, assertGpuArray, assertLive, type GpuArray, isLive } from './array.js';
import { assertAlive, type DeviceState, deviceName } from './device.js';
import { errorText, GpuAllocationError, ReadbackError } from './errors.js';
import { MAP_MODE_READ, Usage } from './flags.js';
import { refuseWhileRecording } from './recorder.js';

/**
 * Write `data` into the GPU array `array` (queue.writeBuffer): a TypedArray of the array's dtype,
 * or a HostArray, with exactly `array.length` elements. The write is ordered before any work
 * submitted after it returns.
 *
 * Data over a `SharedArrayBuffer` (an array carved from an arena over one) arrives like any other:
 * it is copied through a host staging buffer first, since Dawn's Node.js bindings refuse shared
 * sources.
 *
 * A graph replays GPU commands only, so `upload` is refused while the device records a capture:
 * upload inputs before `capture()` (for its eager run) and before each `replay()`.
 *
 * @throws {InvalidArgumentError} when `array` is not a GpuArray, `data` is not a TypedArray or
 * HostArray of the array's dtype, or the array's buffer was released.
 * @throws {InvalidShapeError} when the element counts differ.
 * @throws {DeviceLostError} when the device is lost.
 * @throws {CaptureViolation} while the device records a capture.
 * @example
 * ```ts
 * import { alloc } from '@pol/core';
 * import { deviceArena, download, upload } from '@pol/webgpu';
 * const x = alloc(deviceArena(device, 4096), 'float32', [4]);
 * upload(x, Float32Array.of(1, 2, 3, 4));
 * console.log((await download(x)).data); // Float32Array(4) [ 1, 2, 3, 4 ]
 * ```
 */
export function upload<D extends DType>(array: GpuArray<D>, data: TypedArrayOf<D> | HostArray<D>): void {
  assertGpuArray(array, 'upload(array, data)');
  const typed = typedDataOf(data, array);
  assertWritable(array, arrayState(array), 'upload into');
  const bytes = array.byteLength;
  if (bytes === 0) return;
  const buffer = array.buffer;
  const offset = array.offset;
  const queue = array.device.queue;
  // WebGPU writes whole 4-byte words; the padding bytes belong to the array's binding range. The
  // spec accepts shared sources, but Dawn's Node.js bindings refuse a SharedArrayBuffer (and crash
  // on a view of one): stage such data, and a padded tail, through a reused host buffer.
  if (bytes % 4 === 0 && !isShared(typed.buffer)) {
    queue.writeBuffer(buffer, offset, typed.buffer, typed.byteOffset, bytes);
    return;
  }
  const source = new Uint8Array(typed.buffer, typed.byteOffset, bytes);
  for (let at = 0; at < bytes; at += STAGING_BYTES) {
    const chunk = Math.min(STAGING_BYTES, bytes - at);
    const words = Math.ceil(chunk / 4) * 4;
    const staging = stagingBuffer(words);
    staging.set(source.subarray(at, at + chunk));
    staging.fill(0, chunk, words);
    queue.writeBuffer(buffer, offset + at, staging.buffer, 0, words);
  }
}

// writeBuffer copies its source before it returns, so one host buffer serves every staged write.
const STAGING_BYTES = 1 << 20;
let staging: Uint8Array | undefined;

function stagingBuffer(bytes: number): Uint8Array {
  if (staging === undefined || staging.byteLength < bytes) staging = new Uint8Array(Math.max(bytes, 4096));
  return staging;
}

const SharedBuffer = (globalThis as { SharedArrayBuffer?: new (n: number) => ArrayBufferLike }).SharedArrayBuffer;

function isShared(buffer: ArrayBufferLike): boolean {
  return SharedBuffer !== undefined && buffer instanceof SharedBuffer;
}

/**
 * Refuse a host write into `array` (`what` is `'upload into'`, say) while its device is lost or
 * records a capture, or once its buffer is gone. The messages are built only when one is thrown,
 * so that a steady loop of uploads allocates nothing here.
 */
export function assertWritable(array: GpuArray, state: DeviceState, what: string): void {
  if (state.lost === undefined && state.recorder === undefined && isLive(array)) return;
  const attempted = `${what} ${String(array)}`;
  assertAlive(state, attempted);
  refuseWhileRecording(
    state,
    attempted,
    'A graph does not replay host writes, and they are how each replay gets its inputs: upload before capture() and before each replay().',
  );
  assertLive(array, attempted);
}

/**
 * `data` as a TypedArray of the array's dtype and length (a HostArray's data), or a typed error;
 * `call` names the call for messages (`upload(array, data)`).
 */
export function typedDataOf(data: unknown, array: GpuArray, call = 'upload(array, data)'): AnyTypedArray {
  const typed: unknown = isArray(data) && !ArrayBuffer.isView(data) ? (data as { data?: unknown }).data : data;
  const dtype = dtypeOfTypedArray(typed);
  if (dtype === undefined) {
    throw new InvalidArgumentError(
      `${call} needs a TypedArray or HostArray of ${array.dtype}, got ${describeValue(data)}. ` +
        `Wrap plain numbers first, e.g. ${dtypeInfo(array.dtype).TypedArray.name}.from(values).`,
    );
  }
  if (dtype !== array.dtype) {
    throw new InvalidArgumentError(
      `${call} into ${String(array)} got ${dtype} data: the dtypes must match. Convert first, e.g. ${dtypeInfo(array.dtype).TypedArray.name}.from(data).`,
    );
  }
  const t = typed as AnyTypedArray;
  if (t.length !== array.length) {
    throw new InvalidShapeError(
      `${call} into ${String(array)} got ${t.length} elements, but the array holds ${array.length}. Pass exactly ${array.length}.`,
    );
  }
  return t;
}

/**
 * Read the GPU array `array` back to the host: copy it into a staging buffer (MAP_READ), wait for
 * the copy, map it, and return a fresh HostArray with the array's dtype and dims. The staging
 * buffer is destroyed whatever happens. The copy is ordered after all work submitted before the
 * call.
 *
 * Refused (synchronously) while the device records a capture: a graph holds no readbacks. Read
 * after `capture()` resolves, or after `replay()`.
 *
 * @throws {InvalidArgumentError} (synchronously) when `array` is not a live GpuArray.
 * @throws {CaptureViolation} (synchronously) while the device records a capture.
 * @throws {DeviceLostError} when the device is lost (before or during the read).
 * @throws {GpuAllocationError} (synchronously) when the staging buffer cannot be made.
 * @throws {ReadbackError} (as a rejection) when mapping the staging buffer fails.
 * @example
 * ```ts
 * import { alloc } from '@pol/core';
 * import { deviceArena, download, upload } from '@pol/webgpu';
 * const out = alloc(deviceArena(device, 4096), 'int32', [2, 2]);
 * upload(out, Int32Array.of(1, 2, 3, 4));
 * const y = await download(out); // HostArray<'int32'>, a fresh copy on the host
 * console.log(y.dims, y.data); // [ 2, 2 ] Int32Array(4) [ 1, 2, 3, 4 ]
 * ```
 */
export function download<D extends DType>(array: GpuArray<D>): Promise<HostArray<D>> {
  assertGpuArray(array, 'download(array)');
  const state = arrayState(array);
  assertAlive(state, `download ${String(array)}`);
  refuseWhileRecording(
    state,
    `download of ${String(array)}`,
    'A readback waits for the GPU, and a graph neither records nor performs waits: read after capture() resolves, or after replay().',
  );
  assertLive(array, `download ${String(array)}`);
  const device = array.device;
  const size = array.size;
  let staging: GPUBuffer;
  try {
    staging = device.createBuffer({ size, usage: Usage.MAP_READ | Usage.COPY_DST, label: 'pol download staging' });
  } catch (cause) {
    throw new GpuAllocationError(
      `device.createBuffer failed for the ${size}-byte staging buffer of download(${String(array)}) on ${deviceName(device)}: ${errorText(cause)}.`,
      { cause },
    );
  }
  try {
    const encoder = device.createCommandEncoder({ label: 'pol download' });
    encoder.copyBufferToBuffer(array.buffer, array.offset, staging, 0, size);
    device.queue.submit([encoder.finish()]);
  } catch (error) {
    staging.destroy();
    throw error;
  }
  return finishDownload(state, array, staging);
}

async function finishDownload<D extends DType>(
  state: DeviceState,
  array: GpuArray<D>,
  staging: GPUBuffer,
): Promise<HostArray<D>> {
  try {
    try {
      await staging.mapAsync(MAP_MODE_READ);
    } catch (cause) {
      if (state.lost !== undefined) assertAlive(state, `download ${String(array)}`);
      throw new ReadbackError(
        `Reading ${String(array)} back failed: mapping its staging buffer was refused (${errorText(cause)}). ` +
          'Was the device lost, or destroyed, during the read?',
        { cause },
      );
    }
    const info = dtypeInfo(array.dtype);
    const out = new info.TypedArray(array.length);
    new Uint8Array(out.buffer).set(new Uint8Array(staging.getMappedRange(0, array.size), 0, array.byteLength));
    staging.unmap();
    return hostArray(out, array.dims) as unknown as HostArray<D>;
  } finally {
    staging.destroy();
  }
}
