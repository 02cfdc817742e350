import { describe, Undef } from '@pol/core';
import { Allocating } from '../allocating.js';
import { type F32, rowCount, rowLength } from './types.js';

/**
 * Softmax along the last dim, into `out.y`, with `options.tmp` as scratch (the exponentials). It
 * allocates nothing: its output and its scratch are described, so the caller chooses where they
 * come from. Numerically stable (subtracts each row's max).
 *
 * @example
 * ```ts
 * import { hostArray, Similar, alloc } from '@pol/core';
 * import { softmaxInto } from '@pol/verbs/examples';
 * const x = hostArray(Float32Array.from([1, 2, 3]));
 * const space = Similar(x);
 * const y = alloc(space, 'float32', [3]);
 * softmaxInto({ y }, x, { tmp: alloc(space, 'float32', [3]) });
 * ```
 */
export const softmaxInto = describe(
  function softmaxInto(out: { y: F32 }, x: F32, options: { tmp: F32 }): void {
    const rows = rowCount(x);
    const cols = rowLength(x);
    const xs = x.data;
    const ys = out.y.data;
    const tmp = options.tmp.data;
    for (let r = 0; r < rows; r++) {
      const base = r * cols;
      let max = Number.NEGATIVE_INFINITY;
      for (let j = 0; j < cols; j++) max = Math.max(max, xs[base + j] ?? 0);
      let sum = 0;
      for (let j = 0; j < cols; j++) {
        const e = Math.exp((xs[base + j] ?? 0) - max);
        tmp[base + j] = e;
        sum += e;
      }
      for (let j = 0; j < cols; j++) ys[base + j] = (tmp[base + j] ?? 0) / sum;
    }
  },
  {
    outputs: (x: F32) => ({ y: Undef(x) }),
    scratch: (x: F32) => ({ tmp: Undef(x) }),
  },
);

/**
 * The functional softmax: `softmax(space, x).y`, `softmax(x).y` against the ambient space, or
 * unscoped against `Similar(x)`. Its output `y` comes from the space; its scratch `tmp` from a
 * frame that closes before it returns.
 *
 * @example
 * ```ts
 * import { hostArray, withspace, Similar } from '@pol/core';
 * import { softmax } from '@pol/verbs/examples';
 * const x = hostArray(Float32Array.from([1, 2, 3, 4]));
 * const y = softmax(x).y; // unscoped: Similar(x)
 * const space = Similar(x);
 * softmax(space, x).y; // space-first
 * withspace(space, () => softmax(x).y); // ambient
 * ```
 */
export const softmax = Allocating(softmaxInto);
