import { describe, Undef } from '@pol/core';
import { Allocating, walkShadows, zeroShadows } from '@pol/verbs';
import type { GpuKernels } from './kernels.js';
import { linear, linearBackward, relu, reluBackward, softmaxCrossEntropy, softmaxCrossEntropyBackward } from './layers.js';
import type { GpuF32, GpuI32, GpuMlp } from './types.js';

/**
 * One SGD step of the perceptron, into `out.loss` (the loss before the update): zero `grads`
 * (`zeroShadows`), forward, backward into `grads`, then `p −= lr · g` for every parameter, as one
 * compute pass and one submit. The verbs inside take their outputs from the ambient space, which
 * the step's own verb binds to its frame: every activation and intermediate gradient is a carve
 * in that frame. `params` must lie on another buffer than the rest (the layers bind them `read`).
 *
 * @example
 * ```ts
 * import { scratchspace } from '@pol/core';
 * import { download } from '@pol/webgpu';
 * import { destroyArenas, GpuKernels, modelArenas, placeModel, trainStepInto } from '@pol/webgpu/examples';
 *
 * const kernels = new GpuKernels(device, { lr: 0.1 });
 * const arenas = modelArenas(device, { params: 1 << 12, arena: 1 << 16 }, { label: 'step' });
 * const m = placeModel(arenas, { seed: 1, hidden: 16 });
 * // The kernel in a frame of your own, from which its verbs carve: what the verb trainStep does for you.
 * scratchspace(arenas.arena, () => trainStepInto({ loss: m.loss }, kernels, m.params, m.grads, m.x, m.labels));
 * console.log((await download(m.loss)).data[0]?.toFixed(4)); // '1.4116'
 * destroyArenas(arenas);
 * ```
 */
export const trainStepInto = describe(
  function trainStepInto(out: { loss: GpuF32 }, k: GpuKernels, params: GpuMlp, grads: GpuMlp, x: GpuF32, labels: GpuI32): void {
    zeroShadows(grads);
    // No descriptor: on Dawn a labelled encoder cost the eager step several microseconds, up to a
    // tenth of it (measured over SwiftShader); the captured graph has a label ('train step').
    const encoder = k.device.createCommandEncoder();
    k.pass = encoder.beginComputePass();
    try {
      const h = linear(k, params.layer1, x).y;
      const a = relu(k, h).y;
      const logits = linear(k, params.layer2, a).y;
      const { probs } = softmaxCrossEntropy(k, logits, labels, { loss: out.loss });
      const { dlogits } = softmaxCrossEntropyBackward(k, probs, labels);
      const da = linearBackward(k, params.layer2, a, dlogits, { dlayer: grads.layer2 }).dx;
      const dh = reluBackward(k, h, da).dx;
      linearBackward(k, params.layer1, x, dh, { dlayer: grads.layer1 });
      walkShadows(params, grads, (p, g) => k.dispatch('sgd', p.length, p, g));
    } finally {
      k.pass.end();
      k.pass = undefined;
    }
    k.device.queue.submit([encoder.finish()]);
  },
  { outputs: () => ({ loss: Undef('float32', [1]) }) },
);

/**
 * {@link trainStepInto} as a verb: `trainStep(arena, kernels, params, grads, x, labels).loss`. On
 * an arena it opens a frame for the step's activations, so a steady loop carves the same bytes
 * every step (and a captured step replays them).
 *
 * @example
 * ```ts
 * import { watermark } from '@pol/arena';
 * import { download } from '@pol/webgpu';
 * import { GpuKernels, destroyArenas, modelArenas, placeModel, trainStep } from '@pol/webgpu/examples';
 *
 * const kernels = new GpuKernels(device, { lr: 0.1 });
 * const arenas = modelArenas(device, { params: 1 << 12, arena: 1 << 16 }, { label: 'training' });
 * const m = placeModel(arenas, { seed: 1, hidden: 16 });
 * const losses: string[] = [];
 * for (let step = 0; step < 3; step++) {
 *   trainStep(arenas.arena, kernels, m.params, m.grads, m.x, m.labels, { loss: m.loss });
 *   losses.push((await download(m.loss)).data[0]?.toFixed(4) ?? '');
 * }
 * console.log(losses, watermark(arenas.arena)); // [ '1.4116', '1.0164', ... ] 30672
 * destroyArenas(arenas);
 * ```
 */
export const trainStep = Allocating(trainStepInto);
