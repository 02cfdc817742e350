import { type DType, dtypeInfo } from './dtype.js';
import { InvalidShapeError } from './errors.js';
import { describeValue } from './value.js';

/**
 * The number of elements of an array with these dims (1 for `[]`, a scalar), after checking
 * that every dim is a non-negative integer.
 *
 * @throws {InvalidShapeError} for a negative, fractional, NaN or infinite dim, a dim or a count past
 * `Number.MAX_SAFE_INTEGER`, or dims that are not an array.
 * @example
 * ```ts
 * import { elementCount } from '@pol/core';
 * elementCount([3, 4]); // 12
 * ```
 */
export function elementCount(dims: readonly number[]): number {
  if (!Array.isArray(dims)) {
    throw new InvalidShapeError(
      `dims must be an array of non-negative integers, got ${describeValue(dims)}. Pass dims such as [3, 4].`,
    );
  }
  // Every dim is checked before any is multiplied, and a zero dim is counted apart, so that an
  // intermediate product past the safe range (or Infinity × 0 = NaN) never decides the answer.
  let count = 1;
  let empty = false;
  for (let i = 0; i < dims.length; i++) {
    const d: unknown = dims[i];
    if (typeof d !== 'number' || !Number.isSafeInteger(d) || d < 0) {
      throw new InvalidShapeError(
        `dims[${i}] is ${describeValue(d)} in [${dims.map(describeValue).join(', ')}]: every dim must be a non-negative integer ` +
          'no larger than Number.MAX_SAFE_INTEGER. Round or validate computed sizes before describing an array.',
      );
    }
    if (d === 0) empty = true;
    else count *= d;
  }
  if (empty) return 0;
  if (!Number.isSafeInteger(count)) {
    throw new InvalidShapeError(
      `dims [${dims.join(', ')}] describe more than Number.MAX_SAFE_INTEGER elements: no JavaScript memory can hold that. Check the dims for a unit mistake.`,
    );
  }
  return count;
}

/**
 * The byte size of a `dtype` array with these `dims`, after checking both.
 *
 * @throws {UnknownDTypeError} for a dtype this runtime does not support.
 * @throws {InvalidShapeError} for bad dims, or a byte size past `Number.MAX_SAFE_INTEGER`.
 * @example
 * ```ts
 * import { byteLength } from '@pol/core';
 * byteLength('float64', [2, 5]); // 80
 * ```
 */
export function byteLength(dtype: DType, dims: readonly number[]): number {
  const size = dtypeInfo(dtype).byteSize;
  const count = elementCount(dims);
  const bytes = count * size;
  if (!Number.isSafeInteger(bytes)) {
    throw new InvalidShapeError(
      `${shapeText(dtype, dims)} is ${count} elements of ${size} bytes, past Number.MAX_SAFE_INTEGER bytes: no JavaScript memory can hold that. Check the dims for a unit mistake.`,
    );
  }
  return bytes;
}

/**
 * The text every Pol message writes an array's type and shape as: `'float32[2, 3]'` (`'int8[]'`
 * for a scalar).
 *
 * @example
 * ```ts
 * import { shapeText } from '@pol/core/backend';
 * console.log(shapeText('float32', [2, 3]), shapeText('int8', [])); // 'float32[2, 3]' 'int8[]'
 * ```
 */
export function shapeText(dtype: DType, dims: readonly number[]): string {
  return `${dtype}[${Array.isArray(dims) ? dims.join(', ') : describeValue(dims)}]`;
}
