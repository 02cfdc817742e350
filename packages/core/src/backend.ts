/**
 * `@pol/core/backend`: what a backend author (a new kind of memory: a WASM heap, another GPU API)
 * and every Pol package build on, and what a user of Pol never needs. The backend protocol (the
 * symbols a space, a frame and an array carry, the array family and its zeroing, frames that only
 * scope, the ambient store), and the small helpers that every package shares instead of copying:
 * the one spec materializer (with the caller's own buffers merged in by name, savepoints and
 * rollback and commit), dims interning and comparison, the `dtype[dims]` text, value description for
 * messages, reading an options object, the thenable and power-of-two tests, the spare stack of a
 * cycle-checking walk, and keeping a first error when a clean-up fails too.
 *
 * Import the user-facing vocabulary (`alloc`, `Undef`, `Similar`, `zeroArray`, the types) from
 * `@pol/core`: no name is exported from both entry points.
 *
 * @example
 * ```ts
 * import { alloc, Similar } from '@pol/core';
 * import { familyOf, hostFamily, internDims, shapeText } from '@pol/core/backend';
 * const y = alloc(Similar(new Float32Array(0)), 'float32', internDims([2, 3]));
 * console.log(familyOf(y) === hostFamily, shapeText(y.dtype, y.dims)); // true 'float32[2, 3]'
 * ```
 *
 * @packageDocumentation
 */

export {
  type AmbientBinder,
  type AmbientStore,
  ambientBinder,
  bindAmbient,
  contextStore,
  lazyContextStore,
  setAmbientStore,
  syncStore,
} from './ambient.js';
export { keepAncestors, takeAncestors } from './ancestors.js';
export { type ArrayFamily, familyKey, familyOf, hostFamily, makeHostArray, valueText } from './array.js';
export { isAsyncFunction } from './context-variable.js';
export { frozenDims, internDim, internDims, sameDims } from './dims.js';
export { attachSuppressed, closeAfterFailure } from './failure.js';
export { openFrame, scopeFrame } from './frame.js';
export { materializeInto } from './materialize.js';
export { readOptions } from './options.js';
export { passedCount } from './passed.js';
export { isPowerOfTwo } from './power-of-two.js';
export { commit, noSavepoint, rollback, savepoint } from './savepoint.js';
export { shapeText } from './shape.js';
export { allocLengthKey, assertSpace, commitKey, frameKey, openFrameKey, rollbackKey, savepointKey, spaceKey } from './space.js';
export { checkSupplied, type SuppliedProblem } from './supplied.js';
export { describeValue, isPlainObject, isThenable } from './value.js';
