/**
 * The models of the tfjs sections, and their data and initial weights, made on the host from a
 * seed, so that Pol (on the host and on WebGPU) and TensorFlow.js start every run from the very
 * same numbers and do the same work: a two-layer perceptron (dense, ReLU, dense, softmax
 * cross-entropy, plain SGD) at two sizes.
 *
 * - the perceptron the examples train: 2 → 16 → 3 on 90 points of `blobs`, made exactly as
 *   `@pol/verbs/examples`' `train` and the node-webgpu example's `placeModel` make them (one
 *   generator from seed 1: the data first, then `initMlp`), learning rate 0.1;
 * - a larger one, so that the comparison is not only overhead: 784 → 128 → 10 at a batch of 64,
 *   shaped like MNIST, on `prototypes` (below) from its own seed: no download.
 */
import { alloc, type HostArray, type Space, Undef } from '@pol/core';
import { blobs, initMlp, type Mlp, normal, seededRandom } from '@pol/verbs/examples';

type F32 = HostArray<'float32'>;
type I32 = HostArray<'int32'>;

/** A perceptron's shape, its data and its training settings. */
export interface ModelSpec {
  /** The measurement ids' part: `mlp`, `large`. */
  readonly id: string;
  /** For a section title: what the model is and where its data come from. */
  readonly title: string;
  readonly inputs: number;
  readonly hidden: number;
  readonly classes: number;
  readonly batch: number;
  /** Where the data come from: the examples' `blobs`, or `prototypes`. */
  readonly data: 'blobs' | 'prototypes';
  readonly seed: number;
  readonly lr: number;
  /** Steps of the run whose losses are recorded and compared: in a full run, and in quick mode. */
  readonly curveSteps: { readonly full: number; readonly quick: number };
}

/** The perceptron the examples train. */
export const perceptronSpec: ModelSpec = {
  id: 'mlp',
  title: 'the perceptron (2 → 16 → 3, batch 90, the examples’ data and weights)',
  inputs: 2,
  hidden: 16,
  classes: 3,
  batch: 90,
  data: 'blobs',
  seed: 1,
  lr: 0.1,
  curveSteps: { full: 50, quick: 20 },
};

/** The larger model: the shapes of an MNIST perceptron, on seeded data. */
export const largeSpec: ModelSpec = {
  id: 'large',
  title: '784 → 128 → 10 (batch 64, seeded prototype data)',
  inputs: 784,
  hidden: 128,
  classes: 10,
  batch: 64,
  data: 'prototypes',
  seed: 2,
  lr: 0.02,
  curveSteps: { full: 10, quick: 3 },
};

/** Both models, in the order the sections run them. */
export const tfjsModels: readonly ModelSpec[] = [perceptronSpec, largeSpec];

/** A model on the host: its data and its initial parameters. */
export interface HostModel {
  readonly spec: ModelSpec;
  /** `[batch, inputs]`. */
  readonly x: F32;
  /** `[batch]`, class indices. */
  readonly labels: I32;
  readonly params: Mlp;
}

/**
 * A classification task shaped like MNIST's, made from a seeded generator: a prototype per class
 * (normal features of standard deviation 0.1), and each point its class's prototype plus standard
 * normal noise; the classes take turns (point i is of class i mod classes). Feature by feature
 * the classes overlap (the noise is ten times the prototypes' spread), so that at the model's
 * learning rate the loss falls over tens of steps rather than in one.
 */
function prototypes(space: Space<'host'>, random: () => number, spec: ModelSpec): { readonly x: F32; readonly labels: I32 } {
  const { batch, inputs, classes } = spec;
  const { x, labels } = alloc(space, { x: Undef('float32', [batch, inputs]), labels: Undef('int32', [batch]) });
  const centres = Float32Array.from({ length: classes * inputs }, () => 0.1 * normal(random));
  for (let i = 0; i < batch; i++) {
    const label = i % classes;
    labels.data[i] = label;
    for (let j = 0; j < inputs; j++) x.data[i * inputs + j] = (centres[label * inputs + j] ?? 0) + normal(random);
  }
  return { x, labels };
}

/** The model's data and initial parameters, carved from `space` (data first, then `initMlp`, from one generator). */
export function hostModel(space: Space<'host'>, spec: ModelSpec): HostModel {
  const random = seededRandom(spec.seed);
  const data =
    spec.data === 'blobs' ? blobs(space, random, spec.batch / spec.classes, spec.classes) : prototypes(space, random, spec);
  const params = initMlp(space, random, spec.inputs, spec.hidden, spec.classes);
  return { spec, ...data, params };
}

/** The model's parameters, in floats. */
export function parameterCount(spec: ModelSpec): number {
  return (spec.inputs + 1) * spec.hidden + (spec.hidden + 1) * spec.classes;
}

/**
 * Bytes that a model and one step need on a space that carves everything (the data, the
 * parameters, their gradients, the loss, and a step's activations and intermediate gradients),
 * with room for every carve's alignment: what the tfjs sections size their arenas by.
 */
export function modelBytes(spec: ModelSpec): number {
  const { batch, inputs, hidden, classes } = spec;
  const floats = 2 * parameterCount(spec) + batch * (2 * inputs + 1 + 4 * hidden + 4 * classes + 1) + 1;
  return 2 * floats * 4 + 64 * 256;
}
