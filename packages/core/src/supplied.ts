import { isArray, type PolArray, valueText } from './array.js';
import { sameDims } from './dims.js';
import { type AnyTypedArray, dtypeOfTypedArray } from './dtype.js';
import { readKey } from './read-key.js';
import { shapeText } from './shape.js';
import type { Spec } from './spec.js';
import { isUndef } from './undef.js';
import { isPlainObject } from './value.js';

/** Why a buffer the caller supplied does not fit what a spec describes under its name. */
export interface SuppliedProblem {
  /** The key path of the supplied value, such as `'grads.layers[0].w'`. */
  readonly path: string;
  /** What the spec describes there: `'float32[2, 3]'`, `'a group { w, b }'`, `'a list of 2'`, or `'nothing'`. */
  readonly expected: string;
  /** What was supplied: `'float32[3]'`, `'a plain object'`, … */
  readonly got: string;
  /** What to do instead, one sentence. */
  readonly remedy: string;
  /** The whole explanation: what was supplied where, what the spec describes, and the remedy. */
  readonly message: string;
}

// A mismatch found deep in a walk; the path is put together only on the way out, so a check that
// passes allocates nothing. `segments` runs from the bad value up to the top.
interface Mismatch {
  readonly segments: (string | number)[];
  readonly want: unknown;
  readonly got: unknown;
  /** The container that does not describe the supplied value, for an extra key or element. */
  readonly extraOf: unknown;
}

/**
 * Check the buffers a caller supplied by name (`supplied`, typically a kernel's options object)
 * against what `spec` describes under the same names, before anything is materialized: a
 * supplied array must have the described dtype and dims; a supplied group must be a plain object
 * with only described names (each checked the same way, and any of them may be left out); a
 * supplied list must be a JavaScript array no longer than the described one. Names `spec` does not
 * describe are not looked at (they are the kernel's own options), and neither are values that are
 * `undefined`. Returns `undefined` when everything fits, without allocating anything.
 *
 * `materializeInto(space, spec, into, supplied)` then uses what was supplied and materializes the rest.
 *
 * @example
 * ```ts
 * import { Undef } from '@pol/core';
 * import { checkSupplied, type SuppliedProblem } from '@pol/core/backend';
 * const spec = { y: Undef('float32', 2, 3), layers: [{ w: Undef('float32', 4) }] };
 * const problem: SuppliedProblem | undefined = checkSupplied(spec, { y: new Float32Array(6), lr: 0.1 });
 * console.log(problem?.expected, problem?.got); // 'float32[2, 3]' 'float32[6]'
 * console.log(checkSupplied(spec, { layers: [{ w: new Float32Array(4) }], lr: 0.1 })); // undefined
 * ```
 */
export function checkSupplied(spec: Spec, supplied: Readonly<Record<string, unknown>>): SuppliedProblem | undefined {
  for (const key in spec) {
    if (!Object.hasOwn(spec, key)) continue;
    const given = readKey(supplied, key);
    if (given === undefined) continue;
    const mismatch = checkValue(spec[key], given);
    if (mismatch !== undefined) {
      mismatch.segments.push(key);
      return problemOf(mismatch);
    }
  }
  return undefined;
}

function checkValue(want: unknown, got: unknown): Mismatch | undefined {
  if (isUndef(want) || isArray(want)) return fits(want, got) ? undefined : { segments: [], want, got, extraOf: undefined };
  if (Array.isArray(want)) {
    if (!Array.isArray(got)) return { segments: [], want, got, extraOf: undefined };
    for (let i = 0; i < got.length; i++) {
      const value: unknown = got[i];
      if (value === undefined) continue;
      if (i >= want.length) return { segments: [i], want: undefined, got: value, extraOf: want };
      const mismatch = checkValue(want[i], value);
      if (mismatch !== undefined) {
        mismatch.segments.push(i);
        return mismatch;
      }
    }
    return undefined;
  }
  const spec = want as Record<string, unknown>;
  if (!isPlainObject(got)) return { segments: [], want, got, extraOf: undefined };
  for (const key in got) {
    if (Object.hasOwn(got, key) && got[key] !== undefined && !Object.hasOwn(spec, key)) {
      return { segments: [key], want: undefined, got: got[key], extraOf: want };
    }
  }
  for (const key in spec) {
    if (!Object.hasOwn(spec, key)) continue;
    const value = readKey(got, key);
    if (value === undefined) continue;
    const mismatch = checkValue(spec[key], value);
    if (mismatch !== undefined) {
      mismatch.segments.push(key);
      return mismatch;
    }
  }
  return undefined;
}

// Whether `got` is an array of the dtype and dims `want` (an Undef or a data array) describes,
// without allocating: shapeOf would make an object and a dims array for a bare TypedArray.
function fits(want: unknown, got: unknown): boolean {
  const gotBare = dtypeOfTypedArray(got);
  if (gotBare === undefined && !isArray(got)) return false;
  const wantBare = dtypeOfTypedArray(want);
  const wantDtype = wantBare ?? (want as PolArray).dtype;
  if ((gotBare ?? (got as PolArray).dtype) !== wantDtype) return false;
  if (wantBare !== undefined) {
    const length = (want as AnyTypedArray).length;
    if (gotBare !== undefined) return (got as AnyTypedArray).length === length;
    const dims = (got as PolArray).dims;
    return dims.length === 1 && dims[0] === length;
  }
  const dims = (want as PolArray).dims;
  if (gotBare !== undefined) return dims.length === 1 && dims[0] === (got as AnyTypedArray).length;
  return sameDims((got as PolArray).dims, dims);
}

function pathOf(segments: readonly (string | number)[], upTo: number): string {
  let path = '';
  for (let i = segments.length - 1; i >= upTo; i--) {
    const segment = segments[i];
    path = typeof segment === 'number' ? `${path}[${segment}]` : path === '' ? (segment ?? '') : `${path}.${segment}`;
  }
  return path;
}

function described(want: unknown): string {
  if (isUndef(want)) return shapeText(want.dtype, want.dims);
  if (isArray(want)) return valueText(want);
  if (Array.isArray(want)) return `a list of ${want.length}`;
  return `a group { ${Object.keys(want as object).join(', ')} }`;
}

function problemOf(mismatch: Mismatch): SuppliedProblem {
  const path = pathOf(mismatch.segments, 0);
  const got = valueText(mismatch.got);
  if (mismatch.extraOf !== undefined) {
    const parent = pathOf(mismatch.segments, 1);
    const container = described(mismatch.extraOf);
    const last = mismatch.segments[0];
    const remedy =
      typeof last === 'number'
        ? `The spec describes '${parent}' as ${container}: remove element ${last}.`
        : `The spec describes '${parent}' as ${container}: remove '${last}' (a misspelt name?).`;
    return {
      path,
      expected: 'nothing',
      got,
      remedy,
      message: `The buffer supplied under '${path}' is ${got}, but the spec describes nothing there. ${remedy}`,
    };
  }
  const expected = described(mismatch.want);
  const remedy =
    isUndef(mismatch.want) || isArray(mismatch.want)
      ? `Pass a ${expected} array under '${path}', or leave '${path}' out to have it materialized.`
      : Array.isArray(mismatch.want)
        ? `Pass a JavaScript array of (some of) its ${mismatch.want.length} elements under '${path}', or leave '${path}' out.`
        : `Pass a plain object with (some of) the names ${Object.keys(mismatch.want as object).join(', ')} under '${path}', or leave '${path}' out.`;
  return {
    path,
    expected,
    got,
    remedy,
    message: `The buffer supplied under '${path}' is ${got}, but the spec describes '${path}' as ${expected}. ${remedy}`,
  };
}
