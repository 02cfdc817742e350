/**
 * Reading `new Arena(slab, options)`: the options object, the alignment, and the slab with its
 * storage and region, every one checked before the arena is made.
 *
 * @module
 */

import { InvalidArgumentError } from '@pol/core';
import { describeValue, isPowerOfTwo, readOptions } from '@pol/core/backend';
import { type ClaimHooks, claimKey } from './claim-key.js';
import { InvalidAlignmentError, InvalidSlabError } from './errors.js';
import { checkOverlap, type Region, readRegion } from './region.js';
import { storageFor } from './registry.js';
import { checkStorage } from './storage.js';
import type { AnyStorage } from './types.js';

/**
 * `alignment`, checked to be a power of two.
 *
 * @throws {InvalidAlignmentError} for anything else.
 */
export function checkAlignment(alignment: unknown): number {
  if (!isPowerOfTwo(alignment)) {
    throw new InvalidAlignmentError(
      `new Arena: alignment must be a power of two (1, 2, 4, ..., 256, ...), got ${describeValue(alignment)}. ` +
        'Leave it out for the default, 256.',
    );
  }
  return alignment;
}

/** `new Arena(slab, options)`'s arguments, checked: what an arena is made from. */
export interface ArenaArguments {
  /** The storage that carves the slab: the `storage` option, or the registered one that matches it. */
  readonly storage: AnyStorage;
  /** A power of two (default 256) that the storage accepts. */
  readonly alignment: number;
  readonly checked: boolean;
  /** The bytes of the slab the arena carves from, free of every live arena's of this thread. */
  readonly region: Region;
  /** The absolute byte offset of region byte 0 in the memory views index. */
  readonly base: number;
  /** Set by `claimRegion` only (see claim-key.ts). */
  readonly claim: ClaimHooks | undefined;
}

/**
 * Check `new Arena(slab, options)`'s arguments: the options, the slab against its storage, the
 * alignment, and the region against the slab and the regions other arenas hold.
 *
 * @throws {InvalidArgumentError} for options that are not an object, an unknown option, a `checked`
 * that is not a boolean, or a `storage` that is not a SlabStorage.
 * @throws {InvalidSlabError} for a slab no storage accepts, one its storage refuses, or a storage
 * that reports a size or offset that is not a non-negative integer.
 * @throws {InvalidAlignmentError} for an alignment that is not a power of two.
 * @throws {InvalidRegionError} {MissingRegionError} {RegionOverlapError} for a region `readRegion`
 * or `checkOverlap` refuses.
 */
export function arenaArguments(slab: unknown, options: unknown): ArenaArguments {
  const o = readOptions('new Arena(slab, options)', options, ['alignment', 'checked', 'storage', 'byteOffset', 'byteLength']);
  if (o.checked !== undefined && typeof o.checked !== 'boolean') {
    throw new InvalidArgumentError(`new Arena: checked must be true or false, got ${describeValue(o.checked)}.`);
  }
  if (o.storage !== undefined) checkStorage(o.storage);
  const given = o.storage as AnyStorage | undefined;
  const storage = given ?? storageFor(slab, 'new Arena(slab)');
  if (given !== undefined && !given.matches(slab)) {
    throw new InvalidSlabError(
      `new Arena: the storage '${given.name}' does not accept ${describeValue(slab)}. Pass a slab it matches, or leave out the storage option.`,
    );
  }
  storage.checkSlab?.(slab as never);
  const alignment = checkAlignment(o.alignment === undefined ? 256 : o.alignment);
  storage.checkAlignment?.(slab as never, alignment);
  const slabLength = storage.byteLength(slab as never);
  const slabBase = storage.byteOffset?.(slab as never) ?? 0;
  if (!Number.isSafeInteger(slabLength) || slabLength < 0 || !Number.isSafeInteger(slabBase) || slabBase < 0) {
    throw new InvalidSlabError(
      `new Arena: the storage '${storage.name}' reports ${slabLength} bytes at byte offset ${slabBase} for ${describeValue(slab)}; both must be non-negative integers.`,
    );
  }
  const region = readRegion(storage, slab, o.byteOffset, o.byteLength, slabLength, slabBase, alignment);
  checkOverlap(storage, slab, region);
  const claim = (options as { [claimKey]?: ClaimHooks } | undefined)?.[claimKey];
  return { storage, alignment, checked: o.checked === true, region, base: slabBase + region.start, claim };
}
