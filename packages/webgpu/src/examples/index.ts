/**
 * `@pol/webgpu/examples`: the two-layer perceptron of `@pol/verbs/examples` trained on WebGPU,
 * with the same data, initial weights and SGD step, written as WGSL kernels. Each kernel is a Pol
 * kernel made a verb with `Allocating`; the parameters live on an arena of their own, which the
 * layers bind `read`; the gradients are the parameters' `Shadows`; and `trainOnGpu` sizes its
 * slabs from one eager step's watermarks, captures the first step and replays it. Hand it a
 * `GPUDevice` from Dawn's Node.js bindings or from a browser's `navigator.gpu`. It uses
 * `@pol/verbs` (a dependency of this package) for its verbs and its host-side data.
 *
 * @packageDocumentation
 * @module @pol/webgpu/examples
 */

export { type DispatchRecord, GpuKernels } from './kernels.js';
export {
  linear,
  linearBackward,
  linearBackwardInto,
  linearInto,
  relu,
  reluBackward,
  reluBackwardInto,
  reluInto,
  softmaxCrossEntropy,
  softmaxCrossEntropyBackward,
  softmaxCrossEntropyBackwardInto,
  softmaxCrossEntropyInto,
} from './layers.js';
export { destroyArenas, type GpuModel, type ModelArenas, modelArenas, placeModel } from './model.js';
export { type CapturedRun, type TrainOptions, type TrainResult, trainOnGpu } from './train.js';
export { trainStep, trainStepInto } from './train-step.js';
export type { GpuF32, GpuI32, GpuLayer, GpuMlp } from './types.js';
export { type BindingAccess, type KernelName, type KernelSource, kernelSources, wgslOf } from './wgsl.js';
