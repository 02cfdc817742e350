// Internal: how a verb call's arguments are read. Space-first or ambient, then the inputs, then the
// options object; and, for a call without a space, where its buffers come from. `resolveSpace` is
// shared with Shadows.

import { type AnyArray, ambientspace, isArray, isSpace, Similar, type Space } from '@pol/core';
import { isPlainObject, spaceKey } from '@pol/core/backend';
import type { KnownSpaces, SpaceRecord } from './reuse.js';

/** The most arguments a verb reads (it cannot tell how many were passed past them). */
export const MOST_ARGUMENTS = 11;

/**
 * One call's arguments, as the verb was called: `values[0..count)`, the space first when
 * `start === 1`, then `inputs` inputs, then the options object when there is one. A verb keeps one
 * of these and reuses it for every call (a call that finds it taken, because the same verb is
 * called again before the first call ends, gets a fresh one), so that reading its arguments
 * allocates nothing.
 */
export class CallArgs {
  // Room for every argument a verb reads, so that filling them never grows it.
  readonly values: unknown[] = new Array<unknown>(MOST_ARGUMENTS).fill(undefined);
  count = 0;
  start = 0;
  inputs = 0;
  options: Record<string, unknown> | undefined;
  /** The verb's record of the leading space, when it remembers that space (see `KnownSpaces`). */
  record: SpaceRecord | undefined;
  /** Whether this call's plan was made for it (so it was checked in full just now). */
  fresh = false;
  /** Whether a call owns this record (from its first step until it returns or settles). */
  busy = false;

  /** Input `i`, counting from 0 after the space. */
  input(i: number): unknown {
    return this.values[this.start + i];
  }

  /**
   * Split the arguments: the first is the space exactly when it is one; the last is the options
   * object when it is a plain object and the call fills every parameter the kernel declares after
   * its destinations (`declared`, as JavaScript counts them); everything else is an input. A space
   * the verb remembers (`known`) is recognised by identity, and its record kept in `record`.
   */
  split(declared: number, known: KnownSpaces): void {
    const n = this.count;
    let start = 0;
    let record: SpaceRecord | undefined;
    if (n > 0) {
      const first = this.values[0];
      record = known.get(first);
      if (record !== undefined || isSpace(first)) start = 1;
    }
    this.record = record;
    let inputs = n - start;
    let options: Record<string, unknown> | undefined;
    const last = this.values[n - 1];
    if (inputs > 0 && inputs >= declared && isPlainObject(last)) {
      options = last;
      inputs--;
    }
    this.start = start;
    this.inputs = inputs;
    this.options = options;
  }

  /** Drop the call's references, and let the next call have this record. */
  release(): void {
    const values = this.values;
    for (let i = 0; i < this.count; i++) values[i] = undefined;
    this.count = 0;
    this.options = undefined;
    this.record = undefined;
    this.fresh = false;
    this.busy = false;
  }
}

/**
 * A space that is never bound: `ambientspace(UNBOUND) === UNBOUND` says "no ambient space" without
 * a throw or an allocation. Never allocated from.
 */
export const UNBOUND: Space = Object.freeze({
  [spaceKey]: 'host' as const,
  alloc(): never {
    throw new Error('unreachable: the @pol/verbs sentinel space is never allocated from');
  },
});

/**
 * Where a call without a space allocates: the ambient space, or else `Similar` of the first array
 * among `values[from..to)`; `undefined` when there is neither (the caller says why, in its terms).
 */
export function resolveSpace(values: readonly unknown[], from: number, to: number): Space | undefined {
  const bound = ambientspace(UNBOUND);
  if (bound !== UNBOUND) return bound;
  const exemplar = firstArray(values, from, to);
  return exemplar === undefined ? undefined : Similar(exemplar);
}

/** The first array among `values[from..to)` or, failing that, inside plain objects among them. */
export function firstArray(values: readonly unknown[], from: number, to: number): AnyArray | undefined {
  for (let i = from; i < to; i++) if (isArray(values[i])) return values[i] as AnyArray;
  for (let i = from; i < to; i++) {
    const found = findArray(values[i], 0);
    if (found !== undefined) return found;
  }
  return undefined;
}

function findArray(x: unknown, depth: number): AnyArray | undefined {
  if (isArray(x)) return x;
  if (depth > 16) return undefined;
  if (Array.isArray(x)) {
    for (const element of x) {
      const found = findArray(element, depth + 1);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (!isPlainObject(x)) return undefined;
  for (const key in x) {
    const found = findArray(x[key], depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}
