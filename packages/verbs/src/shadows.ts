import {
  type AnyArray,
  type ArrayOf,
  type DTypeOf,
  InvalidArgumentError,
  isArray,
  isSpace,
  type Kind,
  type KindOf,
  type Materialize,
  type PolArray,
  type Space,
  type Spec,
  shapeOf,
  Undef,
  ZeroUnsupportedError,
  zeroArray,
  zeroed,
} from '@pol/core';
import {
  assertSpace,
  commit,
  describeValue,
  familyOf,
  isPlainObject,
  keepAncestors,
  materializeInto,
  rollback,
  sameDims,
  savepoint,
  shapeText,
  spaceKey,
  takeAncestors,
  valueText,
} from '@pol/core/backend';
import { resolveSpace } from './arguments.js';
import { KindMismatchError, NoSpaceError, NotAPrimalError, ShadowMismatchError } from './errors.js';

/**
 * What can be shadowed: an array, or a plain object or JavaScript array (a model's layers) whose
 * values are primals, nested to any depth. Parameters typed `P & Primal<P>` accept interfaces and
 * type aliases alike and reject non-array leaves.
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
  : P extends (...args: never[]) => unknown
    ? never
    : P extends object
      ? { [K in keyof P]: Primal<P[K]> }
      : never;

/**
 * The spec of a primal's shadows: each array becomes a zeroed `Undef` of its dtype and dims,
 * structure kept (plain objects stay objects, JavaScript arrays and tuples stay arrays and tuples).
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
 * The shadows `Shadows(primals)` makes: each array becomes an array of its own primal's kind
 * (a host array for a host array or a TypedArray) and dtype, whatever other kinds of array the
 * program knows (a `@pol/webgpu` import anywhere adds `'gpu'`).
 *
 * @example
 * ```ts
 * import type { HostArray } from '@pol/core';
 * import type { ShadowsLike } from '@pol/verbs';
 * type Grads = ShadowsLike<{ w: HostArray<'float32'>; b: Int32Array }>; // { w: HostArray<'float32'>; b: HostArray<'int32'> }
 * ```
 */
export type ShadowsLike<P> = P extends AnyArray
  ? ArrayOf<KindOf<P>, DTypeOf<P>>
  : P extends object
    ? { -readonly [K in keyof P]: ShadowsLike<P[K]> }
    : never;

/**
 * The arrays at the leaves of a structure of primals (or shadows).
 *
 * @example
 * ```ts
 * import type { HostArray } from '@pol/core';
 * import type { Leaves } from '@pol/verbs';
 * type L = Leaves<{ a: { w: HostArray<'float32'> }; b: Int8Array[] }>; // HostArray<'float32'> | Int8Array
 * ```
 */
export type Leaves<T> = T extends AnyArray
  ? T
  : T extends readonly (infer E)[]
    ? Leaves<E>
    : T extends object
      ? { [K in keyof T]-?: Leaves<T[K]> }[keyof T]
      : never;

// Key paths ('layers[1].w') are what messages and walkShadows' callback name a value by. A walk
// over the same structure step after step must not build them anew, so each group's (or list's)
// child paths are kept, weakly, by group, for as long as its keys and its own path stay the same;
// messages join theirs only when they are thrown.
interface ChildPaths {
  readonly prefix: string;
  readonly keys: readonly string[];
  readonly paths: readonly string[];
}

const childPathCache = new WeakMap<object, ChildPaths>();

function joinPath(prefix: string, key: string): string {
  return prefix === '' ? key : `${prefix}.${key}`;
}

/** Whether `x` is a structure of primals: a plain object or a JavaScript array. */
function isGroup(x: unknown): x is Record<string, unknown> | unknown[] {
  return Array.isArray(x) || isPlainObject(x);
}

/** The key paths of the children of `group` (a plain object or a list) at `prefix`: kept from the last walk when nothing changed. */
function childPaths(group: Record<string, unknown> | readonly unknown[], prefix: string): readonly string[] {
  const kept = childPathCache.get(group);
  if (kept !== undefined && kept.prefix === prefix && sameKeys(group, kept.keys)) return kept.paths;
  const keys: string[] = [];
  const paths: string[] = [];
  if (Array.isArray(group)) {
    for (let i = 0; i < group.length; i++) {
      keys.push(String(i));
      paths.push(`${prefix}[${i}]`);
    }
  } else {
    for (const key in group) {
      keys.push(key);
      paths.push(joinPath(prefix, key));
    }
  }
  childPathCache.set(group, { prefix, keys, paths });
  return paths;
}

function sameKeys(group: Record<string, unknown> | readonly unknown[], keys: readonly string[]): boolean {
  if (Array.isArray(group)) return group.length === keys.length;
  let j = 0;
  for (const key in group) {
    if (key !== keys[j]) return false;
    j++;
  }
  return j === keys.length;
}

/** The children of a group or list, in order (a list's by index, holes as undefined). */
function childAt(group: Record<string, unknown> | readonly unknown[], keys: readonly string[], j: number): unknown {
  return Array.isArray(group) ? group[j] : (group as Record<string, unknown>)[keys[j] as string];
}

/** The keys `childPaths` keeps for `group` (computed with it). */
function childKeys(group: Record<string, unknown> | readonly unknown[]): readonly string[] {
  return (childPathCache.get(group) as ChildPaths).keys;
}

// The ancestors stack of a walk (for cycles, core's spare: `takeAncestors`) is balanced on every
// normal return, and handed back then; a walk that throws leaves the next one a fresh stack.

function describeShadows(primals: unknown, path: string, ancestors: object[]): unknown {
  if (isArray(primals)) return zeroed(Undef(primals));
  if (isGroup(primals)) {
    if (ancestors.includes(primals)) {
      throw new NotAPrimalError(path, `The primals refer back to themselves at '${path}'; shadow a tree of arrays, not a cycle.`);
    }
    ancestors.push(primals);
    const paths = childPaths(primals, path);
    const keys = childKeys(primals);
    const list = Array.isArray(primals);
    const spec: Record<string, unknown> | unknown[] = list ? [] : {};
    for (let j = 0; j < paths.length; j++) {
      const value = describeShadows(childAt(primals, keys, j), paths[j] as string, ancestors);
      if (list) (spec as unknown[]).push(value);
      else (spec as Record<string, unknown>)[keys[j] as string] = value;
    }
    ancestors.pop();
    return spec;
  }
  const where = path === '' ? 'The primals are' : `The primal at '${path}' is`;
  throw new NotAPrimalError(
    path,
    `${where} ${describeValue(primals)}, which cannot be shadowed. Shadow an array (a HostArray or TypedArray), or plain ` +
      'objects and JavaScript arrays of them, nested as deep as you like; keep hyperparameters and other non-arrays out of the structure.',
  );
}

/** The spec of `primals`' shadows, checked; throws before anything is allocated. */
function describeAll(primals: unknown): unknown {
  const ancestors = takeAncestors();
  const spec = describeShadows(primals, '', ancestors);
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
 * `Similar` of the first primal when none is bound. The second makes each shadow of its primal's
 * own kind (its type says so), so it refuses a space of another kind: pass that space explicitly.
 *
 * @throws {NotAPrimalError} when a leaf of `primals` is not an array.
 * @throws {NoSpaceError} for `Shadows(primals)` with no space bound and no array among the primals.
 * @throws {KindMismatchError} for `Shadows(primals)` when the space, or another primal, is of another kind.
 * @throws {ZeroUnsupportedError} when the space hands out arrays that cannot be zeroed.
 * @example
 * ```ts
 * import { hostArray, Similar } from '@pol/core';
 * import { Shadows } from '@pol/verbs';
 * const params = { layer: { w: hostArray(new Float32Array(6), [2, 3]), b: hostArray(new Float32Array(3)) } };
 * const grads = Shadows(Similar(params.layer.w), params);
 * console.log(grads.layer.w.dims, grads.layer.b.data[0]); // [ 2, 3 ] 0
 * const same = Shadows(params); // ambient, or Similar of the first primal: host arrays, typed as such
 * console.log(same.layer.w.data.length); // 6
 * ```
 */
export function Shadows<K extends Kind, P extends object>(space: Space<K>, primals: P & Primal<P>): ShadowsOf<P, K>;
export function Shadows<P extends object>(primals: P & Primal<P>): ShadowsLike<P>;
export function Shadows(first: unknown, second?: unknown): unknown {
  // biome-ignore lint/complexity/noArguments: the argument count tells Shadows(space, primals) from Shadows(primals).
  const spaceFirst = arguments.length >= 2 || isSpace(first);
  const primals = spaceFirst ? second : first;
  const spec = describeAll(primals);
  let space: Space;
  if (spaceFirst) {
    assertSpace(first, 'Shadows(space, primals)');
    space = first;
  } else {
    const found = resolveSpace([primals], 0, 1);
    if (found === undefined) {
      throw new NoSpaceError(
        'Shadows(primals) was called with no space bound and no array among the primals, so there is nowhere to allocate. ' +
          'Pass a space first: Shadows(space, primals).',
      );
    }
    space = found;
    checkKinds(primals, space[spaceKey], '');
  }
  // The materializer fills names into an object: one name holds the whole structure (an array, or
  // the top group), and zeroes each shadow as it is allocated (they are described zeroed).
  const into: { shadows?: unknown } = {};
  const token = savepoint(space);
  try {
    materializeInto(space, { shadows: spec } as Spec, into);
  } catch (error) {
    rollback(space, token, error);
    throw error;
  }
  commit(space, token);
  return into.shadows;
}

/** The kind of array `x` is: its family's (a TypedArray is a host array). */
function kindOf(x: AnyArray): string {
  return String(familyOf(x)?.kind ?? 'host');
}

// `Shadows(primals)` types each shadow with its primal's kind: refuse, before allocating, a space
// (or another primal) of another kind, where that type would be a lie.
function checkKinds(primals: unknown, kind: string, path: string): void {
  if (isArray(primals)) {
    const own = kindOf(primals);
    if (own === kind) return;
    throw new KindMismatchError(
      path,
      own,
      kind,
      `Shadows(primals) makes each shadow of its primal's own kind, but the primal${path === '' ? '' : ` at '${path}'`} is a ` +
        `'${own}' array and the space it would allocate from is a '${kind}' space (the ambient space, or Similar of the first ` +
        'primal). Pass the space you mean: Shadows(space, primals), whose shadows are all of that space’s kind.',
    );
  }
  const group = primals as Record<string, unknown> | unknown[];
  const paths = childPaths(group, path);
  const keys = childKeys(group);
  for (let j = 0; j < paths.length; j++) checkKinds(childAt(group, keys, j), kind, paths[j] as string);
}

// Every shadow is an array that can be zeroed now, by its family's own check (a checked arena's
// stale array, a released GPU array, refuse here, before anything is written).
function checkShadows(shadows: unknown, path: string, ancestors: object[]): void {
  if (isArray(shadows)) {
    checkZeroable(shadows, path);
    return;
  }
  if (isGroup(shadows) && !ancestors.includes(shadows)) {
    ancestors.push(shadows);
    const paths = childPaths(shadows, path);
    const keys = childKeys(shadows);
    for (let j = 0; j < paths.length; j++) checkShadows(childAt(shadows, keys, j), paths[j] as string, ancestors);
    ancestors.pop();
    return;
  }
  throw new NotAPrimalError(
    path,
    `zeroShadows found ${describeValue(shadows)}${path === '' ? '' : ` at '${path}'`}; it takes shadows as Shadows returns them: ` +
      'an array, or plain objects and JavaScript arrays of them.',
  );
}

function checkZeroable(array: AnyArray, path: string): void {
  if (ArrayBuffer.isView(array)) return;
  const family = familyOf(array);
  if (typeof family?.zero !== 'function') {
    throw new ZeroUnsupportedError(
      `zeroShadows cannot zero the shadow${path === '' ? '' : ` at '${path}'`}, ${valueText(array)} (${describeValue(array)}): ` +
        `its family ('${String(family?.kind)}') has no zero(array) method. Nothing was zeroed. Shadow arrays of a backend that ` +
        'implements the zeroing protocol, or zero them with the backend itself.',
    );
  }
  // The family's own check: a stale array of a checked arena, a released or dead device array, is
  // refused here, before the first shadow is written.
  family.checkZero?.(array as PolArray);
}

function zeroAll(shadows: unknown): void {
  if (isArray(shadows)) {
    zeroArray(shadows);
    return;
  }
  if (Array.isArray(shadows)) {
    for (let i = 0; i < shadows.length; i++) zeroAll(shadows[i]);
    return;
  }
  const group = shadows as Record<string, unknown>;
  for (const key in group) zeroAll(group[key]);
}

/**
 * Zero every shadow (one array or a nested structure of them) for the next step: one call. The
 * whole structure is checked first (that every leaf is an array that can be zeroed now), so a bad
 * one changes nothing.
 *
 * @throws {NotAPrimalError} for a leaf that is not an array.
 * @throws {ZeroUnsupportedError} for an array that cannot be zeroed.
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
  checkShadows(shadows, '', ancestors);
  keepAncestors(ancestors);
  zeroAll(shadows);
}

function checkPairs(primal: unknown, shadow: unknown, path: string, ancestors: object[]): void {
  if (isArray(primal)) {
    if (!isArray(shadow)) {
      throw new ShadowMismatchError(
        path,
        `The primal${at(path)} is ${valueText(primal)} but its shadow is ${describeValue(shadow)}. Walk the shadows Shadows(space, primals) made for these primals.`,
      );
    }
    const p = shapeOf(primal);
    const s = shapeOf(shadow);
    if (p.dtype !== s.dtype || !sameDims(p.dims, s.dims)) {
      throw new ShadowMismatchError(
        path,
        `The primal${at(path)} is ${shapeText(p.dtype, p.dims)} but its shadow is ${shapeText(s.dtype, s.dims)}: a shadow has its primal's dtype and dims. ` +
          'Make the shadows from these primals with Shadows(space, primals).',
      );
    }
    return;
  }
  if (!isGroup(primal) || ancestors.includes(primal)) {
    throw new NotAPrimalError(
      path,
      `The primal${at(path)} is ${describeValue(primal)}; walkShadows takes an array, or plain objects and JavaScript arrays of them (and no cycles).`,
    );
  }
  if (Array.isArray(primal)) {
    if (!Array.isArray(shadow) || shadow.length !== primal.length) {
      throw new ShadowMismatchError(
        path,
        `The primals${at(path)} are a list of ${primal.length} but the shadows are ${Array.isArray(shadow) ? `a list of ${shadow.length}` : valueText(shadow)}. Shadows mirror their primals' structure.`,
      );
    }
  } else {
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
  }
  ancestors.push(primal);
  const paths = childPaths(primal, path);
  const keys = childKeys(primal);
  const shadows = shadow as Record<string, unknown> | unknown[];
  for (let j = 0; j < paths.length; j++)
    checkPairs(childAt(primal, keys, j), childAt(shadows, keys, j), paths[j] as string, ancestors);
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
  const p = primal as Record<string, unknown> | unknown[];
  const s = shadow as Record<string, unknown> | unknown[];
  const paths = childPaths(p, path);
  const keys = childKeys(p);
  for (let j = 0; j < paths.length; j++) visit(childAt(p, keys, j), childAt(s, keys, j), paths[j] as string, f);
}

/**
 * Walk primals and their shadows together, calling `f(primal, shadow, path)` for each pair of
 * arrays in the primals' key order (`path` is the key path, such as `'layer.w'`, or `''` for a
 * single array): an optimizer step over parameters and their gradients. Both structures are
 * checked before `f` is first called, so a mismatch never leaves a step half-applied. A walk over
 * the same structures again allocates nothing (the paths are kept).
 *
 * @throws {InvalidArgumentError} when `f` is not a function.
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
  if (typeof f !== 'function') {
    throw new InvalidArgumentError(
      `walkShadows(primals, shadows, f) needs a function f(primal, shadow, path), called for each pair of arrays, got ${describeValue(f)}. ` +
        'Nothing was walked.',
    );
  }
  const ancestors = takeAncestors();
  checkPairs(primals, shadows, '', ancestors);
  keepAncestors(ancestors);
  visit(primals, shadows, '', f as (primal: never, shadow: never, path: string) => void);
}
