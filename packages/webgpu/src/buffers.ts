/**
 * Who owns each GPUBuffer Pol knows, and who must hear when it goes: a device slab, one `Similar`
 * allocation, or a buffer the client created on an instrumented device (a readback target, say).
 * Graphs listen to the owners of every buffer they touch, so that destroying any of them
 * invalidates the graph at once instead of failing a later replay asynchronously.
 *
 * @module
 */

/** Something that must learn when a buffer it uses goes away (a graph). */
export interface ReleaseListener {
  bufferReleased(owner: BufferOwner): void;
}

/** The owner of one GPUBuffer that Pol knows. */
export class BufferOwner {
  #released: string | undefined;
  /** Graphs that use this buffer. */
  readonly listeners = new Set<ReleaseListener>();

  constructor(
    readonly kind: 'slab' | 'similar' | 'client',
    /** The device the buffer belongs to. */
    readonly device: GPUDevice,
    /** The buffer, for messages: `device slab 'acts'`, `a Similar buffer (float32[4])`, `buffer 'readback'`. */
    readonly name: string,
  ) {}

  /** Why the buffer is gone (destroyed, its frame closed), or `undefined` while it is alive. */
  get released(): string | undefined {
    return this.#released;
  }

  /** Mark the buffer gone, for `why`, and tell its listeners (once). */
  release(why: string): void {
    if (this.#released !== undefined) return;
    this.#released = why;
    for (const listener of [...this.listeners]) listener.bufferReleased(this);
    this.listeners.clear();
  }
}

const owners = new WeakMap<GPUBuffer, BufferOwner>();

/** Register who owns a buffer (Pol's own buffers replace the client owner the device gave them). */
export function setOwner(buffer: GPUBuffer, owner: BufferOwner): void {
  owners.set(buffer, owner);
}

/** The owner of a buffer, or `undefined` for a buffer made before Pol met its device. */
export function ownerOf(buffer: GPUBuffer): BufferOwner | undefined {
  return owners.get(buffer);
}

/** `buffer 'label'`, or `an unlabeled buffer`. */
export function labelName(buffer: GPUBuffer): string {
  const label = typeof buffer.label === 'string' ? buffer.label : '';
  return label === '' ? 'an unlabeled buffer' : `buffer '${label}'`;
}

/** `device slab 'acts'`, `a Similar buffer (…)`, `buffer 'label'` or `an unlabeled buffer`. */
export function bufferName(buffer: GPUBuffer): string {
  return owners.get(buffer)?.name ?? labelName(buffer);
}
