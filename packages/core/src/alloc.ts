import { ambientspace } from './ambient.js';
import type { ArrayOf, Kind } from './array.js';
import { internDim, internDims } from './dims.js';
import { type DType, dtypeInfo } from './dtype.js';
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
export function alloc(a: unknown, b?: unknown, c?: unknown): unknown {
  // Fixed parameters and the argument count, never a rest parameter or a spread: a rest array is
  // made on every call that the caller does not inline (an unoptimized caller), and the common
  // forms below then allocate nothing but what the space hands out. Dims past the third argument
  // are read from `arguments` by index, which the optimizing compiler does without an object.
  // biome-ignore lint/complexity/noArguments: the argument count tells the forms apart, and a rest parameter would allocate.
  const n = arguments.length;
  const explicit = isSpace(a);
  const what = explicit ? b : a;
  const next = explicit ? c : b;
  const count = explicit ? n - 1 : n; // arguments from the description on
  if (!explicit && typeof a !== 'string' && !isUndef(a) && !(n === 1 && isPlainObject(a))) {
    assertSpace(a, 'alloc');
  }
  // The ambient space is resolved before the description is checked, as an explicit space is passed first.
  const space = explicit ? (a as Space) : ambientspace();
  if (typeof what === 'string') {
    let dims: readonly number[];
    if (count === 2 && typeof next === 'number' && Number.isSafeInteger(next) && next >= 0) {
      // One valid dim: only the dtype and the byte size are left to check (byteLength throws the
      // right error when the size is past the safe range).
      if (!Number.isSafeInteger(next * dtypeInfo(what as DType).byteSize)) byteLength(what as DType, [next]);
      return space.alloc(what as DType, internDim(next));
    }
    if (count === 2 && Array.isArray(next)) dims = next as number[];
    else if (count === 1) dims = scalarDims;
    else {
      // Sized up front: growing an empty array by push reserves room for 17 elements.
      const from = explicit ? 2 : 1;
      const list: unknown[] = new Array(n - from);
      // biome-ignore lint/complexity/noArguments: the rest dims, read by index.
      for (let i = from; i < n; i++) list[i - from] = arguments[i];
      dims = list as number[];
    }
    byteLength(what as DType, dims);
    return space.alloc(what as DType, dims);
  }
  if (count === 1 && isUndef(what)) return space.alloc(what.dtype, what.dims);
  if (count === 1 && isPlainObject(what)) return materialize(space, what as Spec);
  throw new InvalidArgumentError(
    `alloc takes an Undef, a dtype and dims, or a spec object after the space, got ${describeValue(what)}${count > 1 ? ' followed by more arguments' : ''}. ` +
      "Write alloc(space, 'float32', [3, 4]), alloc(space, Undef(x)) or alloc(space, { y: Undef(x) }).",
  );
}

const scalarDims: readonly number[] = internDims([]);
