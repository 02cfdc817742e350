/// <reference lib="esnext.disposable" preserve="true" />
import type { ArrayOf, Kind } from './array.js';
import type { DType } from './dtype.js';
import { NotASpaceError } from './errors.js';
import { describeValue } from './value.js';

/**
 * The brand every space carries, holding its {@link Kind}. "Is the first argument a space?" is one
 * property read. Registered with `Symbol.for`, so spaces from two copies of `@pol/core` interoperate.
 */
export const spaceKey: unique symbol = Symbol.for('@pol/core/space') as never;

/**
 * Optional space protocol: open a {@link Frame} on this space (an arena marks here and retracts on
 * close). A space without it gets a frame that only scopes lifetimes, as on a GC space.
 */
export const openFrameKey: unique symbol = Symbol.for('@pol/core/openFrame') as never;

/**
 * Optional space protocol: take a savepoint before a multi-array allocation (a spec), so that a
 * failure part-way can be rolled back with {@link rollbackKey} and leave the space unchanged. The
 * token it returns is ended exactly once: by {@link rollbackKey} when the work failed, by
 * {@link commitKey} when it succeeded (see `commit` in `@pol/core/backend`).
 */
export const savepointKey: unique symbol = Symbol.for('@pol/core/savepoint') as never;

/** Optional space protocol: undo every allocation made since a {@link savepointKey} token was taken. */
export const rollbackKey: unique symbol = Symbol.for('@pol/core/rollback') as never;

/**
 * Optional space protocol: the work since a {@link savepointKey} token was taken succeeded, so
 * forget what the space kept to roll it back. A space that keeps nothing per token (an arena,
 * whose savepoint is an offset) omits it; one that tracks what it allocated (a `Similar` space
 * over GPU buffers) implements it, or it would hold every array it made.
 *
 * @example A space that counts the savepoints still open: core's materializer ends each one.
 * ```ts
 * import { alloc, Similar, type Space, Undef } from '@pol/core';
 * import { commitKey, rollbackKey, savepointKey, spaceKey } from '@pol/core/backend';
 * const host = Similar(new Float32Array(0));
 * let open = 0;
 * const space: Space<'host'> = {
 *   [spaceKey]: 'host',
 *   alloc: (dtype, dims) => host.alloc(dtype, dims),
 *   [savepointKey]: () => ++open,
 *   [rollbackKey]: () => void open--,
 *   [commitKey]: () => void open--,
 * };
 * alloc(space, { a: Undef('float32', 2), b: Undef('float32', 2) });
 * console.log(open); // 0: the spec succeeded, and its savepoint was committed
 * ```
 */
export const commitKey: unique symbol = Symbol.for('@pol/core/commit') as never;

/**
 * Optional space protocol: `[allocLengthKey](dtype, length)` hands out what `alloc(dtype, [length])`
 * would, a 1-D array of `length` elements, without dims to pass. Core's `alloc(space, dtype, n)`
 * (and its ambient form `alloc(dtype, n)`) calls it when the space has it, with `n` already checked
 * to be a non-negative safe integer and the dtype not checked at all: the method must refuse an
 * unknown dtype and a byte size past the safe range itself, with the errors `dtypeInfo` and
 * `byteLength` throw. A space whose own carve validates anyway (an arena does, on the first carve of
 * each place) then checks once instead of twice, and a repeated carve needs no dims array to
 * compare. A space without it gets `alloc(dtype, dims)`, with interned dims.
 *
 * @example A space that serves 1-D carves by length:
 * ```ts
 * import { alloc, Similar, type Space } from '@pol/core';
 * import { allocLengthKey, internDim, spaceKey } from '@pol/core/backend';
 * const host = Similar(new Float32Array(0));
 * const lengths: number[] = [];
 * const space: Space<'host'> = {
 *   [spaceKey]: 'host',
 *   alloc: (dtype, dims) => host.alloc(dtype, dims),
 *   [allocLengthKey](dtype, length) {
 *     lengths.push(length);
 *     return host.alloc(dtype, internDim(length)); // Similar validates the dtype
 *   },
 * };
 * alloc(space, 'float32', 8);
 * alloc(space, 'float32', [2, 2]); // not 1-D by a length: alloc(dtype, dims)
 * console.log(lengths); // [ 8 ]
 * ```
 */
export const allocLengthKey: unique symbol = Symbol.for('@pol/core/allocLength') as never;

/**
 * Anywhere an uninitialized array can be materialized from. A space implements one leaf method,
 * `alloc(dtype, dims)`, and carries the {@link spaceKey} brand naming the kind of array it hands
 * out; Undefs, specs, descriptions and frames all reduce to that method.
 *
 * `alloc` receives a supported dtype and dims already validated by the `alloc` verb, but spaces
 * whose method users call directly should validate too (see `byteLength`).
 *
 * @example A space that counts what it hands out, over host memory:
 * ```ts
 * import { type Space, Similar, alloc } from '@pol/core';
 * import { spaceKey } from '@pol/core/backend';
 * let count = 0;
 * const host = Similar(new Float32Array(0));
 * const counting: Space<'host'> = {
 *   [spaceKey]: 'host',
 *   alloc(dtype, dims) {
 *     count++;
 *     return host.alloc(dtype, dims);
 *   },
 * };
 * alloc(counting, 'float32', [8]);
 * console.log(count); // 1
 * ```
 */
export interface Space<K extends Kind = Kind> {
  /** The kind of arrays this space hands out. */
  readonly [spaceKey]: K;
  /** The leaf method: a `dims`-shaped `dtype` array from this space. */
  alloc<D extends DType>(dtype: D, dims: readonly number[]): ArrayOf<K, D>;
  /** Optional: a 1-D array by its length (see {@link allocLengthKey}). */
  readonly [allocLengthKey]?: <D extends DType>(dtype: D, length: number) => ArrayOf<K, D>;
  /** Optional: open a frame (see {@link openFrameKey}). */
  readonly [openFrameKey]?: () => Frame<K>;
  /** Optional: a savepoint for atomic multi-array allocation (see {@link savepointKey}). */
  readonly [savepointKey]?: () => unknown;
  /** Optional: roll back to a savepoint (see {@link rollbackKey}). */
  readonly [rollbackKey]?: (token: unknown) => void;
  /** Optional: end a savepoint whose work succeeded (see {@link commitKey}). */
  readonly [commitKey]?: (token: unknown) => void;
}

/**
 * The brand every frame carries.
 *
 * @example
 * ```ts
 * import { scratchspace, Similar } from '@pol/core';
 * import { frameKey } from '@pol/core/backend';
 * scratchspace(Similar(new Float32Array(0)), (frame) => {
 *   console.log(frame[frameKey]); // true
 * });
 * ```
 */
export const frameKey: unique symbol = Symbol.for('@pol/core/frame') as never;

/**
 * A scope of lifetime on a space, itself a space: everything allocated through it dies, all at
 * once, when it closes. Opened by `scratchspace`; on an arena, opening marks and closing retracts.
 */
export interface Frame<K extends Kind = Kind> extends Space<K>, Disposable {
  /** The frame brand. */
  readonly [frameKey]: true;
  /** The space the frame was opened on: an arena, a Similar, or an outer frame. */
  readonly parent: Space<K>;
  /** Whether the frame is still open (allocating from a closed frame throws). */
  readonly isOpen: boolean;
  /** Close the frame, releasing what it allocated. Closing a closed frame does nothing. */
  close(): void;
}

/**
 * Whether `x` is a space: one property read.
 *
 * @example
 * ```ts
 * import { isSpace, Similar } from '@pol/core';
 * isSpace(Similar(new Float32Array(1))); // true
 * isSpace({}); // false
 * ```
 */
export function isSpace(x: unknown): x is Space {
  return (
    typeof x === 'object' &&
    x !== null &&
    typeof (x as { [spaceKey]?: unknown })[spaceKey] === 'string' &&
    typeof (x as { alloc?: unknown }).alloc === 'function'
  );
}

/**
 * Whether `x` is a frame.
 *
 * @example
 * ```ts
 * import { isFrame, scratchspace, Similar } from '@pol/core';
 * scratchspace(Similar(new Float32Array(1)), (frame) => isFrame(frame)); // true
 * ```
 */
export function isFrame(x: unknown): x is Frame {
  return isSpace(x) && (x as { [frameKey]?: unknown })[frameKey] === true;
}

/** Throw a {@link NotASpaceError} unless `x` is a space; `what` names the call for the message. */
export function assertSpace(x: unknown, what: string): asserts x is Space {
  if (!isSpace(x)) {
    throw new NotASpaceError(
      `${what} needs a space, got ${describeValue(x)}. Pass an Arena, a Frame, or Similar(x) of an array; ` +
        'a custom space is an object with an alloc(dtype, dims) method and the spaceKey brand.',
    );
  }
}
