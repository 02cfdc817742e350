/**
 * The clears an eager `zeroArray` asks for, deferred: each array's clear is noted, and every clear
 * noted on a device goes to the queue in one command buffer (one encoder, one submit), just before
 * the next queue operation that could observe it. A step that zeroes four gradients then costs one
 * encoder and one submit, where a submit of its own per array cost four of each.
 *
 * The order stays WebGPU's exactly: the instrumentation owner flushes the clears before it forwards
 * `queue.submit`, `queue.writeBuffer` and `queue.onSubmittedWorkDone`, and a buffer's `destroy`;
 * Pol flushes them before it poisons released bytes, and before a capture starts recording. So
 * everything that reaches the queue after a `zeroArray` call reaches it after that clear, as it
 * would had the clear been submitted at the call; work encoded earlier but submitted later runs
 * after it too, as it would have. Nothing else can observe a buffer's bytes: texture writes and
 * external textures touch textures only, a slab's buffer cannot be mapped (so a `mapAsync` reads
 * what a submitted copy wrote), and a destroyed or lost device runs nothing more (its noted clears
 * are dropped). The clears have a submit of their own rather than joining the next one, because
 * WebGPU drops a whole submit when one of its command buffers is invalid, and a user's invalid
 * command buffer must not take the clears down with it (on Dawn the two cost the same).
 *
 * Each `zeroArray` checks its array when it is called (alive, of a live slab, on a live device), and
 * every way the buffer can die afterwards flushes first, so a noted clear is always valid when it
 * is encoded: the flush can raise no validation error, which is why a later error scope cannot
 * catch one that belonged to an earlier scope. Clears are never merged: the bytes between two
 * arrays may be another arena's.
 *
 * @module
 */

/** The device's own encoder and submit, from before Pol wrapped them (a flush is not observed). */
export interface ClearMethods {
  readonly createCommandEncoder: GPUDevice['createCommandEncoder'];
  readonly submit: GPUQueue['submit'];
}

// The encoder's and the command buffer's label: what a validation message or a capture tool names.
const descriptor: GPUCommandEncoderDescriptor & GPUCommandBufferDescriptor = Object.freeze({ label: 'pol zero' });

/** The clears noted on one device and not yet submitted. */
export class PendingClears {
  /** How many clears are noted: a wrapper tests this before it calls {@link PendingClears.flush}. */
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

  /** Note the clear of `size` bytes at `offset` of `buffer` (both multiples of 4, already checked). */
  add(buffer: GPUBuffer, offset: number, size: number): void {
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
