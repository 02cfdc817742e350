import { ambientspace } from './ambient.js';
import type { ArrayOf, Kind } from './array.js';
import { internDim, internDims } from './dims.js';
import { type DType, dtypeInfo } from './dtype.js';
import { InvalidArgumentError, InvalidShapeError } from './errors.js';
import { materialize } from './materialize.js';
import { passedCount } from './passed.js';
import { byteLength } from './shape.js';
import { allocLengthKey, assertSpace, isSpace, type Space, spaceKey } from './space.js';
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
 * An argument passed as `undefined` counts as not passed (alloc reads no argument count, which
 * would cost an object a call in V8's lower tiers), so a dtype needs its dims: `[]` for a scalar.
 *
 * @throws {InvalidShapeError} / {UnknownDTypeError} for a bad dtype or dims, and for a dtype with no dims (or an undefined one).
 * @throws {InvalidArgumentError} for more than 7 dims as separate arguments after a space and a dtype (8 after a dtype): pass an array.
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
export function alloc<K extends Kind, D extends DType>(space: Space<K>, dtype: D, ...dims: [number, ...number[]]): ArrayOf<K, D>;
export function alloc<K extends Kind, const S extends Spec>(space: Space<K>, spec: S): Materialize<S, K>;
export function alloc<D extends DType>(undef: Undef<D>): ArrayOf<Kind, D>;
export function alloc<D extends DType>(dtype: D, dims: readonly number[]): ArrayOf<Kind, D>;
export function alloc<D extends DType>(dtype: D, ...dims: [number, ...number[]]): ArrayOf<Kind, D>;
export function alloc<const S extends Spec>(spec: S): Materialize<S, Kind>;
export function alloc(
  a: unknown,
  b?: unknown,
  c?: unknown,
  d?: unknown,
  e?: unknown,
  f?: unknown,
  g?: unknown,
  h?: unknown,
  i?: unknown,
  j?: unknown,
): unknown {
  // Fixed parameters only: no `arguments`, no rest parameter. V8 makes the arguments object (or
  // the rest array) on every call in each of its tiers below the optimizing compiler (the
  // interpreter, Sparkplug, and Maglev, where a kernel's loop runs for its first tens of thousands
  // of calls): 60 to 75 bytes a call, measured. So an argument passed as undefined counts as not
  // passed, as with a default parameter, and the forms are told apart by the values alone.
  // The commonest form, alloc(space, dtype, n), on its own here: small enough for the caller's loop
  // to inline it, where the whole of alloc was a call that cost as much as the space's steady carve.
  // One valid dim leaves only the dtype and the byte size to check (byteLength throws the right
  // error past the safe range; below 2^50 elements every dtype's byte size keeps it safe).
  // The space test is spelled out, not isSpace: inlined, isSpace's reads would use its own feedback,
  // which every caller of it shares, so in any real program they are megamorphic (a stub-cache
  // lookup on every alloc). Here they see only what the spaces a program allocates from are.
  if (
    typeof b === 'string' &&
    typeof c === 'number' &&
    d === undefined &&
    typeof a === 'object' &&
    a !== null &&
    typeof (a as { [spaceKey]?: unknown })[spaceKey] === 'string' &&
    typeof (a as { alloc?: unknown }).alloc === 'function' &&
    Number.isSafeInteger(c) &&
    c >= 0 &&
    e === undefined &&
    f === undefined &&
    g === undefined &&
    h === undefined &&
    i === undefined &&
    j === undefined
  ) {
    // A space that carves 1-D arrays by length checks the dtype and the size itself (see allocLengthKey).
    const byLength = (a as Space)[allocLengthKey];
    if (byLength !== undefined) return byLength.call(a, b as DType, c);
    const size = byteSizeOf(b);
    if (c > mostSafeElements && !Number.isSafeInteger(c * size)) byteLength(b as DType, [c]);
    return (a as Space).alloc(b as DType, internDim(c));
  }
  return allocAny(a, b, c, d, e, f, g, h, i, j);
}

// Every call the one-dim path above did not take. Apart, so that alloc stays small enough for V8
// to inline into the caller's loop (460 bytes of bytecode at most; with this inline it was 482).
function allocAny(
  a: unknown,
  b: unknown,
  c: unknown,
  d: unknown,
  e: unknown,
  f: unknown,
  g: unknown,
  h: unknown,
  i: unknown,
  j: unknown,
): unknown {
  if (j !== undefined) throw tooManyArguments(isSpace(a));
  const n = passedCount(a, b, c, d, e, f, g, h, i);
  return allocForm(n, a, b, c, d, e, f, g, h, i);
}

/** The most arguments alloc reads, and the refusal of a call that passes more (it cannot tell how many). */
const MOST_ARGUMENTS = 9;

function tooManyArguments(explicit: boolean): InvalidArgumentError {
  const most = explicit ? MOST_ARGUMENTS - 2 : MOST_ARGUMENTS - 1;
  return new InvalidArgumentError(
    `alloc takes at most ${most} dims as separate arguments${explicit ? ' after the space and the dtype' : ' after the dtype'}, ` +
      `and this call passed more. Pass the dims as one array: alloc(${explicit ? 'space, ' : ''}'float32', [d1, d2, ...]).`,
  );
}

// The dims of a call that passes them as separate arguments (or a lone dim that is no valid one),
// gathered here and checked, then interned: the space gets the shared frozen dims, never this
// array, which every such call reuses, so that a steady one allocates nothing (two arrays of the
// arguments, one sliced from the other, were 184 bytes a call).
const separateDims: unknown[] = [];

// Every form of alloc of `n` arguments, `a` to `i`.
function allocForm(
  n: number,
  a: unknown,
  b: unknown,
  c: unknown,
  d: unknown,
  e: unknown,
  f: unknown,
  g: unknown,
  h: unknown,
  i: unknown,
): unknown {
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
    if (count === 2 && typeof next === 'number' && Number.isSafeInteger(next) && next >= 0) {
      // One valid dim (the ambient form here; the explicit one took alloc's own path).
      const byLength = space[allocLengthKey];
      if (byLength !== undefined) return byLength.call(space, what as DType, next);
      const size = byteSizeOf(what);
      if (next > mostSafeElements && !Number.isSafeInteger(next * size)) byteLength(what as DType, [next]);
      return space.alloc(what as DType, internDim(next));
    }
    if (count === 2 && Array.isArray(next)) {
      byteLength(what as DType, next);
      return space.alloc(what as DType, next);
    }
    if (count === 1) {
      dtypeInfo(what as DType); // an unknown dtype is refused first, as in every other form
      throw noDims(explicit, what);
    }
    // Filled from the first dim on, every argument after it too, then cut to the dims passed: the
    // ones past them are undefined.
    const dims = separateDims;
    let k = 0;
    if (!explicit) dims[k++] = b;
    dims[k++] = c;
    dims[k++] = d;
    dims[k++] = e;
    dims[k++] = f;
    dims[k++] = g;
    dims[k++] = h;
    dims[k] = i;
    dims.length = count - 1;
    let shared: readonly number[];
    try {
      byteLength(what as DType, dims as number[]);
      shared = internDims(dims as number[]);
    } catch (error) {
      // A refused call's arguments are not kept alive by this module-level array.
      dims.fill(undefined);
      throw error;
    }
    return space.alloc(what as DType, shared);
  }
  if (count === 1 && isUndef(what)) return space.alloc(what.dtype, what.dims);
  if (count === 1 && isPlainObject(what)) return materialize(space, what as Spec);
  throw new InvalidArgumentError(
    `alloc takes an Undef, a dtype and dims, or a spec object after the space, got ${describeValue(what)}${count > 1 ? ' followed by more arguments' : ''}. ` +
      "Write alloc(space, 'float32', [3, 4]), alloc(space, Undef(x)) or alloc(space, { y: Undef(x) }).",
  );
}

// alloc(space, 'float32') names no dims. An undefined dim (a misspelt property, say) reads the
// same (see alloc), so neither is taken for a scalar: it would be an array of one element where the
// caller meant n.
function noDims(explicit: boolean, dtype: string): InvalidShapeError {
  const call = `alloc(${explicit ? 'space, ' : ''}'${dtype}'`;
  return new InvalidShapeError(
    `${call}) was given no dims, or an undefined one. Pass them: ${call}, n), ${call}, [rows, cols]) or ${call}, rows, cols); ` +
      `a scalar (one element) is ${call}, []).`,
  );
}

// The dtype the one-dim form checked last, and its byte size: a loop of carves of one dtype looks
// it up once, where each lookup was a Map read. A real pair from the start, never undefined: a
// compare that has only ever seen strings is a pointer compare, and one that once saw undefined
// stays a call of V8's generic equality on every alloc.
let lastDtype: string = 'float32';
let lastByteSize = dtypeInfo('float32').byteSize;
/** The most elements whose byte size is a safe integer at every dtype's size (8 bytes at most): 2^50 − 1. */
const mostSafeElements = 2 ** 50 - 1;

/** The byte size of `dtype`, which it validates. @throws {UnknownDTypeError} for a dtype Pol does not know. */
function byteSizeOf(dtype: string): number {
  if (dtype === lastDtype) return lastByteSize;
  const size = dtypeInfo(dtype as DType).byteSize;
  lastDtype = dtype;
  lastByteSize = size;
  return size;
}
