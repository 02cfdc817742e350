/**
 * `@pol/verbs/examples`: real kernels written to Pol's convention and made functional with
 * `Allocating`: the quick start's softmax, RMS norm forward and backward (a checkpoint and
 * shadows), and a two-layer perceptron trained with SGD through `Shadows`. Host arrays,
 * row-major, float32.
 *
 * @packageDocumentation
 * @module @pol/verbs/examples
 */

export {
  type Layer,
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
export { blobs, initMlp, type Mlp, train, trainStep, trainStepInto } from './mlp.js';
export { normal, seededRandom } from './random.js';
export { rmsNorm, rmsNormBackward, rmsNormBackwardInto, rmsNormInto } from './rmsnorm.js';
export { softmax, softmaxInto } from './softmax.js';
export { type F32, type I32, rowCount, rowLength, rowsOf } from './types.js';
