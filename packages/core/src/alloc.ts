import { ambientspace } from './ambient.js';
import { type AnyArray, type ArrayOf, isArray, type Kind } from './array.js';
import type { DType } from './dtype.js';
import { FrameClosedError, InvalidArgumentError, InvalidSpecError } from './errors.js';
import { attachSuppressed } from './failure.js';
import { byteLength } from './shape.js';
import { assertSpace, isFrame, isSpace, rollbackKey, type Space, savepointKey } from './space.js';
import { isUndef, type Undef } from './undef.js';
import { describeValue, isPlainObject } from './value.js';

/**
 * A value in a spec: a description to materialize, an array to pass through, or a nested spec.
 *
 * @example
 * ```ts
 * import { hostArray, type SpecValue, Undef } from '@pol/core';
 * const values: SpecValue[] = [Undef('float32', 4), hostArray(new Float32Array(4)), { w: Undef('int32', 2) }];
 * ```
 */
export type SpecValue = Undef | AnyArray | Spec;

/**
 * A plain object of named descriptions. Values are Undefs (materialized), nested specs
 * (materialized recursively, so buffers bundled under one name stay bundled), or arrays, which pass
 * through untouched: put your own array under a name and that buffer is never allocated, which is
 * how a caller aliases one output in place while the rest allocate.
 *
 * @example
 * ```ts
 * import { alloc, Similar, type Spec, Undef } from '@pol/core';
 * const spec = { layer: { w: Undef('float32', 2, 3), b: Undef('float32', 3) } } satisfies Spec;
 * const { layer } = alloc(Similar(new Float32Array(0)), spec);
 * console.log(layer.w.dims, layer.b.dims); // [ 2, 3 ] [ 3 ]
 * ```
 */
export interface Spec {
  readonly [name: string]: SpecValue;
}

/**
 * The type `alloc(space, spec)` returns for a `K` space: each Undef becomes the space's array of
 * its dtype, arrays stay as they are, nested specs map recursively.
 *
 * @example
 * ```ts
 * import type { HostArray, Materialize, Undef } from '@pol/core';
 * type Params = Materialize<{ w: Undef<'float32'>; labels: Undef<'int32'> }, 'host'>;
 * const params: Params = { w: {} as HostArray<'float32'>, labels: {} as HostArray<'int32'> };
 * ```
 */
export type Materialize<S, K extends Kind> =
  S extends Undef<infer D>
    ? ArrayOf<K, D>
    : S extends AnyArray
      ? S
      : S extends object
        ? { -readonly [P in keyof S]: Materialize<S[P], K> }
        : never;

/**
 * Whether `x` is a well-formed spec, or the key path and message of its first bad value.
 * Walking the whole spec before allocating anything is what makes a bad spec change nothing.
 *
 * @example
 * ```ts
 * import { checkSpec, Undef } from '@pol/core';
 * console.log(checkSpec({ w: Undef('float32', 2) })); // undefined
 * console.log(checkSpec({ layer: { b: 'zeros' } })?.path); // 'layer.b'
 * ```
 */
export function checkSpec(x: unknown): { readonly path: string; readonly message: string } | undefined {
  if (!isPlainObject(x)) {
    return { path: '', message: `a spec must be a plain object of Undefs, arrays and nested specs, got ${describeValue(x)}` };
  }
  return walk(x, '', undefined);
}

// `ancestors` holds exactly the specs above `spec` (for cycle detection). It is made only once a
// nested spec appears, so the flat specs describers return on every verb call are checked without
// allocating.
function walk(
  spec: Record<string, unknown>,
  prefix: string,
  ancestors: object[] | undefined,
): { readonly path: string; readonly message: string } | undefined {
  let chain: object[] | undefined; // ancestors plus this spec, from the first nested spec on
  for (const key in spec) {
    if (!Object.hasOwn(spec, key)) continue;
    const value = spec[key];
    if (isUndef(value) || isArray(value)) continue;
    const path = prefix === '' ? key : `${prefix}.${key}`;
    if (isPlainObject(value)) {
      if (chain === undefined) {
        chain = ancestors ?? [];
        chain.push(spec);
      }
      if (chain.includes(value)) return { path, message: `the spec refers back to itself at ${path}` };
      const bad = walk(value, path, chain);
      if (bad !== undefined) return bad;
      continue;
    }
    return {
      path,
      message: `${path} is ${describeValue(value)}, but a spec value must be an Undef, an array, or a nested spec`,
    };
  }
  chain?.pop();
  return undefined;
}

function build(space: Space, spec: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key in spec) {
    if (!Object.hasOwn(spec, key)) continue;
    const value = spec[key];
    if (isUndef(value)) out[key] = space.alloc(value.dtype, value.dims);
    else if (isArray(value)) out[key] = value;
    else out[key] = build(space, value as Record<string, unknown>);
  }
  return out;
}

/**
 * Materialize a spec into `space`, all or nothing: a bad spec throws before anything is allocated,
 * and a failure part-way (a full arena) rolls back what was allocated where the space supports it.
 *
 * @example
 * ```ts
 * import { materialize, Similar, Undef } from '@pol/core';
 * const { y } = materialize(Similar(new Float32Array(0)), { y: Undef('float64', 3) });
 * console.log(y.data); // Float64Array(3) [ 0, 0, 0 ]
 * ```
 */
export function materialize<K extends Kind, S extends Spec>(space: Space<K>, spec: S): Materialize<S, K> {
  const bad = checkSpec(spec);
  if (bad !== undefined) {
    throw new InvalidSpecError(
      bad.path,
      `Cannot materialize: ${bad.message}. Describe arrays with Undef(dtype, dims), pass arrays you own as they are, and nest plain objects for groups.`,
    );
  }
  return buildAtomically(space, spec) as Materialize<S, K>;
}

/** Build a spec already known to be valid, rolling back on failure. */
export function buildAtomically(space: Space, spec: object): object {
  // An empty spec allocates nothing, but a closed frame must still refuse it like any other use.
  if (isFrame(space) && !space.isOpen) {
    throw new FrameClosedError(
      `Cannot materialize a spec: ${String(space)} has closed, and everything it allocated is dead. ` +
        'Materialize into a frame only inside its scratchspace block (or before disposing it), or open a new frame.',
    );
  }
  const save = space[savepointKey];
  if (save === undefined) return build(space, spec as Record<string, unknown>);
  const token = save.call(space);
  try {
    return build(space, spec as Record<string, unknown>);
  } catch (error) {
    // The allocation's error is what the caller needs to see; a failing rollback rides along on it.
    try {
      space[rollbackKey]?.call(space, token);
    } catch (rollbackError) {
      attachSuppressed(error, rollbackError);
    }
    throw error;
  }
}

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
