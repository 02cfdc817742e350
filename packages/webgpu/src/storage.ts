/**
 * The arena storage of device slabs: what `@pol/arena` calls to check a slab and an alignment, to
 * carve a `GpuArray` from a slab (checked or not), to attach each arena (so that it forgets its
 * cached arrays when the slab dies), and to poison released bytes in checked mode.
 * Registered by the first `deviceSlab` call, so that the package has no import side effects.
 *
 * @module
 */

import { type ArrayLife, defineStorage, POISON_BYTE, type SlabStorage } from '@pol/arena/backend';
import { byteLength, type DType, InvalidArgumentError } from '@pol/core';
import { describeValue, shapeText } from '@pol/core/backend';
import { type GpuArray, makeCheckedGpuArray, makeGpuArray } from './array.js';
import { startChecking } from './checked.js';
import { assertAlive } from './device.js';
import { Usage } from './flags.js';
import { bindingSize, checkAlignment, checkBindingSize } from './limits.js';
import { type DeviceSlab, isDeviceSlab, type SlabImpl } from './slab.js';
import { attachArena } from './slab-arenas.js';

// Checked arenas poison what they release: the whole range with @pol/arena's integer pattern, then
// each released float array with all bits set, a NaN in float16, float32 and float64 alike.
const POISON_CHUNK = 1 << 20;
const poisons = new Map<number, Uint8Array>();

function poisonChunk(byte: number): Uint8Array {
  let chunk = poisons.get(byte);
  if (chunk === undefined) {
    chunk = new Uint8Array(POISON_CHUNK).fill(byte);
    poisons.set(byte, chunk);
  }
  return chunk;
}

const gpuStorage: SlabStorage<DeviceSlab, 'gpu'> = {
  name: 'GPUBuffer',
  kind: 'gpu',
  residency: 'device',
  matches: isDeviceSlab,
  byteLength: (slab) => slab.byteLength,
  checkSlab(slab) {
    const s = slab as SlabImpl;
    if (s.destroyed) {
      throw new InvalidArgumentError(
        `Cannot make an arena over ${s.name}: it was destroyed. Make a new slab with deviceSlab(device, bytes).`,
      );
    }
    assertAlive(s.state, `make an arena over ${s.name}`);
  },
  checkAlignment(slab, alignment) {
    checkAlignment(
      slab.device,
      slab.buffer.usage,
      alignment,
      `An arena over ${(slab as SlabImpl).name}`,
      'Make it with new Arena(slab, { alignment }), or use deviceArena, which reads the limits for you.',
    );
  },
  reserve: bindingSize,
  carve<D extends DType>(slab: DeviceSlab, offset: number, dtype: D, dims: readonly number[]): GpuArray<D> {
    const bytes = checkCarve(slab as SlabImpl, offset, dtype, dims);
    return makeGpuArray(slab.device, slab.buffer, offset, dtype, dims, bytes);
  },
  carveChecked<D extends DType>(
    slab: DeviceSlab,
    offset: number,
    dtype: D,
    dims: readonly number[],
    life: ArrayLife,
  ): GpuArray<D> {
    const s = slab as SlabImpl;
    const bytes = checkCarve(s, offset, dtype, dims);
    // A checked arena over this device: the owner checks every dispatch's bindings from now on.
    startChecking(s.state);
    return makeCheckedGpuArray(s.device, s.buffer, offset, dtype, dims, bytes, life);
  },
  // Every arena over a slab, to make it forget its cached arrays when the slab dies (destroyed, its
  // buffer destroyed, its device lost): its next carve then comes here and is refused.
  attach(slab, arena, forget) {
    // A checked arena switches the device's checks on as it is made, before anything is carved:
    // a pass begun after it and before its first carve is checked too.
    if (arena.checked) startChecking((slab as SlabImpl).state);
    attachArena(slab, (slab as SlabImpl).state, arena, forget);
  },
  poison(slab, offset, length, dtype) {
    const s = slab as SlabImpl;
    if (s.destroyed || s.state.lost !== undefined) return;
    // WebGPU writes whole 4-byte words; released ranges start on the arena's alignment.
    const start = Math.ceil(offset / 4) * 4;
    const end = Math.min(s.byteLength, Math.ceil((offset + length) / 4) * 4);
    if (end <= start) return;
    const pattern = poisonChunk(dtype === undefined ? POISON_BYTE : 0xff);
    // The queue's own writeBuffer: a frame closing inside a captured step still poisons what it
    // released (in the eager run only), which the recording would refuse as a host write.
    const queue = s.device.queue;
    s.state.clears.flush(); // a clear noted before the release lands before the poison, as it would have
    for (let at = start; at < end; at += POISON_CHUNK) {
      s.state.raw.writeBuffer.call(queue, s.buffer, at, pattern.buffer, 0, Math.min(POISON_CHUNK, end - at));
    }
  },
};

/** Check a carve the arena asks for; its byte length. */
function checkCarve(slab: SlabImpl, offset: number, dtype: DType, dims: readonly number[]): number {
  const shape = shapeText(dtype, dims);
  if (slab.destroyed) {
    throw new InvalidArgumentError(`Cannot carve ${shape} from ${slab.name}: it was destroyed. Make a new slab and arena.`);
  }
  assertAlive(slab.state, `carve ${shape} from ${slab.name}`);
  const bytes = byteLength(dtype, dims);
  const size = bindingSize(bytes);
  if (!Number.isSafeInteger(offset) || offset < 0 || offset % 4 !== 0 || offset + size > slab.byteLength) {
    throw new InvalidArgumentError(
      `Cannot carve ${shape} (${size} bytes) at offset ${describeValue(offset)} of ${slab.name} (${slab.byteLength} bytes): ` +
        'the offset must be a non-negative multiple of 4 and the range must fit in the slab.',
    );
  }
  if ((slab.buffer.usage & Usage.STORAGE) !== 0) checkBindingSize(slab.device, size, `${shape} in ${slab.name}`);
  return bytes;
}

let registered = false;

/** Register the device-slab storage with `@pol/arena` (once). */
export function registerStorage(): void {
  if (registered) return;
  registered = true;
  defineStorage(gpuStorage);
}
