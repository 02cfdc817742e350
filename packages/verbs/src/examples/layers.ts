// The perceptron's layers as Pol kernels: a dense layer, ReLU and softmax cross-entropy, each
// forward and backward, and each made functional with Allocating.

import { describe, Undef } from '@pol/core';
import { Allocating } from '../allocating.js';
import { shadowSpec } from '../shadows.js';
import { type F32, type I32, rowCount, rowLength } from './types.js';

/**
 * One dense layer's parameters: `w` is `[inputs, outputs]`, `b` is `[outputs]`.
 *
 * @example
 * ```ts
 * import { hostArray } from '@pol/core';
 * import type { Layer } from '@pol/verbs/examples';
 * const layer: Layer = { w: hostArray(new Float32Array(6), [2, 3]), b: hostArray(new Float32Array(3)) };
 * ```
 */
export interface Layer {
  w: F32;
  b: F32;
}

/**
 * A dense layer, into `out.y`: `y = x · w + b` for `x` of dims `[batch, inputs]` (matmul, then bias).
 *
 * @example
 * ```ts
 * import { hostArray } from '@pol/core';
 * import { linear } from '@pol/verbs/examples';
 * const layer = { w: hostArray(Float32Array.from([1, 0, 0, 1]), [2, 2]), b: hostArray(Float32Array.from([1, 1])) };
 * const { y } = linear(layer, hostArray(Float32Array.from([2, 3]), [1, 2])); // [[3, 4]]
 * ```
 *
 * @example
 * ```ts
 * import { hostArray } from '@pol/core';
 * import { linearInto } from '@pol/verbs/examples';
 * const layer = { w: hostArray(Float32Array.from([1, 0, 0, 1]), [2, 2]), b: hostArray(Float32Array.from([1, 1])) };
 * const y = hostArray(new Float32Array(2), [1, 2]); // the kernel writes into buffers you hand it
 * linearInto({ y }, layer, hostArray(Float32Array.from([2, 3]), [1, 2]));
 * console.log(y.data); // Float32Array(2) [ 3, 4 ]
 * ```
 */
export const linearInto = describe(
  function linearInto(out: { y: F32 }, layer: Layer, x: F32): void {
    const batch = rowCount(x);
    const inputs = rowLength(x);
    const outputs = layer.b.data.length;
    const xs = x.data;
    const ws = layer.w.data;
    const bs = layer.b.data;
    const ys = out.y.data;
    for (let r = 0; r < batch; r++) {
      for (let o = 0; o < outputs; o++) ys[r * outputs + o] = bs[o] ?? 0;
      for (let i = 0; i < inputs; i++) {
        const v = xs[r * inputs + i] ?? 0;
        if (v === 0) continue;
        for (let o = 0; o < outputs; o++) ys[r * outputs + o] = (ys[r * outputs + o] ?? 0) + v * (ws[i * outputs + o] ?? 0);
      }
    }
  },
  {
    outputs: (layer: Layer, x: F32) => ({ y: Undef('float32', [rowCount(x), layer.b.data.length]) }),
  },
);

/**
 * The backward pass of {@link linearInto}: from `dy = ∂L/∂y`, write the input's gradient `dx`
 * (an intermediate, overwritten) and accumulate the layer's gradients into `dlayer` (shadows of
 * the layer: zeroed when the verb materializes them, accumulated into when you pass your own).
 *
 * @example
 * ```ts
 * import { hostArray } from '@pol/core';
 * import { linearBackward } from '@pol/verbs/examples';
 * const layer = { w: hostArray(new Float32Array(4), [2, 2]), b: hostArray(new Float32Array(2)) };
 * const x = hostArray(Float32Array.from([1, 2]), [1, 2]);
 * const { dx, dlayer } = linearBackward(layer, x, hostArray(Float32Array.from([1, 1]), [1, 2]));
 * ```
 *
 * @example
 * ```ts
 * import { hostArray } from '@pol/core';
 * import { Shadows } from '@pol/verbs';
 * import { linearBackwardInto } from '@pol/verbs/examples';
 * const layer = { w: hostArray(Float32Array.from([1, 2]), [1, 2]), b: hostArray(new Float32Array(2)) };
 * const x = hostArray(Float32Array.from([3]), [1, 1]);
 * const dx = hostArray(new Float32Array(1), [1, 1]);
 * const dlayer = Shadows(layer); // zeroed: the kernel accumulates into it
 * linearBackwardInto({ dx, dlayer }, layer, x, hostArray(Float32Array.from([1, 1]), [1, 2]));
 * console.log(dx.data, dlayer.w.data); // Float32Array(1) [ 3 ] Float32Array(2) [ 3, 3 ]
 * ```
 */
export const linearBackwardInto = describe(
  function linearBackwardInto(grads: { dx: F32; dlayer: Layer }, layer: Layer, x: F32, dy: F32): void {
    const batch = rowCount(x);
    const inputs = rowLength(x);
    const outputs = layer.b.data.length;
    const xs = x.data;
    const ws = layer.w.data;
    const dys = dy.data;
    const dxs = grads.dx.data;
    const dws = grads.dlayer.w.data;
    const dbs = grads.dlayer.b.data;
    for (let r = 0; r < batch; r++) {
      for (let o = 0; o < outputs; o++) dbs[o] = (dbs[o] ?? 0) + (dys[r * outputs + o] ?? 0);
      for (let i = 0; i < inputs; i++) {
        const v = xs[r * inputs + i] ?? 0;
        let sum = 0;
        for (let o = 0; o < outputs; o++) {
          const g = dys[r * outputs + o] ?? 0;
          sum += g * (ws[i * outputs + o] ?? 0);
          dws[i * outputs + o] = (dws[i * outputs + o] ?? 0) + v * g;
        }
        dxs[r * inputs + i] = sum;
      }
    }
  },
  {
    outputs: (layer: Layer, x: F32) => ({ dx: Undef(x), dlayer: shadowSpec(layer) }),
  },
);

/**
 * The rectifier, into `out.y`: `y = max(x, 0)`.
 *
 * @example
 * ```ts
 * import { hostArray } from '@pol/core';
 * import { relu } from '@pol/verbs/examples';
 * const { y } = relu(hostArray(Float32Array.from([-1, 2]))); // [0, 2]
 * ```
 *
 * @example
 * ```ts
 * import { hostArray } from '@pol/core';
 * import { reluInto } from '@pol/verbs/examples';
 * const x = hostArray(Float32Array.from([-1, 2]));
 * reluInto({ y: x }, x); // in place: the output may alias the input
 * console.log(x.data); // Float32Array(2) [ 0, 2 ]
 * ```
 */
export const reluInto = describe(
  function reluInto(out: { y: F32 }, x: F32): void {
    const xs = x.data;
    const ys = out.y.data;
    for (let i = 0; i < xs.length; i++) ys[i] = Math.max(xs[i] ?? 0, 0);
  },
  { outputs: (x: F32) => ({ y: Undef(x) }) },
);

/**
 * The backward pass of {@link reluInto}: `dx = dy` where the forward input `x` was positive, else 0.
 *
 * @example
 * ```ts
 * import { hostArray } from '@pol/core';
 * import { reluBackward } from '@pol/verbs/examples';
 * const { dx } = reluBackward(hostArray(Float32Array.from([-1, 2])), hostArray(Float32Array.from([5, 5]))); // [0, 5]
 * ```
 *
 * @example
 * ```ts
 * import { hostArray } from '@pol/core';
 * import { reluBackwardInto } from '@pol/verbs/examples';
 * const dx = hostArray(new Float32Array(2));
 * reluBackwardInto({ dx }, hostArray(Float32Array.from([-1, 2])), hostArray(Float32Array.from([5, 5])));
 * console.log(dx.data); // Float32Array(2) [ 0, 5 ]
 * ```
 */
export const reluBackwardInto = describe(
  function reluBackwardInto(grads: { dx: F32 }, x: F32, dy: F32): void {
    const xs = x.data;
    const dys = dy.data;
    const dxs = grads.dx.data;
    for (let i = 0; i < xs.length; i++) dxs[i] = (xs[i] ?? 0) > 0 ? (dys[i] ?? 0) : 0;
  },
  { outputs: (x: F32) => ({ dx: Undef(x) }) },
);

/**
 * Softmax cross-entropy, into `out.loss` (a one-element array, the mean over the batch), for
 * `logits` of dims `[batch, classes]` and integer `labels` of dims `[batch]`. It saves the
 * softmax `probs` as a checkpoint for {@link softmaxCrossEntropyBackwardInto}.
 *
 * @example
 * ```ts
 * import { hostArray } from '@pol/core';
 * import { softmaxCrossEntropy } from '@pol/verbs/examples';
 * const logits = hostArray(Float32Array.from([0, 0]), [1, 2]);
 * const { loss, probs } = softmaxCrossEntropy(logits, hostArray(Int32Array.from([1]))); // loss ≈ ln 2
 * ```
 *
 * @example
 * ```ts
 * import { hostArray } from '@pol/core';
 * import { softmaxCrossEntropyInto } from '@pol/verbs/examples';
 * const loss = hostArray(new Float32Array(1));
 * const probs = hostArray(new Float32Array(2), [1, 2]); // the checkpoint, passed by name
 * softmaxCrossEntropyInto({ loss }, hostArray(Float32Array.from([0, 0]), [1, 2]), hostArray(Int32Array.from([1])), { probs });
 * console.log(loss.data[0]?.toFixed(4), probs.data); // '0.6931' Float32Array(2) [ 0.5, 0.5 ]
 * ```
 */
export const softmaxCrossEntropyInto = describe(
  function softmaxCrossEntropyInto(out: { loss: F32 }, logits: F32, labels: I32, options: { probs: F32 }): void {
    const batch = rowCount(logits);
    const classes = rowLength(logits);
    const zs = logits.data;
    const ps = options.probs.data;
    let total = 0;
    for (let r = 0; r < batch; r++) {
      const base = r * classes;
      let max = Number.NEGATIVE_INFINITY;
      for (let c = 0; c < classes; c++) max = Math.max(max, zs[base + c] ?? 0);
      let sum = 0;
      for (let c = 0; c < classes; c++) sum += Math.exp((zs[base + c] ?? 0) - max);
      for (let c = 0; c < classes; c++) ps[base + c] = Math.exp((zs[base + c] ?? 0) - max) / sum;
      const label = labels.data[r] ?? 0;
      total -= (zs[base + label] ?? 0) - max - Math.log(sum);
    }
    out.loss.data[0] = total / batch;
  },
  {
    outputs: () => ({ loss: Undef('float32', [1]) }),
    checkpoints: (logits: F32) => ({ probs: Undef(logits) }),
  },
);

/**
 * The backward pass of {@link softmaxCrossEntropyInto}: `dlogits = (probs − onehot(labels)) / batch`.
 *
 * @example
 * ```ts
 * import { hostArray } from '@pol/core';
 * import { softmaxCrossEntropyBackward } from '@pol/verbs/examples';
 * const probs = hostArray(Float32Array.from([0.5, 0.5]), [1, 2]);
 * const { dlogits } = softmaxCrossEntropyBackward(probs, hostArray(Int32Array.from([1]))); // [0.5, -0.5]
 * ```
 *
 * @example
 * ```ts
 * import { hostArray } from '@pol/core';
 * import { softmaxCrossEntropyBackwardInto } from '@pol/verbs/examples';
 * const dlogits = hostArray(new Float32Array(2), [1, 2]);
 * softmaxCrossEntropyBackwardInto({ dlogits }, hostArray(Float32Array.from([0.5, 0.5]), [1, 2]), hostArray(Int32Array.from([1])));
 * console.log(dlogits.data); // Float32Array(2) [ 0.5, -0.5 ]
 * ```
 */
export const softmaxCrossEntropyBackwardInto = describe(
  function softmaxCrossEntropyBackwardInto(grads: { dlogits: F32 }, probs: F32, labels: I32): void {
    const batch = rowCount(probs);
    const classes = rowLength(probs);
    const ps = probs.data;
    const ds = grads.dlogits.data;
    for (let r = 0; r < batch; r++) {
      const label = labels.data[r] ?? 0;
      for (let c = 0; c < classes; c++) {
        const i = r * classes + c;
        ds[i] = ((ps[i] ?? 0) - (c === label ? 1 : 0)) / batch;
      }
    }
  },
  { outputs: (probs: F32) => ({ dlogits: Undef(probs) }) },
);

/**
 * The functional form of {@link linearInto}: `const { y } = linear(space, layer, x)`.
 *
 * @example
 * ```ts
 * import { hostArray } from '@pol/core';
 * import { linear } from '@pol/verbs/examples';
 * const layer = { w: hostArray(Float32Array.from([1, 2]), [1, 2]), b: hostArray(Float32Array.from([0, 1])) };
 * const { y } = linear(layer, hostArray(Float32Array.from([3]), [1, 1])); // [[3, 7]]
 * ```
 */
export const linear = Allocating(linearInto);
/**
 * The functional form of {@link linearBackwardInto}: `const { dx, dlayer } = linearBackward(space, layer, x, dy, { dlayer? })`.
 *
 * @example
 * ```ts
 * import { hostArray } from '@pol/core';
 * import { Shadows } from '@pol/verbs';
 * import { linearBackward } from '@pol/verbs/examples';
 * const layer = { w: hostArray(new Float32Array(2), [1, 2]), b: hostArray(new Float32Array(2)) };
 * const dlayer = Shadows(layer); // accumulate into your own shadows
 * linearBackward(layer, hostArray(Float32Array.from([3]), [1, 1]), hostArray(Float32Array.from([1, 1]), [1, 2]), { dlayer });
 * ```
 */
export const linearBackward = Allocating(linearBackwardInto);
/**
 * The functional form of {@link reluInto}: `const { y } = relu(space, x)`.
 *
 * @example
 * ```ts
 * import { hostArray } from '@pol/core';
 * import { relu } from '@pol/verbs/examples';
 * const { y } = relu(hostArray(Float32Array.from([-2, 3]))); // [0, 3]
 * ```
 */
export const relu = Allocating(reluInto);
/**
 * The functional form of {@link reluBackwardInto}: `const { dx } = reluBackward(space, x, dy)`.
 *
 * @example
 * ```ts
 * import { hostArray } from '@pol/core';
 * import { reluBackward } from '@pol/verbs/examples';
 * const { dx } = reluBackward(hostArray(Float32Array.from([1, -1])), hostArray(Float32Array.from([2, 2]))); // [2, 0]
 * ```
 */
export const reluBackward = Allocating(reluBackwardInto);
/**
 * The functional form of {@link softmaxCrossEntropyInto}: `const { loss, probs } = softmaxCrossEntropy(space, logits, labels)`: the loss output and the probs checkpoint.
 *
 * @example
 * ```ts
 * import { hostArray } from '@pol/core';
 * import { softmaxCrossEntropy } from '@pol/verbs/examples';
 * const { loss, probs } = softmaxCrossEntropy(hostArray(Float32Array.from([2, 0]), [1, 2]), hostArray(Int32Array.from([0])));
 * ```
 */
export const softmaxCrossEntropy = Allocating(softmaxCrossEntropyInto);
/**
 * The functional form of {@link softmaxCrossEntropyBackwardInto}: `const { dlogits } = softmaxCrossEntropyBackward(space, probs, labels)`.
 *
 * @example
 * ```ts
 * import { hostArray } from '@pol/core';
 * import { softmaxCrossEntropy, softmaxCrossEntropyBackward } from '@pol/verbs/examples';
 * const labels = hostArray(Int32Array.from([0]));
 * const { probs } = softmaxCrossEntropy(hostArray(Float32Array.from([2, 0]), [1, 2]), labels);
 * const { dlogits } = softmaxCrossEntropyBackward(probs, labels);
 * ```
 */
export const softmaxCrossEntropyBackward = Allocating(softmaxCrossEntropyBackwardInto);
