import { describe, Undef } from '@pol/core';
import { Allocating } from '../allocating.js';
import { shadowSpec } from '../shadows.js';
import { type F32, rowCount, rowLength } from './types.js';

/**
 * RMS norm over the last dim, into `out.y`: `y[r, j] = x[r, j] · rstd[r] · w[j]` with
 * `rstd[r] = 1 / sqrt(mean_j x[r, j]² + eps)`. It saves `rstd` (one per row) as a checkpoint for
 * {@link rmsNormBackwardInto}. `eps` defaults to `1e-5`.
 *
 * @example
 * ```ts
 * import { hostArray, Similar, checkpoints, outputs } from '@pol/core';
 * import { rmsNormInto } from '@pol/verbs/examples';
 * const x = hostArray(Float32Array.from([1, 2, 3, 4]), [2, 2]);
 * const w = hostArray(Float32Array.from([1, 1]));
 * const space = Similar(x);
 * const { y } = outputs(space, rmsNormInto, x);
 * const { rstd } = checkpoints(space, rmsNormInto, x);
 * rmsNormInto({ y }, x, w, { rstd });
 * ```
 */
export const rmsNormInto = describe(
  function rmsNormInto(out: { y: F32 }, x: F32, w: F32, options: { eps?: number; rstd: F32 }): void {
    const rows = rowCount(x);
    const cols = rowLength(x);
    const eps = options.eps ?? 1e-5;
    const xs = x.data;
    const ws = w.data;
    const ys = out.y.data;
    const rstd = options.rstd.data;
    for (let r = 0; r < rows; r++) {
      const base = r * cols;
      let squares = 0;
      for (let j = 0; j < cols; j++) {
        const v = xs[base + j] ?? 0;
        squares += v * v;
      }
      const s = 1 / Math.sqrt(squares / cols + eps);
      rstd[r] = s;
      for (let j = 0; j < cols; j++) ys[base + j] = (xs[base + j] ?? 0) * s * (ws[j] ?? 0);
    }
  },
  {
    outputs: (x: F32) => ({ y: Undef(x) }),
    checkpoints: (x: F32) => ({ rstd: Undef('float32', [rowCount(x)]) }),
  },
);

/**
 * The backward pass of {@link rmsNormInto}: given the output's gradient `dy`, the forward's
 * inputs and its checkpoint `rstd`, accumulate the gradients of the input (`grads.dx`) and of the
 * weight (`grads.dw`). Both are described as shadows, so a verb materializes them zeroed; pass
 * your own under `dx`/`dw` to accumulate into them.
 *
 * @example
 * ```ts
 * import { hostArray } from '@pol/core';
 * import { rmsNorm, rmsNormBackward } from '@pol/verbs/examples';
 * const x = hostArray(Float32Array.from([1, 2, 3, 4]), [2, 2]);
 * const w = hostArray(Float32Array.from([1, 0.5]));
 * const { y, rstd } = rmsNorm(x, w);
 * const { dx, dw } = rmsNormBackward(y, x, w, rstd); // the gradient of ½‖y‖²
 * ```
 */
export const rmsNormBackwardInto = describe(
  function rmsNormBackwardInto(grads: { dx: F32; dw: F32 }, dy: F32, x: F32, w: F32, rstd: F32): void {
    const rows = rowCount(x);
    const cols = rowLength(x);
    const xs = x.data;
    const ws = w.data;
    const dys = dy.data;
    const dxs = grads.dx.data;
    const dws = grads.dw.data;
    for (let r = 0; r < rows; r++) {
      const base = r * cols;
      const s = rstd.data[r] ?? 0;
      let dot = 0;
      for (let j = 0; j < cols; j++) {
        const g = dys[base + j] ?? 0;
        const v = xs[base + j] ?? 0;
        dot += g * (ws[j] ?? 0) * v;
        dws[j] = (dws[j] ?? 0) + g * v * s;
      }
      const k = (s * s * s * dot) / cols;
      for (let j = 0; j < cols; j++) {
        const i = base + j;
        dxs[i] = (dxs[i] ?? 0) + s * (ws[j] ?? 0) * (dys[i] ?? 0) - k * (xs[i] ?? 0);
      }
    }
  },
  {
    outputs: (_dy: F32, x: F32, w: F32) => ({ dx: shadowSpec(x), dw: shadowSpec(w) }),
  },
);

/**
 * The functional RMS norm: `const { y, rstd } = rmsNorm(space, x, w, { eps })`. `y` is the output
 * and `rstd` the checkpoint its backward pass reads; both come from the space.
 *
 * @example
 * ```ts
 * import { hostArray } from '@pol/core';
 * import { rmsNorm } from '@pol/verbs/examples';
 * const x = hostArray(Float32Array.from([3, 4]), [1, 2]);
 * const { y, rstd } = rmsNorm(x, hostArray(Float32Array.from([1, 1])), { eps: 0 });
 * ```
 */
export const rmsNorm = Allocating(rmsNormInto);

/**
 * The functional backward pass: `const { dx, dw } = rmsNormBackward(space, dy, x, w, rstd)`, the
 * gradients zeroed before accumulating, or `rmsNormBackward(space, dy, x, w, rstd, { dw })` to
 * accumulate into your own `dw`.
 *
 * @example
 * ```ts
 * import { hostArray } from '@pol/core';
 * import { rmsNorm, rmsNormBackward } from '@pol/verbs/examples';
 * const x = hostArray(Float32Array.from([3, 4]), [1, 2]);
 * const w = hostArray(Float32Array.from([1, 1]));
 * const { rstd } = rmsNorm(x, w);
 * const { dx, dw } = rmsNormBackward(hostArray(Float32Array.from([1, 0]), [1, 2]), x, w, rstd);
 * ```
 */
export const rmsNormBackward = Allocating(rmsNormBackwardInto);
