import { isArray, type Kind } from './array.js';
import { InvalidSpecError } from './errors.js';
import { frameClosed } from './frame.js';
import { readKey } from './read-key.js';
import { commit, rollback, savepoint } from './savepoint.js';
import { isFrame, type Space } from './space.js';
import { checkSpec, type Materialize, type Spec } from './spec.js';
import { isUndef } from './undef.js';
import { zeroArray } from './zero.js';

/**
 * Materialize a spec into `space`, all or nothing: a bad spec throws before anything is allocated,
 * and a failure part-way (a full arena) rolls back what was allocated where the space supports it.
 *
 * @throws {InvalidSpecError} for a bad spec value (its `path` names it), before anything is allocated.
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
      `Cannot materialize: ${bad.message}. Describe arrays with Undef(dtype, dims), pass arrays you own as they are, and nest plain objects or JavaScript arrays for groups.`,
    );
  }
  return materializeChecked(space, spec) as Materialize<S, K>;
}

/**
 * Materialize a spec already known to be valid into a fresh object: rolled back on failure,
 * committed on success (so that a space tracking its arrays for rollback lets go of them).
 */
export function materializeChecked(space: Space, spec: Spec): Record<string, unknown> {
  assertUsable(space);
  const into: Record<string, unknown> = {};
  const token = savepoint(space);
  try {
    materializeInto(space, spec, into);
  } catch (error) {
    rollback(space, token, error);
    throw error;
  }
  commit(space, token);
  return into;
}

// An empty spec allocates nothing, but a closed frame must still refuse it like any other use.
function assertUsable(space: Space): void {
  if (isFrame(space) && !space.isOpen) throw frameClosed(space, 'materialize a spec');
}

/**
 * The one spec materializer, which `alloc`, `materialize`, the description registries and
 * `@pol/verbs` all go through: materialize `spec` into `space`, name for name into `into`.
 *
 * - An Undef becomes `space.alloc(dtype, dims)`, zeroed through its family's zeroing protocol
 *   when it is `zeroed`; a data array passes through; a nested spec becomes a fresh object
 *   and a JavaScript array a fresh array, filled the same way.
 * - `supplied` (optional) holds the caller's own buffers by name, as `checkSupplied`
 *   accepted them: a supplied array is used as it is (never zeroed: the caller accumulates into
 *   it); a supplied group or list that covers everything is used as the caller's own object, and
 *   one that covers only part is merged into a fresh one, the rest materialized. Only the names
 *   `spec` describes are read from it.
 * - Allocation order is the spec's order (keys as `for...in` visits them, elements by index),
 *   so that an arena sees the same sequence every call and hands out the same offsets.
 *
 * The spec must have passed {@link checkSpec}. Not atomic by itself: take a {@link savepoint}
 * before materializing (several specs, if they succeed or fail together), then {@link rollback} on
 * failure or {@link commit} once the work it was for has succeeded. On a flat spec with nothing supplied, it allocates only the arrays themselves.
 *
 * @example
 * ```ts
 * import { Similar, Undef, zeroed } from '@pol/core';
 * import { materializeInto } from '@pol/core/backend';
 * const space = Similar(new Float32Array(0));
 * const mine = new Float32Array(4).fill(1);
 * const into: Record<string, unknown> = {};
 * materializeInto(space, { y: Undef('float32', 2), grad: zeroed(Undef('float32', 4)) }, into, { grad: mine });
 * console.log(into.grad === mine, mine[0]); // true 1: supplied, used as is
 * ```
 */
export function materializeInto(
  space: Space,
  spec: Spec,
  into: Record<string, unknown>,
  supplied?: Record<string, unknown>,
): void {
  for (const key in spec) {
    if (Object.hasOwn(spec, key))
      into[key] = materializeValue(space, spec[key], supplied === undefined ? undefined : readKey(supplied, key));
  }
}

function materializeValue(space: Space, want: unknown, given: unknown): unknown {
  if (given !== undefined) {
    if (isArray(given) || isUndef(want) || isArray(want)) return given;
    return isComplete(want, given) ? given : materializeContainer(space, want, given);
  }
  if (isUndef(want)) {
    const array = space.alloc(want.dtype, want.dims);
    if (want.zeroed === true) zeroArray(array);
    return array;
  }
  if (isArray(want)) return want;
  return materializeContainer(space, want, undefined);
}

function materializeContainer(space: Space, want: unknown, given: unknown): unknown {
  if (Array.isArray(want)) {
    const list = given as readonly unknown[] | undefined;
    const out: unknown[] = [];
    for (let i = 0; i < want.length; i++) out.push(materializeValue(space, want[i], list?.[i]));
    return out;
  }
  const spec = want as Record<string, unknown>;
  const group = given as Record<string, unknown> | undefined;
  const out: Record<string, unknown> = {};
  for (const key in spec) {
    if (Object.hasOwn(spec, key))
      out[key] = materializeValue(space, spec[key], group === undefined ? undefined : readKey(group, key));
  }
  return out;
}

// Whether a caller's (already checked) group or list covers everything `want` describes.
function isComplete(want: unknown, given: unknown): boolean {
  if (Array.isArray(want)) {
    const list = given as readonly unknown[];
    for (let i = 0; i < want.length; i++) if (!coversValue(want[i], list[i])) return false;
    return true;
  }
  const spec = want as Record<string, unknown>;
  const group = given as Record<string, unknown>;
  for (const key in spec) if (Object.hasOwn(spec, key) && !coversValue(spec[key], readKey(group, key))) return false;
  return true;
}

function coversValue(want: unknown, given: unknown): boolean {
  if (given === undefined) return false;
  return isUndef(want) || isArray(want) || isArray(given) || isComplete(want, given);
}
