import { attachSuppressed } from './failure.js';
import { commitKey, rollbackKey, type Space, savepointKey } from './space.js';

/**
 * What {@link savepoint} returns for a space without the savepoint protocol: rolling back to it
 * and committing it do nothing.
 */
export const noSavepoint: unique symbol = Symbol('@pol/core/noSavepoint') as never;

/**
 * A savepoint on `space` (its `[savepointKey]()` token), or {@link noSavepoint} when the space
 * has no savepoint protocol. Take one before materializing several specs that must succeed or
 * fail together; then end it exactly once, innermost first: {@link rollback} to it on failure,
 * {@link commit} it on success.
 *
 * @example
 * ```ts
 * import { Similar } from '@pol/core';
 * import { noSavepoint, savepoint } from '@pol/core/backend';
 * console.log(savepoint(Similar(new Float32Array(0))) === noSavepoint); // true: a GC space has nothing to undo
 * ```
 */
export function savepoint(space: Space): unknown {
  const save = space[savepointKey];
  return save === undefined ? noSavepoint : save.call(space);
}

/**
 * Undo every allocation from `space` since `token` was taken with {@link savepoint}, after
 * `error` made the work fail. A failure while rolling back is attached to `error` as
 * `error.suppressed` instead of replacing it; rethrow `error` afterwards.
 *
 * @example
 * ```ts
 * import { Similar, Undef } from '@pol/core';
 * import { materializeInto, rollback, savepoint } from '@pol/core/backend';
 * const space = Similar(new Float32Array(0));
 * const token = savepoint(space);
 * try {
 *   materializeInto(space, { y: Undef('float32', 2) }, {});
 *   throw new Error('the kernel failed');
 * } catch (error) {
 *   rollback(space, token, error); // nothing to undo on a GC space; an arena retracts
 * }
 * ```
 */
export function rollback(space: Space, token: unknown, error: unknown): void {
  if (token === noSavepoint) return;
  try {
    space[rollbackKey]?.call(space, token);
  } catch (rollbackError) {
    attachSuppressed(error, rollbackError);
  }
}

/**
 * End `token` (taken with {@link savepoint}) because the work since succeeded: the space forgets
 * what it kept to roll that work back, and what was allocated is the caller's. Inside an enclosing
 * savepoint on the same space the arrays stay covered by it, so a failure of the outer work still
 * releases them. Does nothing for {@link noSavepoint} or a space without `[commitKey]` (an arena,
 * whose savepoint is an offset that keeps nothing).
 *
 * Call it once the work is done, not when the allocation is: a verb commits after its kernel
 * returns (or, for an async kernel, resolves), so that a kernel failing releases its outputs.
 *
 * @throws {InvalidArgumentError} from core's `Similar` space when `token` is not one of its open
 * savepoints (committed or rolled back already, or another space's), changing nothing.
 * @example
 * ```ts
 * import { Similar, Undef } from '@pol/core';
 * import { commit, materializeInto, rollback, savepoint } from '@pol/core/backend';
 * const space = Similar(new Float32Array(0));
 * const into: Record<string, unknown> = {};
 * const token = savepoint(space);
 * try {
 *   materializeInto(space, { y: Undef('float32', 2) }, into);
 * } catch (error) {
 *   rollback(space, token, error);
 *   throw error;
 * }
 * commit(space, token); // y is ours to keep
 * ```
 */
export function commit(space: Space, token: unknown): void {
  if (token === noSavepoint) return;
  space[commitKey]?.call(space, token);
}
