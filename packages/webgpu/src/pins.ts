/**
 * What a recorded step touches: its stats, the byte ranges it uses of each buffer, and from
 * those, the pins a graph holds (the bytes of each arena it binds that stay allocated after the
 * capture) and the owners it listens to.
 *
 * @module
 */

import type { Arena } from '@pol/arena';
import { type BufferOwner, bufferName, ownerOf } from './buffers.js';
import { deviceName } from './device.js';
import { CaptureFailedError } from './errors.js';
import { bindGroupInfo } from './metadata.js';
import type { EncoderOp } from './recorder.js';
import { arenasOver } from './slab-arenas.js';

/**
 * What a graph holds, counted.
 *
 * @example
 * ```ts
 * import { alloc } from '@pol/core';
 * import { capture, deviceArena, type GraphStats } from '@pol/webgpu';
 * const x = alloc(deviceArena(device, 4096), 'float32', [64]);
 * const graph = await capture(device, () => {
 *     const encoder = device.createCommandEncoder();
 *     encoder.clearBuffer(x.buffer, x.offset, x.size);
 *     device.queue.submit([encoder.finish()]);
 *   });
 * const { submits, passes, dispatches, copies }: GraphStats = graph.stats;
 * console.log(submits, passes, dispatches, copies); // 1 0 0 1
 * ```
 */
export interface GraphStats {
  /** Command buffers the step submitted (replayed as one). */
  readonly submits: number;
  /** Compute passes. */
  readonly passes: number;
  /** Dispatches, direct and indirect. */
  readonly dispatches: number;
  /** Buffer copies and clears. */
  readonly copies: number;
}

/** A region of an arena a graph binds: the graph is invalid once the arena releases bytes below `end`. */
export interface Pin {
  readonly arena: Arena<'gpu'>;
  readonly end: number;
}

/** A recorded step, counted, with the ranges it uses: buffer → [start, end, start, end, …]. */
export interface Touched {
  readonly stats: GraphStats;
  readonly ranges: ReadonlyMap<GPUBuffer, readonly number[]>;
}

/** Count the ops and collect the buffer ranges they read and write. */
export function touched(ops: readonly EncoderOp[], submits: number): Touched {
  const stats = { submits, passes: 0, dispatches: 0, copies: 0 };
  const ranges = new Map<GPUBuffer, number[]>();
  const touch = (buffer: GPUBuffer, offset: number, size: number) => {
    let list = ranges.get(buffer);
    if (list === undefined) {
      list = [];
      ranges.set(buffer, list);
    }
    list.push(offset, offset + size);
  };
  for (const op of ops) {
    if (op.k === 'copy') {
      stats.copies++;
      touch(op.source, op.sourceOffset, op.size);
      touch(op.destination, op.destinationOffset, op.size);
    } else if (op.k === 'clear') {
      stats.copies++;
      touch(op.buffer, op.offset, op.size);
    } else if (op.k === 'pass') {
      stats.passes++;
      for (const p of op.ops) {
        if (p.k === 'dispatch') stats.dispatches++;
        else if (p.k === 'indirect') {
          stats.dispatches++;
          touch(p.buffer, p.offset, 12);
        } else if (p.k === 'group' && p.group !== null) {
          for (const e of bindGroupInfo(p.group)?.entries ?? []) touch(e.buffer, e.offset, e.size);
        }
      }
    }
  }
  return { stats: Object.freeze(stats), ranges };
}

/**
 * The owners of every buffer the step used, and the pins in the arenas over its slabs; or the
 * reason the step cannot make a graph: a buffer that is gone, or a buffer Pol cannot watch.
 */
export function pinsOf(
  device: GPUDevice,
  label: string,
  use: Touched,
): { readonly pins: readonly Pin[]; readonly owners: readonly BufferOwner[] } {
  const pins: Pin[] = [];
  const owners: BufferOwner[] = [];
  for (const [buffer, ranges] of use.ranges) {
    const owner = ownerOf(buffer);
    if (owner === undefined) {
      throw new CaptureFailedError(
        `capture '${label}': the step uses ${bufferName(buffer)}, which was created before Pol met ${deviceName(device)}, so a graph ` +
          'could not tell when it is destroyed and would replay into a dead buffer. Call instrument(device) before creating it ' +
          '(or create it after the first device slab), or use an array from an arena.',
      );
    }
    if (owner.released !== undefined) {
      throw new CaptureFailedError(
        `capture '${label}': the step used ${owner.name}, which is gone (${owner.released}), so the graph could never replay. Bind only live arrays in the step.`,
      );
    }
    owners.push(owner);
    if (owner.kind !== 'slab') continue;
    // Every live arena over the slab is known (the storage hears of each one made): with none, no
    // arena is left that could hand these bytes to other arrays, and there is nothing to pin.
    for (const arena of arenasOver(owner)) {
      const offset = arena.offset;
      let end = 0;
      for (let i = 0; i < ranges.length; i += 2) {
        const start = ranges[i] ?? 0;
        const stop = ranges[i + 1] ?? 0;
        if (start < offset) end = Math.max(end, Math.min(stop, offset));
      }
      pins.push({ arena, end });
    }
  }
  return { pins, owners };
}
