/**
 * Reading `new Arena(slab, options)`: the options object and the alignment.
 *
 * @module
 */

import { InvalidArgumentError } from '@pol/core';
import { describeValue, isPowerOfTwo, readOptions } from '@pol/core/backend';
import { type ClaimHooks, claimKey } from './claim-key.js';
import { InvalidAlignmentError } from './errors.js';
import { type AnyStorage, checkStorage } from './storage.js';

/** The options of an arena, with their defaults filled in; the alignment is checked by {@link checkAlignment}. */
export interface ArenaSettings {
  readonly alignment: unknown;
  readonly checked: boolean;
  readonly storage: AnyStorage | undefined;
  /** The region options as given, checked against the slab by `readRegion` (region.ts). */
  readonly byteOffset: unknown;
  readonly byteLength: unknown;
  /** Set by `claimRegion` only (see claim-key.ts). */
  readonly claim: ClaimHooks | undefined;
}

/**
 * Read `new Arena(slab, options)`'s options.
 *
 * @throws {InvalidArgumentError} for options that are not an object, an unknown option, a `checked`
 * that is not a boolean, or a `storage` that is not a SlabStorage.
 */
export function arenaSettings(options: unknown): ArenaSettings {
  const o = readOptions('new Arena(slab, options)', options, ['alignment', 'checked', 'storage', 'byteOffset', 'byteLength']);
  if (o.checked !== undefined && typeof o.checked !== 'boolean') {
    throw new InvalidArgumentError(`new Arena: checked must be true or false, got ${describeValue(o.checked)}.`);
  }
  if (o.storage !== undefined) checkStorage(o.storage);
  return {
    alignment: o.alignment === undefined ? 256 : o.alignment,
    checked: o.checked === true,
    storage: o.storage as AnyStorage | undefined,
    byteOffset: o.byteOffset,
    byteLength: o.byteLength,
    claim: (options as { [claimKey]?: ClaimHooks } | undefined)?.[claimKey],
  };
}

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
