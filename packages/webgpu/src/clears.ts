/**
 * What an eager `zeroArray` does (inside a captured step, the clear is recorded instead). A small
 * array, up to {@link WRITE_ZEROS_MAX} bytes, is zeroed at the call by a `queue.writeBuffer` from
 * a shared buffer of zeros: a queue operation, so it is ordered exactly as a submit at the call
 * would be, and it rides on the next submit instead of needing one (on Dawn a submit costs about
 * as much as a dozen small writes, and a command buffer of clears needs an encoder, a finish and a
 * submit). A larger array's clear is noted, and every clear noted on a device goes to the queue in
 * one command buffer (one encoder, one submit) just before the next operation that could observe
 * it: writing its zeros from the host would cost more than that submit.
 *
 * The order stays WebGPU's exactly: the instrumentation owner flushes the noted clears before it
 * forwards `queue.submit`, `queue.writeBuffer` and `queue.onSubmittedWorkDone`, and a buffer's
 * `destroy`; Pol flushes them before it poisons released bytes, and before a capture starts
 * recording. So everything that reaches the queue after a `zeroArray` call reaches it after that
 * clear, as it would had the clear been submitted at the call; work encoded earlier but submitted
 * later runs after it too, as it would have. (A small array's zeros need no flush of the noted
 * clears: zeros written in either order are zeros.) Nothing else can observe a buffer's bytes:
 * texture writes and external textures touch textures only, a slab's buffer cannot be mapped (so a
 * `mapAsync` reads what a submitted copy wrote), and a destroyed or lost device runs nothing more
 * (its noted clears are dropped). The noted clears have a submit of their own rather than joining
 * the next one, because WebGPU drops a whole submit when one of its command buffers is invalid,
 * and a user's invalid command buffer must not take the clears down with it.
 *
 * Each `zeroArray` checks its array when it is called (alive, of a live slab, on a live device), and
 * every way the buffer can die afterwards flushes first, so a noted clear is always valid when it
 * is encoded: the flush can raise no validation error, which is why a later error scope cannot
 * catch one that belonged to an earlier scope. Clears are never merged: the bytes between two
 * arrays may be another arena's.
 *
 * @module
 */

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

// The zeros every small array's write reads from, made on the first such write.
let zeros: ArrayBuffer | undefined;

// The encoder's and the command buffer's label: what a validation message or a capture tool names.
const descriptor: GPUCommandEncoderDescriptor & GPUCommandBufferDescriptor = Object.freeze({ label: 'pol zero' });

/** A device's eager clears: small arrays' zeros written at once, larger ones' clears noted until a flush. */
export class EagerClears {
  /** How many clears are noted: a wrapper tests this before it calls {@link EagerClears.flush}. */
  count = 0;
  readonly #buffers: (GPUBuffer | undefined)[] = [];
  readonly #offsets: number[] = [];
  readonly #sizes: number[] = [];
  // One list for every flush, its element overwritten: a flush allocates only WebGPU's objects.
  readonly #list: GPUCommandBuffer[] = [];

  constructor(
    readonly device: GPUDevice,
    readonly raw: ClearMethods,
  ) {}

  /**
   * Zero `size` bytes at `offset` of `buffer` (both multiples of 4, already checked): written now
   * when `size` is at most {@link WRITE_ZEROS_MAX}, noted for the next flush otherwise.
   */
  zero(buffer: GPUBuffer, offset: number, size: number): void {
    if (size <= WRITE_ZEROS_MAX) {
      if (size === 0) return;
      zeros ??= new ArrayBuffer(WRITE_ZEROS_MAX);
      this.raw.writeBuffer.call(this.device.queue, buffer, offset, zeros, 0, size);
      return;
    }
    const n = this.count;
    this.#buffers[n] = buffer;
    this.#offsets[n] = offset;
    this.#sizes[n] = size;
    this.count = n + 1;
  }

  /** Encode every noted clear, in the order noted, into one command buffer, and submit it. */
  flush(): void {
    const n = this.count;
    if (n === 0) return;
    const buffers = this.#buffers;
    // Forgotten first: whatever the device does below, no clear is ever submitted twice.
    this.count = 0;
    try {
      const encoder = this.raw.createCommandEncoder.call(this.device, descriptor);
      for (let i = 0; i < n; i++) encoder.clearBuffer(buffers[i] as GPUBuffer, this.#offsets[i], this.#sizes[i]);
      const list = this.#list;
      list[0] = encoder.finish(descriptor);
      this.raw.submit.call(this.device.queue, list);
    } finally {
      buffers.fill(undefined, 0, n);
    }
  }

  /** Forget every noted clear: the device is lost, and nothing it would run matters any more. */
  drop(): void {
    this.#buffers.fill(undefined, 0, this.count);
    this.count = 0;
  }
}
