import { type AnyArray, familyOf, type PolArray } from './array.js';
import { dtypeInfo, dtypeOfTypedArray } from './dtype.js';
import { NotAnArrayError, ZeroUnsupportedError } from './errors.js';
import { describeValue } from './value.js';

/**
 * Fill `array` with zeros, whatever its family: a TypedArray or host array on the host (`0`, or
 * `0n` for int64 and uint64), a device array through its backend (`clearBuffer` on WebGPU, which
 * a capture records, so that every replay zeroes again). Returns `array`.
 *
 * This is the zeroing protocol: it calls the `zero(array)` method of the array's
 * `ArrayFamily` (`@pol/core/backend`). Shadows use it to start gradients at zero, since arena memory is not
 * zeroed; call it yourself to clear an accumulator between steps.
 *
 * @throws {NotAnArrayError} when `array` is not an array.
 * @throws {ZeroUnsupportedError} when the array's family has no `zero` method.
 * @example
 * ```ts
 * import { alloc, Similar, zeroArray } from '@pol/core';
 * const g = alloc(Similar(new Float32Array(0)), 'int64', 3);
 * g.data.fill(5n);
 * console.log(zeroArray(g).data); // BigInt64Array(3) [ 0n, 0n, 0n ]
 * ```
 */
export function zeroArray<A extends AnyArray>(array: A): A {
  const dtype = dtypeOfTypedArray(array);
  if (dtype !== undefined) {
    // A bare TypedArray is its own data.
    if (dtypeInfo(dtype).bigint) (array as BigInt64Array).fill(0n);
    else (array as Float64Array).fill(0);
    return array;
  }
  const family = familyOf(array);
  if (family === undefined) {
    throw new NotAnArrayError(
      `zeroArray(array) needs an array (a TypedArray, a HostArray, a GpuArray), got ${describeValue(array)}. ` +
        'To zero a plain JavaScript array, use array.fill(0).',
    );
  }
  if (typeof family.zero !== 'function') {
    throw new ZeroUnsupportedError(
      `Cannot zero ${family.describe(array as PolArray)}: its family ('${String(family.kind)}') has no zero(array) method. ` +
        'Its backend must implement zero(array) for zeroed descriptions, Shadows and zeroArray; until then, zero it with the backend itself.',
    );
  }
  family.zero(array as PolArray);
  return array;
}
