import { ambientspace } from './ambient.js';
import type { ArrayOf, Kind } from './array.js';
import type { DType } from './dtype.js';
import { InvalidArgumentError } from './errors.js';
import { materialize } from './materialize.js';
import { byteLength } from './shape.js';
import { assertSpace, isSpace, type Space } from './space.js';
import type { Materialize, Spec } from './spec.js';
import { isUndef, type Undef } from './undef.js';
import { describeValue, isPlainObject } from './value.js';

/**
 * Materialize a description into a space. The explicit forms take the space first:
 *
 * - `alloc(space, undef)`: one array for an {@link Undef};
 * - `alloc(space, dtype, dims)` or `alloc(space, dtype, ...dims)`;
 * - `alloc(space, spec)`: a whole {@link Spec}, name for name, all or nothing.
 *
 * Every form has an ambient spelling without the space, which uses `ambientspace()`. The result's
 * type follows from the space's kind and the spec's type.
 *
 * @throws {NotASpaceError} when the first of several arguments is not a space.
 * @throws {NoAmbientSpaceError} for an ambient spelling with no space bound.
 * @throws {InvalidSpecError} for a spec value that is neither Undef, array nor spec (naming its key path).
 * @throws {InvalidShapeError} / {UnknownDTypeError} for a bad dtype or dims.
 * @example
 * ```ts
 * import { alloc, Undef, Similar, withspace } from '@pol/core';
 * const space = Similar(new Float32Array(1));
 * const a = alloc(space, 'float32', 2, 3); // HostArray<'float32'>, dims [2, 3]
 * const b = alloc(space, Undef('int32', [4]));
 * const { w, b: bias } = alloc(space, { w: Undef('float32', 3, 3), b: Undef('float32', 3) });
 * const mine = new Float32Array(3);
 * const kept = alloc(space, { y: mine }).y; // passed through: kept === mine
 * withspace(space, () => alloc('float64', 5)); // the ambient spelling
 * ```
 */
export function alloc<K extends Kind, D extends DType>(space: Space<K>, undef: Undef<D>): ArrayOf<K, D>;
export function alloc<K extends Kind, D extends DType>(space: Space<K>, dtype: D, dims: readonly number[]): ArrayOf<K, D>;
export function alloc<K extends Kind, D extends DType>(space: Space<K>, dtype: D, ...dims: number[]): ArrayOf<K, D>;
export function alloc<K extends Kind, const S extends Spec>(space: Space<K>, spec: S): Materialize<S, K>;
export function alloc<D extends DType>(undef: Undef<D>): ArrayOf<Kind, D>;
export function alloc<D extends DType>(dtype: D, dims: readonly number[]): ArrayOf<Kind, D>;
export function alloc<D extends DType>(dtype: D, ...dims: number[]): ArrayOf<Kind, D>;
export function alloc<const S extends Spec>(spec: S): Materialize<S, Kind>;
export function alloc(a: unknown, b?: unknown, c?: unknown, ...more: unknown[]): unknown {
  // Named parameters rather than one rest array: the common forms then allocate nothing here.
  // biome-ignore lint/complexity/noArguments: the argument count tells the forms apart, and a rest parameter would allocate.
  const n = arguments.length;
  if (isSpace(a)) return allocIn(a, b, c, more, n - 1);
  if (typeof a === 'string' || isUndef(a) || (n === 1 && isPlainObject(a))) {
    return allocIn(ambientspace(), a, b, c === undefined && n < 3 ? more : [c, ...more], n);
  }
  assertSpace(a, 'alloc');
  return undefined;
}

// `what` is the description, `next` the argument after it, `rest` those after that, `n` how many
// arguments the description spans (1 for an Undef or spec).
function allocIn(space: Space, what: unknown, next: unknown, rest: unknown[], n: number): unknown {
  if (typeof what === 'string') {
    const dims = n === 2 && Array.isArray(next) ? (next as number[]) : n === 1 ? [] : ([next, ...rest] as number[]);
    byteLength(what as DType, dims);
    return space.alloc(what as DType, dims);
  }
  if (n === 1 && isUndef(what)) return space.alloc(what.dtype, what.dims);
  if (n === 1 && isPlainObject(what)) return materialize(space, what as Spec);
  throw new InvalidArgumentError(
    `alloc takes an Undef, a dtype and dims, or a spec object after the space, got ${describeValue(what)}${n > 1 ? ' followed by more arguments' : ''}. ` +
      "Write alloc(space, 'float32', [3, 4]), alloc(space, Undef(x)) or alloc(space, { y: Undef(x) }).",
  );
}
