/**
 * A device slab: one GPUBuffer that an arena carves `GpuArray`s from, and the owner of that
 * buffer (destroying it tells the graphs that bind it). Made by `deviceSlab` (`factories.ts`).
 *
 * @module
 */

import { BufferOwner } from './buffers.js';
import { type DeviceState, deviceName, whenIdle } from './device.js';
import { Usage } from './flags.js';
import { forgetArenas } from './slab-arenas.js';

declare module '@pol/arena/backend' {
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
  /** Whether kernels only read its arrays (`readOnly` when it was made): checked mode refuses binding them writable. */
  readonly readOnly: boolean;
  /** Whether {@link DeviceSlab.destroy} was called (or the buffer was destroyed directly). */
  readonly destroyed: boolean;
  /**
   * Destroy the buffer once the work submitted so far is done. Arrays carved from it are dead at
   * once (uploads, downloads, bind groups and carves refuse them), and graphs that bind it become
   * invalid. Destroying a destroyed slab does nothing.
   */
  destroy(): void;
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

/** A device slab: the owner of its buffer. */
export class SlabImpl extends BufferOwner implements DeviceSlab {
  // How messages name it: a static getter keeps `instanceof` fast (CONTRIBUTING.md, "Class names").
  static override get name(): string {
    return 'DeviceSlab';
  }
  constructor(
    readonly state: DeviceState,
    readonly buffer: GPUBuffer,
    readonly byteLength: number,
    readonly label: string,
    readonly readOnly = false,
  ) {
    super('slab', state.device, `${readOnly ? 'read-only ' : ''}device slab '${label}'`);
  }

  get destroyed(): boolean {
    return this.released !== undefined;
  }

  // However the buffer goes (slab.destroy(), buffer.destroy()), the arenas over it forget the
  // arrays they cached, so that their next alloc is refused as a first carve is.
  override release(why: string): void {
    if (this.released !== undefined) return;
    super.release(why);
    forgetArenas(this);
  }

  destroy(): void {
    if (this.released !== undefined) return;
    this.release(`${this.name} was destroyed`);
    const buffer = this.buffer;
    whenIdle(this.state, () => buffer.destroy());
  }

  override toString(): string {
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
