/**
 * The perceptron's training step in TensorFlow.js, written the way its documentation writes one:
 * the parameters as `tf.variable`s, the model as a function of the input, the loss as a closure
 * that `optimizer.minimize` runs (inside a `tidy` of its own, which disposes every intermediate
 * tensor), `tf.losses.softmaxCrossEntropy` on one-hot labels and `tf.train.sgd`. Nothing is tuned:
 * no flag is set, and every op is TensorFlow.js's own.
 *
 * The same model as Pol's step: `relu(x · w1 + b1) · w2 + b2`, the softmax cross-entropy averaged
 * over the batch, then `p ← p − lr · ∂loss/∂p` for every parameter, from the same initial values
 * (copied from a `HostModel`).
 */
import type { Scalar, Tensor, Variable } from '@tensorflow/tfjs';
import type { Tf } from './tfjs-backend.js';
import type { HostModel } from './tfjs-model.js';

/** A TensorFlow.js training loop on one model, on the backend set when it was made. */
export interface TfTrainer {
  /** One step, as the documentation writes it: `optimizer.minimize(loss)` (the cost not returned). */
  readonly step: () => void;
  /** One step, its cost returned, read synchronously (`dataSync`, the CPU's way) and disposed. */
  readonly stepReadSync: () => number;
  /** One step, its cost returned, read back (`await cost.data()`) and disposed: a step end to end. */
  readonly stepRead: () => Promise<number>;
  /** The kernels that one step runs, as `tf.profile` lists them (that step trains, too). */
  readonly profileKernels: () => Promise<number>;
  /** Dispose the variables, the data and the optimizer (its learning-rate scalar). */
  readonly dispose: () => void;
}

/** The model's variables, its data, and its SGD loop, in TensorFlow.js on the current backend. */
export function tfTrainer(tf: Tf, model: HostModel): TfTrainer {
  const { spec, params } = model;
  // Copies: on the CPU a tensor made from a typed array keeps that very array.
  const tensorOf = (a: { readonly data: Float32Array; readonly dims: readonly number[] }) =>
    tf.tensor(Float32Array.from(a.data), [...a.dims]);
  const variable = (a: { readonly data: Float32Array; readonly dims: readonly number[] }): Variable =>
    tf.tidy(() => tf.variable(tensorOf(a)));
  const w1 = variable(params.layer1.w);
  const b1 = variable(params.layer1.b);
  const w2 = variable(params.layer2.w);
  const b2 = variable(params.layer2.b);
  const x = tensorOf(model.x);
  const labels = tf.tidy(() => tf.oneHot(tf.tensor1d(Int32Array.from(model.labels.data), 'int32'), spec.classes));
  const optimizer = tf.train.sgd(spec.lr);

  const predict = (input: Tensor): Tensor => tf.add(tf.matMul(tf.relu(tf.add(tf.matMul(input, w1), b1)), w2), b2);
  const loss = (): Scalar => tf.losses.softmaxCrossEntropy(labels, predict(x)) as Scalar;

  return {
    step: () => {
      optimizer.minimize(loss);
    },
    stepReadSync: () => {
      const cost = optimizer.minimize(loss, true) as Scalar;
      const value = cost.dataSync()[0] ?? Number.NaN;
      cost.dispose();
      return value;
    },
    stepRead: async () => {
      const cost = optimizer.minimize(loss, true) as Scalar;
      const value = (await cost.data())[0] ?? Number.NaN;
      cost.dispose();
      return value;
    },
    profileKernels: async () => {
      const info = await tf.profile(() => {
        optimizer.minimize(loss);
      });
      return info.kernels.length;
    },
    dispose: () => {
      tf.dispose([w1, b1, w2, b2, x, labels]);
      optimizer.dispose();
    },
  };
}
