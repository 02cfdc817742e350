/**
 * What counts as a storage at run time: `defineStorage` and the `storage` option check a value
 * against the {@link SlabStorage} interface (types.ts) before an arena or the registry uses it.
 *
 * @module
 */

import { InvalidArgumentError, type Kind, type PolArray } from '@pol/core';
import { describeValue } from '@pol/core/backend';
import { InvalidSlabError } from './errors.js';
import type { SlabStorage } from './types.js';

const optionalMembers = ['byteOffset', 'checkSlab', 'checkAlignment', 'reserve', 'carveChecked', 'poison', 'attach'] as const;

/**
 * Throw an `InvalidArgumentError` unless `storage` has every required member of a SlabStorage, and
 * every optional member it has is a method.
 */
export function checkStorage(storage: unknown): void {
  const s = storage as Partial<Record<keyof SlabStorage<unknown, Kind>, unknown>> | null;
  const ok =
    typeof s === 'object' &&
    s !== null &&
    typeof s.name === 'string' &&
    typeof s.kind === 'string' &&
    (s.residency === 'host' || s.residency === 'device') &&
    typeof s.matches === 'function' &&
    typeof s.byteLength === 'function' &&
    typeof s.carve === 'function';
  if (!ok) {
    throw new InvalidArgumentError(
      `A storage needs a SlabStorage (name, kind, residency, matches, byteLength, carve), got ${describeValue(storage)}. ` +
        'See the SlabStorage interface of @pol/arena.',
    );
  }
  const optional = s as Record<string, unknown>;
  for (const member of optionalMembers) {
    const value = optional[member];
    if (value !== undefined && typeof value !== 'function') {
      throw new InvalidArgumentError(
        `The storage '${String(optional.name)}' is not a SlabStorage: its ${member} must be a function, got ${describeValue(value)}. ` +
          'Give it the method, or leave the member out.',
      );
    }
  }
}

/**
 * What a storage's `carve` returned, if it is an array object (anything else is the storage's
 * mistake, refused before the arena records or caches anything).
 *
 * @throws {InvalidSlabError} for a result that is no object.
 */
export function carvedBy(storage: { readonly name: string }, carved: unknown): PolArray {
  if (typeof carved !== 'object' || carved === null) {
    throw new InvalidSlabError(
      `the storage '${storage.name}' carved ${describeValue(carved)}: a storage's carve must return the array it made over the slab. Fix the storage's carve.`,
    );
  }
  return carved as PolArray;
}
