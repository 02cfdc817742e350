import { type DType, dtypeInfo } from './dtype.js';
import { InvalidShapeError } from './errors.js';

/**
 * The number of elements of an array with these dims (1 for `[]`, a scalar), after checking
 * that every dim is a non-negative integer.
 *
 * @throws {InvalidShapeError} for a negative, fractional, NaN or infinite dim, or a count past
 * `Number.MAX_SAFE_INTEGER`.
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
  let count = 1;
  for (let i = 0; i < dims.length; i++) {
    const d = dims[i];
    if (typeof d !== 'number' || !Number.isInteger(d) || d < 0) {
      throw new InvalidShapeError(
        `dims[${i}] is ${describeValue(d)} in [${dims.map(describeValue).join(', ')}]: every dim must be a non-negative integer. ` +
          'Round or validate computed sizes before describing an array.',
      );
    }
    count *= d;
  }
  if (!Number.isSafeInteger(count)) {
    throw new InvalidShapeError(
      `dims [${dims.join(', ')}] describe ${count} elements, past Number.MAX_SAFE_INTEGER: no JavaScript memory can hold that. Check the dims for a unit mistake.`,
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
      `${dtype}[${dims.join(', ')}] is ${bytes} bytes, past Number.MAX_SAFE_INTEGER: no JavaScript memory can hold that. Check the dims for a unit mistake.`,
    );
  }
  return bytes;
}

/** A short, safe rendering of any value for an error message. */
export function describeValue(x: unknown): string {
  if (typeof x === 'string') return `'${x}'`;
  if (typeof x === 'bigint') return `${x}n`;
  if (typeof x === 'function') return `function ${x.name || '(anonymous)'}`;
  if (x === null || typeof x !== 'object') return String(x);
  if (Array.isArray(x)) return `an array of length ${x.length}`;
  const ctor = (x as { constructor?: { name?: unknown } }).constructor;
  const name = typeof ctor?.name === 'string' && ctor.name !== '' ? ctor.name : 'Object';
  return name === 'Object' ? 'a plain object' : `a ${name}`;
}
