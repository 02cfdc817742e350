// Internal: all-or-nothing allocation through a space's savepoint protocol (arenas and frames have
// one; `Similar` does not, and its arrays are simply left to the garbage collector).

import { rollbackKey, type Space, savepointKey } from '@pol/core';
import { attachSuppressed } from './shared.js';

/** What `savepoint` returns for a space without the protocol, and what a call that allocates nothing holds. */
export const NO_SAVEPOINT: unique symbol = Symbol('no savepoint');

/** A savepoint on `space` if it supports them (an arena, a frame), else {@link NO_SAVEPOINT}. */
export function savepoint(space: Space): unknown {
  const save = space[savepointKey];
  return save === undefined ? NO_SAVEPOINT : save.call(space);
}

/**
 * Undo every allocation from `space` since `token` was taken, where the space supports it. A
 * failure while rolling back is attached to `error` (as `suppressed`) rather than replacing it.
 */
export function rollback(space: Space, token: unknown, error: unknown): void {
  if (token === NO_SAVEPOINT) return;
  const undo = space[rollbackKey];
  if (undo === undefined) return;
  try {
    undo.call(space, token);
  } catch (undoError) {
    attachSuppressed(error, undoError);
  }
}
