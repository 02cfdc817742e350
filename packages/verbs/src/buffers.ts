// Internal: materializing a verb's described buffers, with the caller's own buffers merged in by
// name, and the zeroing that shadows need. Not exported from the package.
//
// Invariants the verbs rely on:
// - `checkSupplied` runs over every lifetime's spec before `fill` allocates anything, so a bad
//   caller buffer throws with every space, arena and frame unchanged;
// - `fill` allocates each Undef the caller did not cover exactly once, in the spec's key order
//   (the order a bump arena needs to repeat addresses step after step), and passes caller buffers
//   through by identity: a leaf as is, a complete group as the caller's own object;
// - an Undef made by `shadowSpec` is zeroed right after it is materialized here, never when the
//   caller supplied the buffer (the caller's gradients accumulate);
// - on the hot path (no caller buffers, flat specs) nothing is allocated but the arrays themselves
//   and the objects they are written into: `for...in` over plain objects, no key arrays.

import {
  type AnyArray,
  describeValue,
  isArray,
  isPlainObject,
  isUndef,
  rollbackKey,
  type Space,
  type Spec,
  savepointKey,
  shapeOf,
  spaceKey,
  type Undef,
} from '@pol/core';
import { BufferMismatchError, ZeroUnsupportedError } from './errors.js';

/**
 * A space that is never bound: `ambientspace(UNBOUND) === UNBOUND` says "no ambient space" without
 * a throw or an allocation. Never allocated from.
 */
export const UNBOUND: Space = Object.freeze({
  [spaceKey]: 'host' as const,
  alloc(): never {
    throw new Error('unreachable: the @pol/verbs sentinel space is never allocated from');
  },
});

/** A frozen empty spec: what a kernel with no describer for a lifetime describes. */
export const EMPTY: Spec = Object.freeze({});

// Shadow Undefs carry a private mark. Core's Undefs are extensible objects (private fields, not
// frozen), so a private field can be stamped onto one through a base constructor that returns its
// argument: invisible to reflection, equality and inspection, and a plain property load to test,
// where a WeakSet costs a hash, a table entry and ephemeron work in every collection. An Undef that
// cannot be extended falls back to the WeakSet.
class ReturnsItsArgument {
  constructor(target: object) {
    // biome-ignore lint/correctness/noConstructorReturn: returning the argument is what stamps the private field onto it.
    return target;
  }
}

class ShadowMark extends ReturnsItsArgument {
  readonly #shadow = true;

  static stamp(target: object): void {
    new ShadowMark(target);
  }

  static has(target: object): boolean {
    return #shadow in target;
  }
}

const shadowUndefs = new WeakSet<object>();

/** Remember `undef` as a shadow: whoever materializes it through this package zeroes it. */
export function markShadow<U extends Undef>(undef: U): U {
  if (ShadowMark.has(undef)) return undef;
  if (Object.isExtensible(undef)) ShadowMark.stamp(undef);
  else shadowUndefs.add(undef);
  return undef;
}

/** Whether `undef` was marked by {@link markShadow}. */
function isShadow(undef: object): boolean {
  return ShadowMark.has(undef) || shadowUndefs.has(undef);
}

/** `float32[3, 4]`. */
export function shapeText(dtype: string, dims: readonly number[]): string {
  return `${dtype}[${dims.join(', ')}]`;
}

/** A short description of any value, with the dtype and dims of arrays. */
export function valueText(x: unknown): string {
  if (isArray(x)) {
    const shape = shapeOf(x);
    return shapeText(shape.dtype, shape.dims);
  }
  return describeValue(x);
}

/** Fill a host array (or a bare TypedArray) with zeros. */
export function zeroArray(array: unknown): void {
  const data = ArrayBuffer.isView(array) ? array : (array as { readonly data?: unknown }).data;
  if (!ArrayBuffer.isView(data) || data instanceof DataView) {
    throw new ZeroUnsupportedError(
      `Cannot zero ${valueText(array)} (${describeValue(array)}): it has no host data. Shadows start at zero, and @pol/verbs zeroes ` +
        'host arrays (a HostArray or a TypedArray) only. Shadow host arrays, or clear device buffers with your backend ' +
        '(e.g. encoder.clearBuffer on WebGPU) and pass them to the verb as your own buffers.',
    );
  }
  if (data instanceof BigInt64Array || data instanceof BigUint64Array) data.fill(0n);
  else (data as Float32Array).fill(0);
}

/** Whether two dims arrays are equal. */
export function sameDims(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function groupText(spec: object): string {
  return `a group { ${Object.keys(spec).join(', ')} }`;
}

function mismatch(verb: string, path: string, expected: string, got: string, remedy: string): BufferMismatchError {
  return new BufferMismatchError(
    path,
    expected,
    got,
    `${verb}: the buffer passed under '${path}' is ${got}, but the kernel describes '${path}' as ${expected}. ${remedy}`,
  );
}

function arrayMismatch(verb: string, path: string, dtype: string, dims: readonly number[], got: string): BufferMismatchError {
  const expected = shapeText(dtype, dims);
  return mismatch(
    verb,
    path,
    expected,
    got,
    `Pass a ${expected} array under '${path}', or leave '${path}' out to have it materialized.`,
  );
}

// The path of a caller's buffer is `prefix.key` (just `key` at the top): joined only for a message,
// or once per nested group, never per leaf checked.
function keyPath(prefix: string | undefined, key: string): string {
  return prefix === undefined ? key : `${prefix}.${key}`;
}

function checkValue(verb: string, want: unknown, got: unknown, prefix: string | undefined, name: string): void {
  if (isUndef(want)) {
    checkArray(verb, want.dtype, want.dims, got, prefix, name);
    return;
  }
  if (isArray(want)) {
    const shape = shapeOf(want);
    checkArray(verb, shape.dtype, shape.dims, got, prefix, name);
    return;
  }
  const spec = want as Record<string, unknown>;
  const path = keyPath(prefix, name);
  if (!isPlainObject(got)) {
    throw mismatch(
      verb,
      path,
      groupText(spec),
      valueText(got),
      `Pass a plain object with (some of) the names ${Object.keys(spec).join(', ')} under '${path}', or leave '${path}' out.`,
    );
  }
  for (const key in got) {
    if (got[key] !== undefined && !Object.hasOwn(spec, key)) {
      throw mismatch(
        verb,
        `${path}.${key}`,
        'nothing',
        valueText(got[key]),
        `The kernel describes '${path}' as ${groupText(spec)}: remove '${key}' (a misspelt name?).`,
      );
    }
  }
  for (const key in spec) {
    const value = got[key];
    if (value !== undefined) checkValue(verb, spec[key], value, path, key);
  }
}

// The message strings (and the path) are built only when the check fails: a caller's buffer is
// checked on every call, and a successful check allocates nothing.
function checkArray(
  verb: string,
  dtype: string,
  dims: readonly number[],
  got: unknown,
  prefix: string | undefined,
  name: string,
): void {
  if (!isArray(got)) throw arrayMismatch(verb, keyPath(prefix, name), dtype, dims, describeValue(got));
  const shape = shapeOf(got);
  if (shape.dtype !== dtype || !sameDims(shape.dims, dims)) {
    throw arrayMismatch(verb, keyPath(prefix, name), dtype, dims, shapeText(shape.dtype, shape.dims));
  }
}

/**
 * Check every buffer the caller passed under a name `spec` describes, before anything is
 * allocated. Names the spec does not describe are left alone (they are the kernel's own options).
 */
export function checkSupplied(verb: string, spec: Spec, given: Record<string, unknown>): void {
  for (const key in spec) {
    const value = given[key];
    if (value !== undefined) checkValue(verb, spec[key], value, undefined, key);
  }
}

// Whether the caller's (already checked) group covers every name the spec describes.
function isComplete(spec: Record<string, unknown>, given: Record<string, unknown>): boolean {
  for (const key in spec) {
    const value = given[key];
    if (value === undefined) return false;
    const want = spec[key];
    if (!isUndef(want) && !isArray(want) && !isComplete(want as Record<string, unknown>, value as Record<string, unknown>)) {
      return false;
    }
  }
  return true;
}

function materializeValue(space: Space, want: unknown, given: unknown): unknown {
  if (given !== undefined) {
    if (isArray(given)) return given;
    const spec = want as Record<string, unknown>;
    const group = given as Record<string, unknown>;
    return isComplete(spec, group) ? group : materializeGroup(space, spec, group);
  }
  if (isUndef(want)) {
    const array = space.alloc(want.dtype, want.dims);
    if (isShadow(want)) zeroArray(array);
    return array;
  }
  if (isArray(want)) return want;
  return materializeGroup(space, want as Record<string, unknown>, undefined);
}

function materializeGroup(space: Space, spec: Record<string, unknown>, given: Record<string, unknown> | undefined): object {
  const out: Record<string, unknown> = {};
  for (const key in spec) out[key] = materializeValue(space, spec[key], given?.[key]);
  return out;
}

/**
 * Materialize `spec` into `space`, name for name into `into`, taking the caller's checked buffers
 * from `given` where it has them. Not atomic by itself: callers take a savepoint around it.
 */
export function fill(space: Space, spec: Spec, given: Record<string, unknown> | undefined, into: Record<string, unknown>): void {
  for (const key in spec) into[key] = materializeValue(space, spec[key], given?.[key]);
}

/** Materialize one value (an Undef, an array or a nested spec) the same way `fill` does. */
export function materializeOne(space: Space, want: unknown): unknown {
  return materializeValue(space, want, undefined);
}

/** A savepoint on `space` if it supports them (an arena, a frame), else `undefined`. */
export function savepoint(space: Space): unknown {
  const save = space[savepointKey];
  return save === undefined ? undefined : save.call(space);
}

/**
 * Undo every allocation from `space` since `token` was taken, where the space supports it. A
 * failure while rolling back is attached to `error` (as `suppressed`) rather than replacing it.
 */
export function rollback(space: Space, token: unknown, error: unknown): void {
  const undo = space[rollbackKey];
  if (undo === undefined || space[savepointKey] === undefined) return;
  try {
    undo.call(space, token);
  } catch (undoError) {
    attachSuppressed(error, undoError);
  }
}

/** Attach a secondary failure to the error the caller needs to see. */
export function attachSuppressed(error: unknown, secondary: unknown): void {
  if (typeof error === 'object' && error !== null && !('suppressed' in error)) {
    Object.defineProperty(error, 'suppressed', { value: secondary, configurable: true });
  }
}

/** The first array among `values` (or, failing that, inside plain objects among them), if any. */
export function firstArray(values: readonly unknown[], from: number, to: number): AnyArray | undefined {
  for (let i = from; i < to; i++) if (isArray(values[i])) return values[i] as AnyArray;
  for (let i = from; i < to; i++) {
    const found = findArray(values[i], 0);
    if (found !== undefined) return found;
  }
  return undefined;
}

function findArray(x: unknown, depth: number): AnyArray | undefined {
  if (isArray(x)) return x;
  if (depth > 16 || !isPlainObject(x)) return undefined;
  for (const key in x) {
    const found = findArray(x[key], depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}
