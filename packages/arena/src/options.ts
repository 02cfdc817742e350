/**
 * Reading `new Arena(slab, options)`: the options object and the alignment.
 *
 * @module
 */

import { describeValue, InvalidArgumentError } from '@pol/core';
import { InvalidAlignmentError } from './errors.js';
import { type AnyStorage, checkStorage } from './storage.js';

const knownOptions = new Set(['alignment', 'checked', 'storage']);

export function readOptions(options: unknown): { alignment: unknown; checked: boolean; storage: AnyStorage | undefined } {
  if (options === undefined) return { alignment: 256, checked: false, storage: undefined };
  if (typeof options !== 'object' || options === null) {
    throw new InvalidArgumentError(
      `new Arena(slab, options) takes an options object such as { alignment: 256, checked: false }, got ${describeValue(options)}.`,
    );
  }
  const o = options as { alignment?: unknown; checked?: unknown; storage?: unknown };
  for (const key of Object.keys(o)) {
    if (!knownOptions.has(key)) {
      throw new InvalidArgumentError(
        `new Arena: unknown option '${key}'. The options are alignment (a power of two), checked (a boolean) and storage (a SlabStorage).`,
      );
    }
  }
  if (o.checked !== undefined && typeof o.checked !== 'boolean') {
    throw new InvalidArgumentError(`new Arena: checked must be true or false, got ${describeValue(o.checked)}.`);
  }
  if (o.storage !== undefined) checkStorage(o.storage);
  return {
    alignment: o.alignment === undefined ? 256 : o.alignment,
    checked: o.checked === true,
    storage: o.storage as AnyStorage | undefined,
  };
}

export function checkAlignment(alignment: unknown): number {
  if (
    typeof alignment !== 'number' ||
    !Number.isSafeInteger(alignment) ||
    alignment < 1 ||
    (alignment > 2 ** 30 ? !Number.isInteger(Math.log2(alignment)) : (alignment & (alignment - 1)) !== 0)
  ) {
    throw new InvalidAlignmentError(
      `new Arena: alignment must be a power of two (1, 2, 4, ..., 256, ...), got ${describeValue(alignment)}. ` +
        'Leave it out for the default, 256.',
    );
  }
  return alignment;
}
