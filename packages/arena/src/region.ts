/**
 * Regions: the bytes of a slab an arena may use (`new Arena(slab, { byteOffset, byteLength })`),
 * checked when the arena is made, and the holds that keep two arenas of one thread off the same
 * bytes.
 *
 * @module
 */

import { describeValue } from '@pol/core/backend';
import { InvalidRegionError, MissingRegionError, RegionOverlapError } from './errors.js';
import { uint8ArrayStorage, wasmMemoryStorage } from './host.js';
import type { AnyStorage } from './types.js';

/**
 * The region an arena carves from, in bytes of its slab: `[start, start + length)`. `held` is true
 * when the arena was given a region (or must have one), so it takes a hold; false for an arena over
 * a whole slab made without region options, which declares the slab its own and checks nothing.
 */
export interface Region {
  readonly start: number;
  readonly length: number;
  readonly held: boolean;
}

// A region's first byte, in absolute terms, is a multiple of this (or of the arena's alignment, if
// smaller): the largest alignment of any dtype, so that no element ever needs padding at the start
// of a region and a region's layout is the same wherever it lies. An emscripten malloc's blocks
// always start on one.
const regionStartAlignment = 8;

/**
 * Read the region options against a slab `slabLength` bytes long whose first byte is at absolute
 * offset `base`.
 *
 * @throws {MissingRegionError} for a WebAssembly memory without a `byteOffset`.
 * @throws {InvalidRegionError} for a region that is not bytes of the slab, or one the storage cannot have.
 */
export function readRegion(
  storage: AnyStorage,
  slab: unknown,
  byteOffset: unknown,
  byteLength: unknown,
  slabLength: number,
  base: number,
  alignment: number,
): Region {
  // Over a memory the region's start must be said outright: bytes from 0 are the module's own.
  if (byteOffset === undefined && storage === (wasmMemoryStorage as unknown as AnyStorage)) throw missingRegion(slabLength);
  if (byteOffset === undefined && byteLength === undefined) return { start: 0, length: slabLength, held: false };
  if (storage.residency === 'device') {
    throw new InvalidRegionError(
      `new Arena: the storage '${storage.name}' has no regions: a device buffer's bindings must start on the device's offset alignment, ` +
        'which a region of it would not keep. Leave out byteOffset and byteLength, and give each arena a buffer of its own.',
    );
  }
  const start = byteOffset === undefined ? 0 : checkByteCount('byteOffset', byteOffset);
  if (start > slabLength) {
    throw new InvalidRegionError(
      `new Arena: byteOffset ${start} is past the end of the slab (${describeValue(slab)}, ${slabLength} bytes). ` +
        `Pass a byteOffset from 0 to ${slabLength - 1}.`,
    );
  }
  const length = byteLength === undefined ? slabLength - start : checkByteCount('byteLength', byteLength);
  if (length === 0) {
    throw new InvalidRegionError(
      `new Arena: the region at byte ${start} is 0 bytes long, so nothing could be carved from it. ` +
        `Pass a byteLength of at least 1${byteLength === undefined ? ' (or a byteOffset below the end of the slab)' : ''}.`,
    );
  }
  if (start + length > slabLength) {
    throw new InvalidRegionError(
      `new Arena: the region [${start}, ${start + length}) runs past the end of the slab, which is ${slabLength} bytes long. ` +
        `Pass a byteLength of at most ${slabLength - start} for this byteOffset.`,
    );
  }
  const startAlignment = Math.min(alignment, regionStartAlignment);
  if ((base + start) % startAlignment !== 0) {
    const absolute = base + start;
    const up = Math.ceil(absolute / startAlignment) * startAlignment - base;
    throw new InvalidRegionError(
      `new Arena: a region must start on a multiple of ${startAlignment} bytes, and byteOffset ${start} ` +
        (base === 0 ? 'is not one' : `is byte ${absolute} of the memory its views index, which is not one`) +
        `. Round it up to ${up} (and shorten byteLength to match), or allocate the region with an aligned allocator.`,
    );
  }
  return { start, length, held: true };
}

function checkByteCount(name: 'byteOffset' | 'byteLength', value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new InvalidRegionError(
      `new Arena: ${name} must be a non-negative integer number of bytes, got ${describeValue(value)}. ` +
        (name === 'byteOffset'
          ? 'Pass the first byte of the region (a pointer the module returned, for a WebAssembly memory).'
          : 'Pass the size of the region in bytes, or leave it out for the rest of the slab.'),
    );
  }
  return value;
}

function missingRegion(slabLength: number): MissingRegionError {
  return new MissingRegionError(
    `new Arena(memory): this WebAssembly.Memory (${slabLength} bytes now) may hold a module's own heap, stack and data, ` +
      "and an arena over all of it would carve over them without a word. Say which bytes are the arena's: " +
      'new Arena(memory, { byteOffset: ptr, byteLength: n }) with ptr = module._malloc(n), taken once at start-up; ' +
      'or new Arena(memory, { byteOffset: 0 }) for a memory that holds nothing but the arena.',
  );
}

// --- holds -------------------------------------------------------------------------------------

/** What a region's holder must answer: whether it still holds it, and how messages name it. */
export interface RegionHolder {
  readonly disposed: boolean;
  toString(): string;
}

/** One held region, in absolute bytes of its owner. */
class Hold {
  constructor(
    readonly start: number,
    readonly end: number,
    readonly holder: WeakRef<RegionHolder>,
  ) {}

  /** The holder, while it holds the region: not collected and not disposed. */
  live(): RegionHolder | undefined {
    const holder = this.holder.deref();
    return holder === undefined || holder.disposed ? undefined : holder;
  }
}

// The held regions of each byte owner (a buffer, or a memory), weakly: a slab that dies takes its
// holds with it. One thread's arenas only; another thread's claims are not seen here.
const holds = new WeakMap<object, Hold[]>();

/**
 * The object that owns a slab's bytes, and where the slab starts in it: a Uint8Array's buffer, and
 * every other slab itself (a memory, not its current buffer, which a grow replaces).
 */
function ownerOf(storage: AnyStorage, slab: unknown): { owner: object; base: number } {
  if (storage === (uint8ArrayStorage as unknown as AnyStorage)) {
    const bytes = slab as Uint8Array;
    return { owner: bytes.buffer, base: bytes.byteOffset };
  }
  return { owner: slab as object, base: 0 };
}

/**
 * Refuse `region` of `slab` if it overlaps a region a live arena of this thread holds.
 *
 * @throws {RegionOverlapError} naming both regions and the holder.
 */
export function checkOverlap(storage: AnyStorage, slab: unknown, region: Region): void {
  if (!region.held) return;
  const { owner, base } = ownerOf(storage, slab);
  const list = holds.get(owner);
  if (list === undefined) return;
  const start = base + region.start;
  const end = start + region.length;
  for (const hold of list) {
    if (hold.start >= end || start >= hold.end) continue;
    const holder = hold.live();
    if (holder === undefined) continue;
    throw new RegionOverlapError(
      `new Arena: the region [${region.start}, ${region.start + region.length}) overlaps bytes [${hold.start - base}, ${hold.end - base}) ` +
        `of the same slab, which ${holder} holds: two arenas over the same bytes would overwrite each other's arrays. ` +
        'Dispose that arena first (arena.dispose(), or declare it with using), or give this one bytes outside its region.',
    );
  }
}

/** Record that `holder` holds `region` of `slab` (checked by {@link checkOverlap}); returns the release. */
export function hold(storage: AnyStorage, slab: unknown, region: Region, holder: RegionHolder): (() => void) | undefined {
  if (!region.held) return undefined;
  const { owner, base } = ownerOf(storage, slab);
  let list = holds.get(owner);
  if (list === undefined) {
    list = [];
    holds.set(owner, list);
  }
  // Drop the holds of arenas that were disposed or collected since, so the list stays as long as
  // the regions held now.
  let kept = 0;
  for (const h of list) if (h.live() !== undefined) list[kept++] = h;
  list.length = kept;
  const entry = new Hold(base + region.start, base + region.start + region.length, new WeakRef(holder));
  list.push(entry);
  const owned = list;
  return () => {
    const at = owned.indexOf(entry);
    if (at >= 0) owned.splice(at, 1);
  };
}
