/**
 * How many arguments a call passed, for a function that takes fixed parameters instead of reading
 * `arguments` (which makes an object on every call below V8's optimizing compiler): the count up
 * to the last argument that is not `undefined`, so that an argument passed as `undefined` counts
 * as not passed, as with a default parameter. Reads up to eleven; a function that takes fewer
 * passes its own, and the rest are undefined.
 *
 * @example
 * ```ts
 * import { passedCount } from '@pol/core/backend';
 * console.log(passedCount(1, 2), passedCount(1, undefined, 3), passedCount(1, undefined), passedCount()); // 2 3 1 0
 * ```
 */
export function passedCount(
  a0?: unknown,
  a1?: unknown,
  a2?: unknown,
  a3?: unknown,
  a4?: unknown,
  a5?: unknown,
  a6?: unknown,
  a7?: unknown,
  a8?: unknown,
  a9?: unknown,
  a10?: unknown,
): number {
  if (a10 !== undefined) return 11;
  if (a9 !== undefined) return 10;
  if (a8 !== undefined) return 9;
  if (a7 !== undefined) return 8;
  if (a6 !== undefined) return 7;
  if (a5 !== undefined) return 6;
  if (a4 !== undefined) return 5;
  if (a3 !== undefined) return 4;
  if (a2 !== undefined) return 3;
  if (a1 !== undefined) return 2;
  return a0 !== undefined ? 1 : 0;
}
