/**
 * The perceptron's layers as Pol kernels: each takes its destinations first, encodes one dispatch
 * (two for the loss) into the open pass of its `GpuKernels`, and *describes* its destinations
 * beside itself (`describe`), so that `Allocating` makes it a functional verb, exactly as the CPU
 * kernels of `@pol/verbs/examples` are made. A verb carves its outputs from the space it is given,
 * or from the ambient one (inside the training step, the step's frame).
 *
 * @module
 */
import { describe, Undef } from '@pol/core';
import { Allocating, shadowSpec } from '@pol/verbs';
import type { GpuKernels } from './kernels.js';
import type { GpuF32, GpuI32, GpuLayer } from './types.js';

const rows = (x: { readonly dims: readonly number[] }) => x.dims[0] ?? 1;
const cols = (x: { readonly dims: readonly number[] }) => x.dims[x.dims.length - 1] ?? 1;

/**
 * A dense layer, into `out.y`: `y = x · w + b`, for `x` of dims `[batch, inputs]`. The layer's
 * weights and biases are bound `read`, so they must lie on another buffer than `x` and `y` (the
 * parameters' arena): WebGPU refuses one buffer bound both ways in a dispatch.
 *
 * @example
 * ```ts
 * import { alloc, Undef } from '@pol/core';
 * import { deviceArena, download, upload } from '@pol/webgpu';
 * import { GpuKernels, linear, linearInto } from '@pol/webgpu/examples';
 *
 * const kernels = new GpuKernels(device, { lr: 0.1 });
 * const params = deviceArena(device, 1 << 12, { label: 'parameters' });
 * const arena = deviceArena(device, 1 << 12, { label: 'activations' });
 * const layer = alloc(params, { w: Undef('float32', [2, 2]), b: Undef('float32', [2]) });
 * upload(layer.w, Float32Array.of(1, 0, 0, 1));
 * upload(layer.b, Float32Array.of(1, 1));
 * const x = alloc(arena, 'float32', [1, 2]);
 * upload(x, Float32Array.of(2, 3));
 * const y = alloc(arena, 'float32', [1, 2]);
 *
 * const encoder = device.createCommandEncoder();
 * const pass = encoder.beginComputePass();
 * kernels.pass = pass;
 * linearInto({ y }, kernels, layer, x); // the kernel: into the buffer you hand it
 * const carved = linear(arena, kernels, layer, x).y; // the verb: y carved from the arena
 * pass.end();
 * kernels.pass = undefined;
 * device.queue.submit([encoder.finish()]);
 * console.log((await download(y)).data, carved.dims); // Float32Array(2) [ 3, 4 ] [ 1, 2 ]
 * params.slab.destroy();
 * arena.slab.destroy();
 * ```
 */
export const linearInto = describe(
  function linearInto(out: { y: GpuF32 }, k: GpuKernels, layer: GpuLayer, x: GpuF32): void {
    k.dispatch('linear', out.y.length, x, layer.w, layer.b, out.y);
  },
  { outputs: (_k: GpuKernels, layer: GpuLayer, x: GpuF32) => ({ y: Undef('float32', [rows(x), cols(layer.b)]) }) },
);

/**
 * The rectifier, into `out.y`: `y = max(x, 0)`.
 *
 * @example
 * ```ts
 * import { alloc } from '@pol/core';
 * import { deviceArena, download, upload } from '@pol/webgpu';
 * import { GpuKernels, relu, reluInto } from '@pol/webgpu/examples';
 *
 * const kernels = new GpuKernels(device, { lr: 0.1 });
 * const arena = deviceArena(device, 1 << 12);
 * const x = alloc(arena, 'float32', [4]);
 * upload(x, Float32Array.of(-1, 2, -3, 4));
 * const y = alloc(arena, 'float32', [4]);
 *
 * const encoder = device.createCommandEncoder();
 * const pass = encoder.beginComputePass();
 * kernels.pass = pass;
 * reluInto({ y }, kernels, x);
 * const again = relu(arena, kernels, x).y; // the verb carves y like x
 * pass.end();
 * kernels.pass = undefined;
 * device.queue.submit([encoder.finish()]);
 * console.log((await download(y)).data, (await download(again)).data); // Float32Array(4) [ 0, 2, 0, 4 ] Float32Array(4) [ 0, 2, 0, 4 ]
 * arena.slab.destroy();
 * ```
 */
export const reluInto = describe(
  function reluInto(out: { y: GpuF32 }, k: GpuKernels, x: GpuF32): void {
    k.dispatch('relu', x.length, x, out.y);
  },
  { outputs: (_k: GpuKernels, x: GpuF32) => ({ y: Undef(x) }) },
);

/**
 * Softmax cross-entropy, into `out.loss` (the batch mean of `−log softmax(logits)[label]`),
 * saving `probs` as a checkpoint for the backward pass; the per-row losses are scratch, carved in
 * the verb's own frame and released when it returns.
 *
 * @example
 * ```ts
 * import { alloc } from '@pol/core';
 * import { deviceArena, download, upload } from '@pol/webgpu';
 * import { GpuKernels, softmaxCrossEntropy, softmaxCrossEntropyInto } from '@pol/webgpu/examples';
 *
 * const kernels = new GpuKernels(device, { lr: 0.1 });
 * const arena = deviceArena(device, 1 << 12);
 * const logits = alloc(arena, 'float32', [2, 3]);
 * upload(logits, Float32Array.of(0, 0, 0, 1, 2, 3));
 * const labels = alloc(arena, 'int32', [2]);
 * upload(labels, Int32Array.of(0, 2));
 * const loss = alloc(arena, 'float32', [1]);
 *
 * const encoder = device.createCommandEncoder();
 * const pass = encoder.beginComputePass();
 * kernels.pass = pass;
 * // The kernel takes its scratch and checkpoint too; the verb carves them itself.
 * const scratch = { probs: alloc(arena, 'float32', [2, 3]), rowLoss: alloc(arena, 'float32', [2]) };
 * softmaxCrossEntropyInto({ loss }, kernels, logits, labels, scratch);
 * const { probs } = softmaxCrossEntropy(arena, kernels, logits, labels);
 * pass.end();
 * kernels.pass = undefined;
 * device.queue.submit([encoder.finish()]);
 * console.log((await download(loss)).data[0]?.toFixed(4), (await download(probs)).data[0]?.toFixed(4)); // '0.7531' '0.3333'
 * arena.slab.destroy();
 * ```
 */
export const softmaxCrossEntropyInto = describe(
  function softmaxCrossEntropyInto(
    out: { loss: GpuF32 },
    k: GpuKernels,
    logits: GpuF32,
    labels: GpuI32,
    options: { probs: GpuF32; rowLoss: GpuF32 },
  ): void {
    k.dispatch('softmaxCrossEntropy', rows(logits), logits, labels, options.probs, options.rowLoss);
    k.dispatch('mean', 1, options.rowLoss, out.loss);
  },
  {
    outputs: () => ({ loss: Undef('float32', [1]) }),
    checkpoints: (_k: GpuKernels, logits: GpuF32) => ({ probs: Undef(logits) }),
    scratch: (_k: GpuKernels, logits: GpuF32) => ({ rowLoss: Undef('float32', [rows(logits)]) }),
  },
);

/**
 * The backward pass of softmax cross-entropy: `dlogits = (probs − onehot(labels)) / batch`.
 *
 * @example
 * ```ts
 * import { alloc } from '@pol/core';
 * import { deviceArena, download, upload } from '@pol/webgpu';
 * import { GpuKernels, softmaxCrossEntropyBackward, softmaxCrossEntropyBackwardInto } from '@pol/webgpu/examples';
 *
 * const kernels = new GpuKernels(device, { lr: 0.1 });
 * const arena = deviceArena(device, 1 << 12);
 * const probs = alloc(arena, 'float32', [1, 2]);
 * upload(probs, Float32Array.of(0.25, 0.75));
 * const labels = alloc(arena, 'int32', [1]);
 * upload(labels, Int32Array.of(1));
 * const dlogits = alloc(arena, 'float32', [1, 2]);
 *
 * const encoder = device.createCommandEncoder();
 * const pass = encoder.beginComputePass();
 * kernels.pass = pass;
 * softmaxCrossEntropyBackwardInto({ dlogits }, kernels, probs, labels);
 * const carved = softmaxCrossEntropyBackward(arena, kernels, probs, labels).dlogits;
 * pass.end();
 * kernels.pass = undefined;
 * device.queue.submit([encoder.finish()]);
 * console.log((await download(dlogits)).data, (await download(carved)).data); // Float32Array(2) [ 0.25, -0.25 ] Float32Array(2) [ 0.25, -0.25 ]
 * arena.slab.destroy();
 * ```
 */
export const softmaxCrossEntropyBackwardInto = describe(
  function softmaxCrossEntropyBackwardInto(grads: { dlogits: GpuF32 }, k: GpuKernels, probs: GpuF32, labels: GpuI32): void {
    k.dispatch('softmaxCrossEntropyBackward', probs.length, probs, labels, grads.dlogits);
  },
  { outputs: (_k: GpuKernels, probs: GpuF32) => ({ dlogits: Undef(probs) }) },
);

/**
 * The backward pass of a dense layer: `dx = dy · wᵀ`, and the layer's gradients `dlayer`, which
 * this kernel adds into (`dw += xᵀ · dy`, `db += Σ dy`): pass the model's gradients, its
 * `Shadows`, under `dlayer`, zeroed. `w` is bound `read`, so the layer lies on another buffer.
 *
 * @example
 * ```ts
 * import { alloc, Undef } from '@pol/core';
 * import { shadowSpec } from '@pol/verbs';
 * import { deviceArena, download, upload } from '@pol/webgpu';
 * import { GpuKernels, linearBackward, linearBackwardInto } from '@pol/webgpu/examples';
 *
 * const kernels = new GpuKernels(device, { lr: 0.1 });
 * const params = deviceArena(device, 1 << 12, { label: 'parameters' });
 * const arena = deviceArena(device, 1 << 12, { label: 'gradients' });
 * const layer = alloc(params, { w: Undef('float32', [1, 2]), b: Undef('float32', [2]) });
 * upload(layer.w, Float32Array.of(1, 2));
 * const x = alloc(arena, 'float32', [1, 1]);
 * upload(x, Float32Array.of(3));
 * const dy = alloc(arena, 'float32', [1, 2]);
 * upload(dy, Float32Array.of(1, 1));
 * const dx = alloc(arena, 'float32', [1, 1]);
 * const dlayer = alloc(arena, shadowSpec(layer)); // zeroed: the kernel adds into it
 *
 * const encoder = device.createCommandEncoder();
 * const pass = encoder.beginComputePass();
 * kernels.pass = pass;
 * linearBackwardInto({ dx, dlayer }, kernels, layer, x, dy);
 * const fresh = linearBackward(arena, kernels, layer, x, dy).dlayer; // the verb zeroes what it carves
 * pass.end();
 * kernels.pass = undefined;
 * device.queue.submit([encoder.finish()]);
 * console.log((await download(dx)).data, (await download(dlayer.w)).data); // Float32Array(1) [ 3 ] Float32Array(2) [ 3, 3 ]
 * console.log((await download(fresh.b)).data); // Float32Array(2) [ 1, 1 ]
 * params.slab.destroy();
 * arena.slab.destroy();
 * ```
 */
export const linearBackwardInto = describe(
  function linearBackwardInto(
    grads: { dx: GpuF32; dlayer: GpuLayer },
    k: GpuKernels,
    layer: GpuLayer,
    x: GpuF32,
    dy: GpuF32,
  ): void {
    const { dx, dlayer } = grads;
    k.dispatch('linearBackward', dlayer.w.length + dlayer.b.length + dx.length, layer.w, x, dy, dx, dlayer.w, dlayer.b);
  },
  {
    // `dlayer` is described zeroed, as the CPU kernel's is: the kernel adds into it, so a carved
    // one must start at zero (one passed in, the model's Shadows, is used as it is).
    outputs: (_k: GpuKernels, layer: GpuLayer, x: GpuF32) => ({ dx: Undef(x), dlayer: shadowSpec(layer) }),
  },
);

/**
 * The backward pass of the rectifier: `dx = dy` where `x > 0`, else 0.
 *
 * @example
 * ```ts
 * import { alloc } from '@pol/core';
 * import { deviceArena, download, upload } from '@pol/webgpu';
 * import { GpuKernels, reluBackward, reluBackwardInto } from '@pol/webgpu/examples';
 *
 * const kernels = new GpuKernels(device, { lr: 0.1 });
 * const arena = deviceArena(device, 1 << 12);
 * const x = alloc(arena, 'float32', [3]);
 * upload(x, Float32Array.of(-1, 2, 3));
 * const dy = alloc(arena, 'float32', [3]);
 * upload(dy, Float32Array.of(5, 6, 7));
 * const dx = alloc(arena, 'float32', [3]);
 *
 * const encoder = device.createCommandEncoder();
 * const pass = encoder.beginComputePass();
 * kernels.pass = pass;
 * reluBackwardInto({ dx }, kernels, x, dy);
 * const carved = reluBackward(arena, kernels, x, dy).dx;
 * pass.end();
 * kernels.pass = undefined;
 * device.queue.submit([encoder.finish()]);
 * console.log((await download(dx)).data, (await download(carved)).data); // Float32Array(3) [ 0, 6, 7 ] Float32Array(3) [ 0, 6, 7 ]
 * arena.slab.destroy();
 * ```
 */
export const reluBackwardInto = describe(
  function reluBackwardInto(grads: { dx: GpuF32 }, k: GpuKernels, x: GpuF32, dy: GpuF32): void {
    k.dispatch('reluBackward', x.length, x, dy, grads.dx);
  },
  { outputs: (_k: GpuKernels, x: GpuF32) => ({ dx: Undef(x) }) },
);

/** {@link linearInto} as a verb: `linear(space?, kernels, layer, x).y`, carved from the space. */
export const linear = Allocating(linearInto);
/** {@link reluInto} as a verb: `relu(space?, kernels, x).y`. */
export const relu = Allocating(reluInto);
/** {@link softmaxCrossEntropyInto} as a verb: `{ loss, probs }`; the per-row losses are its scratch. */
export const softmaxCrossEntropy = Allocating(softmaxCrossEntropyInto);
/** {@link softmaxCrossEntropyBackwardInto} as a verb: `{ dlogits }`. */
export const softmaxCrossEntropyBackward = Allocating(softmaxCrossEntropyBackwardInto);
/** {@link linearBackwardInto} as a verb: `{ dx, dlayer }`, `dlayer` zeroed unless you pass your own. */
export const linearBackward = Allocating(linearBackwardInto);
/** {@link reluBackwardInto} as a verb: `{ dx }`. */
export const reluBackward = Allocating(reluBackwardInto);
