/**
 * What an eager `zeroArray` does (inside a captured step, the clear is recorded instead): the zeroing
 * is noted, and every zeroing noted on a device reaches the queue just before the next operation
 * that could observe it. A small array's zeros, up to {@link WRITE_ZEROS_MAX} bytes, are then a
 * `queue.writeBuffer` from a shared buffer of zeros, and neighbouring small arrays noted one after
 * the other (a model's gradients, zeroed by `zeroShadows` in carve order) share one write: on Dawn
 * each write costs about a microsecond whatever its size, and a submit about a dozen writes. A
 * larger array gets a `clearBuffer`, and all of them go in one command buffer (one encoder, one
 * submit): writing their zeros from the host would cost more than that submit.
 *
 * The order stays WebGPU's exactly: the instrumentation owner flushes what is noted before it
 * forwards `queue.submit`, `queue.writeBuffer` and `queue.onSubmittedWorkDone`, and a buffer's
 * `destroy`; Pol flushes it before it poisons released bytes, and before a capture starts
 * recording. So everything that reaches the queue after a `zeroArray` call reaches it after those
 * zeros, as it would had they been written or submitted at the call; work encoded earlier but
 * submitted later runs after them too, as it would have. (Zeros written in either order are zeros,
 * so the writes and the clears of one flush need no order between them.) Nothing else can observe a
 * buffer's bytes: texture writes and external textures touch textures only, a slab's buffer cannot
 * be mapped (so a `mapAsync` reads what a submitted copy wrote), and a destroyed or lost device runs
 * nothing more (what it noted is dropped). The clears have a submit of their own rather than joining
 * the next one, because WebGPU drops a whole submit when one of its command buffers is invalid, and
 * a user's invalid command buffer must not take the clears down with it.
 *
 * Each `zeroArray` checks its array when it is called (alive, of a live slab, on a live device), and
 * every way the buffer can die afterwards flushes first, so a noted zeroing is always valid when it
 * reaches the queue: the flush can raise no validation error, which is why a later error scope
 * cannot catch one that belonged to an earlier scope. Two small arrays share a write only when they
 * are neighbours (`neighbours.ts`, the rule `uploadBatch` follows): no array of any arena
 * can start between them, so the bytes between them are alignment padding that no array owns, and
 * the write zeroes that padding too. Clears are never merged.
 *
 * @module
 */

import { neighbours } from './neighbours.js';

/** The device's own encoder, submit and write, from before Pol wrapped them (Pol's clears are not observed). */
export interface ClearMethods {
  readonly createCommandEncoder: GPUDevice['createCommandEncoder'];
  readonly submit: GPUQueue['submit'];
  readonly writeBuffer: GPUQueue['writeBuffer'];
}

/**
 * The largest array, in bytes, that an eager `zeroArray` zeroes with a `writeBuffer` of zeros;
 * larger ones get a `clearBuffer`. Measured on Dawn over SwiftShader: a write of 64 KiB costs
 * about a third of an encoder, a clear, a finish and a submit; one of 256 KiB, more than two of them.
 */
export const WRITE_ZEROS_MAX = 64 * 1024;

// The zeros every small array's write reads from, made on the first flush that writes.
let zeros: ArrayBuffer | undefined;

// The encoder's and the command buffer's label: what a validation message or a capture tool names.
const descriptor: GPUCommandEncoderDescriptor & GPUCommandBufferDescriptor = Object.freeze({ label: 'pol zero' });

/** A device's eager zeroing, noted until a flush: small arrays' zeros as writes (neighbours merged), larger ones' as clears. */
export class EagerClears {
  /** How many writes and clears are noted: a wrapper tests this before it calls {@link EagerClears.flush}. */
  get count(): number {
    return this.#writes + this.#clears;
  }
  #writes = 0;
  readonly #writeBuffers: (GPUBuffer | undefined)[] = [];
  readonly #writeStarts: number[] = [];
  readonly #writeEnds: number[] = [];
  #clears = 0;
  readonly #buffers: (GPUBuffer | undefined)[] = [];
  readonly #offsets: number[] = [];
  readonly #sizes: number[] = [];
  // One list for every flush, its element overwritten: a flush allocates only WebGPU's objects.
  readonly #list: GPUCommandBuffer[] = [];
  readonly #grid: number;

  constructor(
    readonly device: GPUDevice,
    readonly raw: ClearMethods,
  ) {
    this.#grid = device.limits.minStorageBufferOffsetAlignment;
  }

  /**
   * Note the zeroing of `size` bytes at `offset` of `buffer` (both multiples of 4, already checked):
   * a write when `size` is at most {@link WRITE_ZEROS_MAX} (joining the last noted write when the
   * two are neighbours and the joined write stays within that size), a clear otherwise.
   */
  zero(buffer: GPUBuffer, offset: number, size: number): void {
    if (size === 0) return;
    if (size > WRITE_ZEROS_MAX) {
      const n = this.#clears;
      this.#buffers[n] = buffer;
      this.#offsets[n] = offset;
      this.#sizes[n] = size;
      this.#clears = n + 1;
      return;
    }
    const end = offset + size;
    const last = this.#writes - 1;
    if (last >= 0 && this.#writeBuffers[last] === buffer) {
      const start = this.#writeStarts[last] as number;
      const lastEnd = this.#writeEnds[last] as number;
      // After the last write's start and no further than its neighbour's place (itself, again, included).
      if (offset >= start && neighbours(lastEnd, offset, this.#grid) && Math.max(lastEnd, end) - start <= WRITE_ZEROS_MAX) {
        this.#writeEnds[last] = Math.max(lastEnd, end);
        return;
      }
    }
    const n = last + 1;
    this.#writeBuffers[n] = buffer;
    this.#writeStarts[n] = offset;
    this.#writeEnds[n] = end;
    this.#writes = n + 1;
  }

  /** Write every noted write's zeros, then encode every noted clear, in the order noted, into one command buffer, and submit it. */
  flush(): void {
    const writes = this.#writes;
    const clears = this.#clears;
    if (writes + clears === 0) return;
    const writeBuffers = this.#writeBuffers;
    const buffers = this.#buffers;
    // Forgotten first: whatever the device does below, nothing is ever written or submitted twice.
    this.#writes = 0;
    this.#clears = 0;
    try {
      if (writes > 0) {
        zeros ??= new ArrayBuffer(WRITE_ZEROS_MAX);
        const queue = this.device.queue;
        for (let i = 0; i < writes; i++) {
          const start = this.#writeStarts[i] as number;
          this.raw.writeBuffer.call(queue, writeBuffers[i] as GPUBuffer, start, zeros, 0, (this.#writeEnds[i] as number) - start);
        }
      }
      if (clears > 0) {
        const encoder = this.raw.createCommandEncoder.call(this.device, descriptor);
        for (let i = 0; i < clears; i++) encoder.clearBuffer(buffers[i] as GPUBuffer, this.#offsets[i], this.#sizes[i]);
        const list = this.#list;
        list[0] = encoder.finish(descriptor);
        this.raw.submit.call(this.device.queue, list);
      }
    } finally {
      writeBuffers.fill(undefined, 0, writes);
      buffers.fill(undefined, 0, clears);
    }
  }

  /** Forget everything noted: the device is lost, and nothing it would run matters any more. */
  drop(): void {
    this.#writeBuffers.fill(undefined, 0, this.#writes);
    this.#buffers.fill(undefined, 0, this.#clears);
    this.#writes = 0;
    this.#clears = 0;
  }
}
