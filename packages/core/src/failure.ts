/**
 * Keeping the first error when a clean-up fails too: the error a caller needs to see is the one
 * that made the operation fail, so a second failure (closing a frame, rolling back) rides along on
 * it as `error.suppressed` instead of replacing it.
 *
 * @module
 */

/**
 * Attach `secondary` to `error` as its `suppressed` property, without replacing `error`. The first
 * attached failure is kept: an error that already carries a `suppressed` property is left as it
 * is, and so are a thrown value that is not an object (a thrown string cannot carry anything) and
 * a frozen error. It never throws, so it is safe inside a `catch` block.
 *
 * @example
 * ```ts
 * import { attachSuppressed } from '@pol/core/backend';
 * const error = new Error('the allocation failed');
 * attachSuppressed(error, new Error('and the rollback failed too'));
 * console.log((error as Error & { suppressed: Error }).suppressed.message); // 'and the rollback failed too'
 * ```
 */
export function attachSuppressed(error: unknown, secondary: unknown): void {
  if (typeof error !== 'object' || error === null || 'suppressed' in error) return;
  try {
    Object.defineProperty(error, 'suppressed', { value: secondary, configurable: true, writable: true });
  } catch {
    // A frozen error (or a proxy that refuses) keeps only itself: throwing here would replace it.
  }
}

/**
 * Close `closable` after `error` made the work inside it fail; if closing throws too, that failure
 * is attached to `error` (see {@link attachSuppressed}) rather than replacing it. Rethrow `error`
 * afterwards.
 *
 * @example
 * ```ts
 * import { scratchspace, Similar } from '@pol/core';
 * import { closeAfterFailure } from '@pol/core/backend';
 * const frame = scratchspace(Similar(new Float32Array(0)));
 * try {
 *   throw new Error('the kernel failed');
 * } catch (error) {
 *   closeAfterFailure(frame, error); // the frame is closed; a close failure would ride on error
 *   console.log(frame.isOpen, (error as Error).message); // false 'the kernel failed'
 * }
 * ```
 */
export function closeAfterFailure(closable: { close(): void }, error: unknown): void {
  try {
    closable.close();
  } catch (closeError) {
    attachSuppressed(error, closeError);
  }
}
