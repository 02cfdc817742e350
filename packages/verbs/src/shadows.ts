import {
  type AnyArray,
  ambientspace,
  assertSpace,
  type DTypeOf,
  describeValue,
  isArray,
  isPlainObject,
  isSpace,
  type Kind,
  type Materialize,
  Similar,
  type Space,
  shapeOf,
  Undef,
} from '@pol/core';
import {
  firstArray,
  markShadow,
  materializeOne,
  rollback,
  sameDims,
  savepoint,
  shapeText,
  UNBOUND,
  valueText,
  zeroArray,
} from './buffers.js';
import { NoSpaceError, NotAPrimalError, ShadowMismatchError } from './errors.js';

/**
 * What can be shadowed: an array, or a plain object whose values are primals (nested to any depth).
 * Parameters typed `P & Primal<P>` accept interfaces and type aliases alike and reject non-array leaves.
 *
 * @example
 * ```ts
 * import type { HostArray } from '@pol/core';
 * import type { Primal } from '@pol/verbs';
 * type Params = { w: HostArray<'float32'>; lr: number };
 * type Checked = Primal<Params>; // { w: HostArray<'float32'>; lr: never }: lr is not a primal
 * ```
 */
export type Primal<P> = P extends AnyArray
  ? P
  : P extends readonly unknown[] | ((...args: never[]) => unknown)
    ? never
    : P extends object
      ? { [K in keyof P]: Primal<P[K]> }
      : never;

/**
 * The spec of a primal's shadows: each array becomes an `Undef` of its dtype and dims, structure kept.
 *
 * @example
 * ```ts
 * import type { HostArray } from '@pol/core';
 * import type { ShadowSpec } from '@pol/verbs';
 * type Spec = ShadowSpec<{ w: HostArray<'float32'>; b: Int32Array }>; // { w: Undef<'float32'>; b: Undef<'int32'> }
 * ```
 */
export type ShadowSpec<P> = P extends AnyArray
  ? Undef<DTypeOf<P>>
  : P extends object
    ? { -readonly [K in keyof P]: ShadowSpec<P[K]> }
    : never;

/**
 * The shadows of `P` materialized from a `K` space: each array becomes that space's array of its dtype.
 *
 * @example
 * ```ts
 * import type { ShadowsOf } from '@pol/verbs';
 * type Grads = ShadowsOf<{ w: Float32Array }, 'host'>; // { w: HostArray<'float32'> }
 * ```
 */
export type ShadowsOf<P, K extends Kind = Kind> = Materialize<ShadowSpec<P>, K>;

/**
 * The arrays at the leaves of a structure of primals (or shadows).
 *
 * @example
 * ```ts
 * import type { HostArray } from '@pol/core';
 * import type { Leaves } from '@pol/verbs';
 * type L = Leaves<{ a: { w: HostArray<'float32'> }; b: Int8Array }>; // HostArray<'float32'> | Int8Array
 * ```
 */
export type Leaves<T> = T extends AnyArray ? T : T extends object ? { [K in keyof T]-?: Leaves<T[K]> }[keyof T] : never;

function joinPath(prefix: string, key: string): string {
  return prefix === '' ? key : `${prefix}.${key}`;
}

// The walks below take a node's key path in two pieces, its parent's path and its own key, and
// join them only for an error message, or once per group whose children are visited: a leaf that
// passes costs no string.
//
// Their ancestors stack (for cycles) is balanced on every normal return; one is kept for the next
// walk, and a walk that throws (or runs while another holds the spare, through a proxy) gets a
// fresh one.
let spareAncestors: object[] | undefined;

function takeAncestors(): object[] {
  const ancestors = spareAncestors;
  if (ancestors === undefined) return [];
  spareAncestors = undefined;
  return ancestors;
}

function keepAncestors(ancestors: object[]): void {
  spareAncestors = ancestors;
}

function describeShadows(primals: unknown, prefix: string, name: string, ancestors: object[]): unknown {
  if (isArray(primals)) return markShadow(Undef(primals));
  if (isPlainObject(primals)) {
    const path = joinPath(prefix, name);
    if (ancestors.includes(primals)) {
      throw new NotAPrimalError(path, `The primals refer back to themselves at '${path}'; shadow a tree of arrays, not a cycle.`);
    }
    ancestors.push(primals);
    const spec: Record<string, unknown> = {};
    for (const key in primals) spec[key] = describeShadows(primals[key], path, key, ancestors);
    ancestors.pop();
    return spec;
  }
  const path = joinPath(prefix, name);
  const where = path === '' ? 'The primals are' : `The primal at '${path}' is`;
  throw new NotAPrimalError(
    path,
    `${where} ${describeValue(primals)}, which cannot be shadowed. Shadow an array (a HostArray or TypedArray) or a plain ` +
      'object of them, nested as deep as you like; keep hyperparameters and other non-arrays out of the structure.',
  );
}

/** The spec of `primals`' shadows, checked; throws before anything is allocated. */
function describeAll(primals: unknown): unknown {
  const ancestors = takeAncestors();
  const spec = describeShadows(primals, '', '', ancestors);
  keepAncestors(ancestors);
  return spec;
}

/**
 * The spec of `primals`' shadows, for a backward kernel's `outputs` describer: every array
 * becomes an `Undef` with its dtype and dims, and nested plain objects keep their structure.
 * Materialized by `Shadows` or by an `Allocating` verb, these buffers start at zero (a caller's own
 * buffer under the same name is used as is, so gradients can accumulate into it); core's plain
 * `alloc` does not zero them.
 *
 * @throws {NotAPrimalError} for a leaf that is not an array (naming its key path), or a cycle.
 * @example
 * ```ts
 * import { describe, hostArray, type HostArray } from '@pol/core';
 * import { shadowSpec } from '@pol/verbs';
 * type F32 = HostArray<'float32'>;
 * const params = { w: hostArray(new Float32Array(6), [2, 3]), b: hostArray(new Float32Array(3)) };
 * shadowSpec(params); // { w: Undef(float32, [2, 3]), b: Undef(float32, [3]) }
 * // in a backward kernel's describers:
 * const describers = { outputs: (dy: F32, p: typeof params) => ({ grads: shadowSpec(p) }) };
 * ```
 */
export function shadowSpec<P extends object>(primals: P & Primal<P>): ShadowSpec<P> {
  return describeAll(primals) as ShadowSpec<P>;
}

/**
 * Gradient buffers for `primals`: the same structure (one array, or nested plain objects of
 * arrays), each shadow with its primal's dtype and dims, materialized from `space` and zeroed
 * (arena memory is not zeroed, and gradients accumulate). All or nothing: a bad primal throws
 * before anything is allocated, and a failure part-way (a full arena) rolls back.
 *
 * Two spellings: `Shadows(space, primals)`, and `Shadows(primals)` against the ambient space, or
 * `Similar` of the first primal when none is bound.
 *
 * @throws {NotAPrimalError} when a leaf of `primals` is not an array.
 * @throws {NoSpaceError} for `Shadows(primals)` with no space bound and no array among the primals.
 * @throws {ZeroUnsupportedError} when the space hands out arrays without host data.
 * @example
 * ```ts
 * import { hostArray, Similar } from '@pol/core';
 * import { Shadows } from '@pol/verbs';
 * const params = { layer: { w: hostArray(new Float32Array(6), [2, 3]), b: hostArray(new Float32Array(3)) } };
 * const grads = Shadows(Similar(params.layer.w), params);
 * console.log(grads.layer.w.dims, grads.layer.b.data[0]); // [ 2, 3 ] 0
 * ```
 */
export function Shadows<K extends Kind, P extends object>(space: Space<K>, primals: P & Primal<P>): ShadowsOf<P, K>;
export function Shadows<P extends object>(primals: P & Primal<P>): ShadowsOf<P, Kind>;
export function Shadows(first: unknown, second?: unknown): unknown {
  // biome-ignore lint/complexity/noArguments: the argument count tells Shadows(space, primals) from Shadows(primals).
  const spaceFirst = arguments.length >= 2 || isSpace(first);
  const primals = spaceFirst ? second : first;
  const spec = describeAll(primals);
  const space = spaceFirst ? (first as Space) : shadowSpace(primals);
  assertSpace(space, 'Shadows(space, primals)');
  const token = savepoint(space);
  try {
    return materializeOne(space, spec);
  } catch (error) {
    rollback(space, token, error);
    throw error;
  }
}

function shadowSpace(primals: unknown): Space {
  const bound = ambientspace(UNBOUND);
  if (bound !== UNBOUND) return bound;
  const exemplar = firstArray([primals], 0, 1);
  if (exemplar !== undefined) return Similar(exemplar);
  throw new NoSpaceError(
    'Shadows(primals) was called with no space bound and no array among the primals, so there is nowhere to allocate. ' +
      'Pass a space first: Shadows(space, primals).',
  );
}

function checkShadows(shadows: unknown, prefix: string, name: string, ancestors: object[]): void {
  if (isArray(shadows)) return;
  if (isPlainObject(shadows) && !ancestors.includes(shadows)) {
    const path = joinPath(prefix, name);
    ancestors.push(shadows);
    for (const key in shadows) checkShadows(shadows[key], path, key, ancestors);
    ancestors.pop();
    return;
  }
  const path = joinPath(prefix, name);
  throw new NotAPrimalError(
    path,
    `zeroShadows found ${describeValue(shadows)}${path === '' ? '' : ` at '${path}'`}; it takes shadows as Shadows returns them: ` +
      'an array, or plain objects of arrays.',
  );
}

function zeroAll(shadows: unknown): void {
  if (isArray(shadows)) {
    zeroArray(shadows);
    return;
  }
  const group = shadows as Record<string, unknown>;
  for (const key in group) zeroAll(group[key]);
}

/**
 * Zero every shadow (one array or a nested structure of them) for the next step: one call. The
 * structure is checked before anything is written, so a bad one changes nothing.
 *
 * @throws {NotAPrimalError} for a leaf that is not an array.
 * @throws {ZeroUnsupportedError} for an array without host data.
 * @example
 * ```ts
 * import { hostArray } from '@pol/core';
 * import { Shadows, zeroShadows } from '@pol/verbs';
 * const grads = Shadows({ w: hostArray(new Float32Array(4)) });
 * grads.w.data[0] = 1;
 * zeroShadows(grads); // grads.w.data is all zeros again
 * ```
 */
export function zeroShadows<S extends object>(shadows: S & Primal<S>): void {
  const ancestors = takeAncestors();
  checkShadows(shadows, '', '', ancestors);
  keepAncestors(ancestors);
  zeroAll(shadows);
}

function checkPairs(primal: unknown, shadow: unknown, prefix: string, name: string, ancestors: object[]): void {
  if (isArray(primal)) {
    if (!isArray(shadow)) {
      const path = joinPath(prefix, name);
      throw new ShadowMismatchError(
        path,
        `The primal${at(path)} is ${valueText(primal)} but its shadow is ${describeValue(shadow)}. Walk the shadows Shadows(space, primals) made for these primals.`,
      );
    }
    const p = shapeOf(primal);
    const s = shapeOf(shadow);
    if (p.dtype !== s.dtype || !sameDims(p.dims, s.dims)) {
      const path = joinPath(prefix, name);
      throw new ShadowMismatchError(
        path,
        `The primal${at(path)} is ${shapeText(p.dtype, p.dims)} but its shadow is ${shapeText(s.dtype, s.dims)}: a shadow has its primal's dtype and dims. ` +
          'Make the shadows from these primals with Shadows(space, primals).',
      );
    }
    return;
  }
  const path = joinPath(prefix, name);
  if (!isPlainObject(primal) || ancestors.includes(primal)) {
    throw new NotAPrimalError(
      path,
      `The primal${at(path)} is ${describeValue(primal)}; walkShadows takes an array or plain objects of arrays (and no cycles).`,
    );
  }
  if (!isPlainObject(shadow)) {
    throw new ShadowMismatchError(
      path,
      `The primals${at(path)} are a group { ${Object.keys(primal).join(', ')} } but the shadows are ${valueText(shadow)}. Shadows mirror their primals' structure.`,
    );
  }
  for (const key in primal) {
    if (!Object.hasOwn(shadow, key)) {
      const child = joinPath(path, key);
      throw new ShadowMismatchError(
        child,
        `The primals have '${child}' but the shadows do not. Shadows mirror their primals' structure: make them with Shadows(space, primals).`,
      );
    }
  }
  for (const key in shadow) {
    if (!Object.hasOwn(primal, key)) {
      throw new ShadowMismatchError(
        joinPath(path, key),
        `The shadows have '${joinPath(path, key)}' but the primals do not. Shadows mirror their primals' structure: make them with Shadows(space, primals).`,
      );
    }
  }
  ancestors.push(primal);
  for (const key in primal) checkPairs(primal[key], shadow[key], path, key, ancestors);
  ancestors.pop();
}

/** ` at 'path'` for a message, or nothing at the root. */
function at(path: string): string {
  return path === '' ? '' : ` at '${path}'`;
}

function visit(primal: unknown, shadow: unknown, path: string, f: (primal: never, shadow: never, path: string) => void): void {
  if (isArray(primal)) {
    f(primal as never, shadow as never, path);
    return;
  }
  const p = primal as Record<string, unknown>;
  const s = shadow as Record<string, unknown>;
  for (const key in p) visit(p[key], s[key], joinPath(path, key), f);
}

/**
 * Walk primals and their shadows together, calling `f(primal, shadow, path)` for each pair of
 * arrays in the primals' key order (`path` is the key path, such as `'layer.w'`, or `''` for a
 * single array): an optimizer step over parameters and their gradients. Both structures are
 * checked before `f` is first called, so a mismatch never leaves a step half-applied.
 *
 * @throws {ShadowMismatchError} when the structures differ, or a shadow's dtype or dims differ from its primal's.
 * @throws {NotAPrimalError} for a primal leaf that is not an array.
 * @example
 * ```ts
 * import { hostArray } from '@pol/core';
 * import { Shadows, walkShadows } from '@pol/verbs';
 * const params = { w: hostArray(Float32Array.from([1, 2])), b: hostArray(Float32Array.from([3])) };
 * const grads = Shadows(params);
 * grads.w.data.set([10, 20]);
 * const lr = 0.1;
 * walkShadows(params, grads, (p, g) => {
 *   for (let i = 0; i < p.data.length; i++) p.data[i] = (p.data[i] ?? 0) - lr * (g.data[i] ?? 0);
 * }); // params.w.data is now [0, 0]
 * ```
 */
export function walkShadows<P extends object, S extends object>(
  primals: P & Primal<P>,
  shadows: S & Primal<S>,
  f: (primal: Leaves<P>, shadow: Leaves<S>, path: string) => void,
): void {
  const ancestors = takeAncestors();
  checkPairs(primals, shadows, '', '', ancestors);
  keepAncestors(ancestors);
  visit(primals, shadows, '', f as (primal: never, shadow: never, path: string) => void);
}
