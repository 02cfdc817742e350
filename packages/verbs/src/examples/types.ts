import type { HostArray } from '@pol/core';

/**
 * A row-major host array of 32-bit floats: what every example kernel reads and writes.
 *
 * @example
 * ```ts
 * import { hostArray } from '@pol/core';
 * import type { F32 } from '@pol/verbs/examples';
 * const m: F32 = hostArray(new Float32Array(6), [2, 3]);
 * ```
 */
export type F32 = HostArray<'float32'>;

/**
 * A row-major host array of 32-bit integers (class labels).
 *
 * @example
 * ```ts
 * import { hostArray } from '@pol/core';
 * import type { I32 } from '@pol/verbs/examples';
 * const labels: I32 = hostArray(Int32Array.from([0, 2, 1]));
 * ```
 */
export type I32 = HostArray<'int32'>;

/**
 * The length of the last dim of `x`: its row length (1 for a scalar).
 *
 * @example
 * ```ts
 * import { rowLength } from '@pol/verbs/examples';
 * rowLength({ dims: [2, 3, 4] }); // 4
 * ```
 */
export function rowLength(x: { readonly dims: readonly number[] }): number {
  return x.dims.length === 0 ? 1 : (x.dims[x.dims.length - 1] ?? 1);
}

/**
 * How many rows of {@link rowLength} `x` holds: the product of its other dims. Kernels read their
 * shape with this and `rowLength` (two numbers, no object per call).
 *
 * @example
 * ```ts
 * import { rowCount } from '@pol/verbs/examples';
 * rowCount({ dims: [2, 3, 4] }); // 6
 * ```
 */
export function rowCount(x: { readonly dims: readonly number[] }): number {
  let rows = 1;
  for (let i = 0; i < x.dims.length - 1; i++) rows *= x.dims[i] ?? 1;
  return rows;
}

/**
 * The length of the last dim of `x` (its row length), and how many rows the other dims make.
 *
 * @example
 * ```ts
 * import { rowsOf } from '@pol/verbs/examples';
 * rowsOf({ dims: [2, 3, 4] }); // { rows: 6, cols: 4 }
 * ```
 */
export function rowsOf(x: { readonly dims: readonly number[] }): { readonly rows: number; readonly cols: number } {
  return { rows: rowCount(x), cols: rowLength(x) };
}
