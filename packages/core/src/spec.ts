import { keepAncestors, takeAncestors } from './ancestors.js';
import { type AnyArray, type ArrayOf, isArray, type Kind } from './array.js';
import type { DType } from './dtype.js';
import { isUndef, type Undef } from './undef.js';
import { describeValue, isPlainObject } from './value.js';

/**
 * A value in a spec: a description to materialize, an array to pass through, a nested spec, or a
 * JavaScript array (or tuple) of such values, materialized element by element.
 *
 * @example
 * ```ts
 * import { hostArray, type SpecValue, Undef } from '@pol/core';
 * const values: SpecValue[] = [Undef('float32', 4), hostArray(new Float32Array(4)), { w: Undef('int32', 2) }, [Undef('int8', 1)]];
 * ```
 */
export type SpecValue = Undef | AnyArray | Spec | readonly SpecValue[];

/**
 * A plain object of named descriptions. Values are Undefs (materialized), nested specs
 * (materialized recursively, so buffers bundled under one name stay bundled), JavaScript arrays
 * of values (materialized element by element, in order: a model's layers), or data arrays (a
 * TypedArray, a HostArray, any Pol array), which pass through untouched: put your own array under
 * a name and that buffer is never allocated, which is how a caller aliases one output in place
 * while the rest allocate.
 *
 * @example
 * ```ts
 * import { alloc, Similar, type Spec, Undef } from '@pol/core';
 * const spec = { layers: [{ w: Undef('float32', 2, 3) }, { w: Undef('float32', 3, 1) }], b: Undef('float32', 3) } as const satisfies Spec;
 * const { layers, b } = alloc(Similar(new Float32Array(0)), spec); // layers: a tuple of two { w: HostArray<'float32'> }
 * console.log(layers.length, layers[1].w.dims, b.dims); // 2 [ 3, 1 ] [ 3 ]
 * ```
 */
export interface Spec {
  readonly [name: string]: SpecValue;
}

/**
 * The type `alloc(space, spec)` returns for a `K` space: each Undef becomes the space's array of
 * its dtype, data arrays stay as they are, nested specs map recursively, and JavaScript arrays
 * and tuples map element by element (a tuple to a tuple of the same length).
 *
 * @example
 * ```ts
 * import type { HostArray, Materialize, Undef } from '@pol/core';
 * type Params = Materialize<{ w: Undef<'float32'>; labels: Undef<'int32'>; pair: readonly [Undef<'int8'>, Undef<'uint8'>] }, 'host'>;
 * const params: Params = {
 *   w: {} as HostArray<'float32'>,
 *   labels: {} as HostArray<'int32'>,
 *   pair: [{} as HostArray<'int8'>, {} as HostArray<'uint8'>],
 * };
 * ```
 */
export type Materialize<S, K extends Kind> =
  S extends Undef<infer D>
    ? ArrayOf<K, D>
    : S extends AnyArray
      ? S
      : S extends object
        ? [Spec] extends [S]
          ? MaterializedSpec<K>
          : [readonly SpecValue[]] extends [S]
            ? MaterializedValue<K>[]
            : { -readonly [P in keyof S]: Materialize<S[P], K> }
        : never;

// What a spec typed only as `Spec` (or a list of `SpecValue`) materializes to. Named, because
// mapping the recursive `SpecValue` itself would never end.
type MaterializedValue<K extends Kind> = ArrayOf<K, DType> | AnyArray | MaterializedSpec<K> | MaterializedValue<K>[];
interface MaterializedSpec<K extends Kind> {
  [name: string]: MaterializedValue<K>;
}

/** Where a spec is bad: the key path of the first bad value, and what is wrong there. */
export interface SpecProblem {
  /** The key path, such as `'layers[1].w'` (`''` for the spec itself). */
  readonly path: string;
  /** What is wrong, naming the path. */
  readonly message: string;
}

// A failure found deep in a walk: its path is put together only on the way out, so a spec that
// passes costs no string. `segments` holds keys and indices from the bad value up to the root.
interface Failure {
  readonly segments: (string | number)[];
  readonly value: unknown;
  readonly cycle: boolean;
}

/**
 * Whether `x` is a well-formed spec, or the key path and message of its first bad value. Walking
 * the whole spec before allocating anything is what makes a bad spec change nothing.
 *
 * @example
 * ```ts
 * import { checkSpec, type SpecProblem, Undef } from '@pol/core';
 * console.log(checkSpec({ w: Undef('float32', 2) })); // undefined
 * const problem: SpecProblem | undefined = checkSpec({ layers: [{ w: Undef('float32', 2) }, { w: 'zeros' }] });
 * console.log(problem?.path); // 'layers[1].w'
 * ```
 */
export function checkSpec(x: unknown): SpecProblem | undefined {
  if (!isPlainObject(x)) {
    return {
      path: '',
      message: `a spec must be a plain object of Undefs, arrays and nested specs, got ${describeValue(x)}`,
    };
  }
  // The stack of containers above the one being walked, for cycle detection (kept between walks).
  const ancestors = takeAncestors();
  ancestors.push(x);
  const failure = walkGroup(x, ancestors);
  ancestors.pop();
  keepAncestors(ancestors);
  return failure === undefined ? undefined : problemOf(failure);
}

function walkGroup(spec: Record<string, unknown>, ancestors: object[]): Failure | undefined {
  for (const key in spec) {
    if (!Object.hasOwn(spec, key)) continue;
    const failure = walkValue(spec[key], ancestors);
    if (failure !== undefined) {
      failure.segments.push(key);
      return failure;
    }
  }
  return undefined;
}

function walkList(list: readonly unknown[], ancestors: object[]): Failure | undefined {
  for (let i = 0; i < list.length; i++) {
    const failure = walkValue(list[i], ancestors);
    if (failure !== undefined) {
      failure.segments.push(i);
      return failure;
    }
  }
  return undefined;
}

function walkValue(value: unknown, ancestors: object[]): Failure | undefined {
  if (isUndef(value) || isArray(value)) return undefined;
  const list = Array.isArray(value);
  if (!list && !isPlainObject(value)) return { segments: [], value, cycle: false };
  const container = value as object;
  if (ancestors.includes(container)) return { segments: [], value, cycle: true };
  ancestors.push(container);
  const failure = list ? walkList(container as unknown[], ancestors) : walkGroup(container as Record<string, unknown>, ancestors);
  ancestors.pop();
  return failure;
}

function problemOf(failure: Failure): SpecProblem {
  let path = '';
  for (let i = failure.segments.length - 1; i >= 0; i--) {
    const segment = failure.segments[i];
    path = typeof segment === 'number' ? `${path}[${segment}]` : path === '' ? (segment ?? '') : `${path}.${segment}`;
  }
  if (failure.cycle) return { path, message: `the spec refers back to itself at ${path}` };
  return {
    path,
    message: `${path} is ${describeValue(failure.value)}, but a spec value must be an Undef, a data array (a TypedArray or a Pol array), a nested spec, or a JavaScript array of those`,
  };
}
