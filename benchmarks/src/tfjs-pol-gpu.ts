/**
 * Pol's side of the tfjs WebGPU sections: the node-webgpu example's kernels and training step
 * (imported through `gpu-perceptron.ts`), on a model placed from a `HostModel`, so that it runs the
 * larger model too. The kernels read their shapes from the bound ranges, so the example's step
 * trains any two-layer perceptron; the example's own `placeModel` makes only its 2 → 16 → 3 on
 * `blobs`, so the placement is written out here, as the example writes it: the parameters on an
 * arena of their own, the data, the gradients (the parameters' Shadows) and the loss on the step's
 * arena, each uploaded once.
 */
import { alloc, Undef } from '@pol/core';
import { shadowSpec, walkShadows } from '@pol/verbs';
import type { Mlp } from '@pol/verbs/examples';
import { download, upload } from '@pol/webgpu';
import { destroyArenas, type GpuKernels, type GpuModel, type ModelArenas, modelArenas, trainStep } from './gpu-perceptron.js';
import { type HostModel, modelBytes, parameterCount } from './tfjs-model.js';

/** The example's step on one model, on arenas of its own. */
export interface PolGpuTrainer {
  readonly arenas: ModelArenas;
  readonly model: GpuModel;
  /** One training step: encoded, submitted, not awaited. */
  readonly step: () => void;
  /** The loss of the last step, read back (`download`). */
  readonly readLoss: () => Promise<number>;
  /** Destroy the arenas' slabs. */
  readonly destroy: () => void;
}

/** Descriptions of arrays shaped like the parameters. */
function likeParams(p: Mlp) {
  return {
    layer1: { w: Undef(p.layer1.w), b: Undef(p.layer1.b) },
    layer2: { w: Undef(p.layer2.w), b: Undef(p.layer2.b) },
  };
}

/** Place `host` on new arenas of `device` and return the example's training step on it. */
export function polGpuTrainer(device: GPUDevice, kernels: GpuKernels, host: HostModel, label: string): PolGpuTrainer {
  const paramsBytes = parameterCount(host.spec) * 4 + 4 * 256;
  const arenas = modelArenas(device, { params: paramsBytes, arena: modelBytes(host.spec) }, { label });
  try {
    const params = alloc(arenas.params, likeParams(host.params));
    const rest = alloc(arenas.arena, {
      x: Undef(host.x),
      labels: Undef(host.labels),
      grads: shadowSpec(host.params),
      loss: Undef('float32', [1]),
    });
    upload(rest.x, host.x);
    upload(rest.labels, host.labels);
    walkShadows(host.params, params, (h, g) => upload(g, h));
    const model: GpuModel = { ...rest, params };
    const { arena } = arenas;
    return {
      arenas,
      model,
      // As gpu-perceptron.ts (and the example) call it.
      step: () => trainStep(arena, kernels, model.params, model.grads, model.x, model.labels, { loss: model.loss }),
      readLoss: async () => (await download(model.loss)).data[0] ?? Number.NaN,
      destroy: () => destroyArenas(arenas),
    };
  } catch (error) {
    destroyArenas(arenas);
    throw error;
  }
}
