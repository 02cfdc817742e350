import { alloc, describe, type Space, scratchspace, Undef } from '@pol/core';
import { Allocating } from '../allocating.js';
import { Shadows, walkShadows, zeroShadows } from '../shadows.js';
import {
  type Layer,
  linear,
  linearBackward,
  relu,
  reluBackward,
  softmaxCrossEntropy,
  softmaxCrossEntropyBackward,
} from './layers.js';
import { normal, seededRandom } from './random.js';
import type { F32, I32 } from './types.js';

/**
 * A two-layer perceptron's parameters.
 *
 * @example
 * ```ts
 * import { Similar } from '@pol/core';
 * import { initMlp, seededRandom, type Mlp } from '@pol/verbs/examples';
 * const params: Mlp = initMlp(Similar(new Float32Array(0)), seededRandom(1), 2, 4, 3);
 * ```
 */
export interface Mlp {
  layer1: Layer;
  layer2: Layer;
}

// One SGD update over parameters and their gradients. The per-pair function is made once, not per
// step (a closure over `lr` would be a step's garbage); it reads the rate from `rate[0]`, which the
// step sets just before the synchronous walk. A typed cell, written where the step reads the
// option: a number stored into a mutable variable, or passed to a call the JIT did not inline, is
// boxed anew each time (16 B a step).
const rate = new Float64Array(1);
function sgdPair(p: F32, g: F32): void {
  const ps = p.data;
  const gs = g.data;
  const lr = rate[0] ?? 0;
  for (let i = 0; i < ps.length; i++) ps[i] = (ps[i] ?? 0) - lr * (gs[i] ?? 0);
}

// The options objects the step hands its inner verbs, each made once per buffer it carries and
// then reused: a literal `{ dlayer: grads.layer2 }` in the step would be a new object on every step
// (about 32 B each), the only garbage of a steady step on an arena. They are keyed weakly by the
// buffer (so they keep nothing alive) and never written after they are made, so a verb or a nested
// step that keeps one never sees it change. On an arena in steady state the step's `out.loss` and
// the caller's shadows are the same objects every step, so these are found, not made.
const lossOptions = new WeakMap<F32, { readonly loss: F32 }>();
const dlayerOptions = new WeakMap<Layer, { readonly dlayer: Layer }>();
const makeLoss = (loss: F32) => ({ loss });
const makeDlayer = (dlayer: Layer) => ({ dlayer });
function optionsFor<V extends object, O>(made: WeakMap<V, O>, value: V, make: (value: V) => O): O {
  let options = made.get(value);
  if (options === undefined) {
    options = make(value);
    made.set(value, options);
  }
  return options;
}

/**
 * One training step of a two-layer perceptron, into `out.loss` (the batch's loss before the
 * update): forward (dense, ReLU, dense, softmax cross-entropy), backward into the shadows
 * `grads` (zeroed first), then plain SGD through `walkShadows`. Every verb inside runs against the
 * ambient space, which the step's own verb binds to its frame: every activation and intermediate
 * gradient is scratch of the step and dies with it, and the loss goes straight into the step's
 * output (passed as the inner verb's own buffer). On an arena in steady state a step makes no
 * JavaScript object either: the options objects it hands its inner verbs are made once per buffer
 * and reused.
 *
 * @example
 * ```ts
 * import { Similar } from '@pol/core';
 * import { Shadows } from '@pol/verbs';
 * import { blobs, initMlp, seededRandom, trainStep } from '@pol/verbs/examples';
 * const random = seededRandom(7);
 * const space = Similar(new Float32Array(0));
 * const { x, labels } = blobs(space, random, 30, 3);
 * const params = initMlp(space, random, 2, 16, 3);
 * const grads = Shadows(space, params);
 * const { loss } = trainStep(space, params, grads, x, labels, { lr: 0.5 });
 * ```
 *
 * @example
 * ```ts
 * import { hostArray, scratchspace, Similar } from '@pol/core';
 * import { Shadows } from '@pol/verbs';
 * import { blobs, initMlp, seededRandom, trainStepInto } from '@pol/verbs/examples';
 * const random = seededRandom(7);
 * const space = Similar(new Float32Array(0));
 * const { x, labels } = blobs(space, random, 10, 3);
 * const params = initMlp(space, random, 2, 8, 3);
 * const loss = hostArray(new Float32Array(1));
 * // Called directly, the kernel's inner verbs need an ambient space for their buffers: a frame.
 * scratchspace(space, () => trainStepInto({ loss }, params, Shadows(space, params), x, labels, { lr: 0.5 }));
 * console.log(loss.data[0] !== undefined && loss.data[0] > 0); // true
 * ```
 */
export const trainStepInto = describe(
  function trainStepInto(out: { loss: F32 }, params: Mlp, grads: Mlp, x: F32, labels: I32, options: { lr: number }): void {
    // Forward.
    const h = linear(params.layer1, x).y;
    const a = relu(h).y;
    const logits = linear(params.layer2, a).y;
    const { probs } = softmaxCrossEntropy(logits, labels, optionsFor(lossOptions, out.loss, makeLoss));
    // Backward, accumulating into the caller's shadows.
    zeroShadows(grads);
    const { dlogits } = softmaxCrossEntropyBackward(probs, labels);
    const da = linearBackward(params.layer2, a, dlogits, optionsFor(dlayerOptions, grads.layer2, makeDlayer)).dx;
    const dh = reluBackward(h, da).dx;
    linearBackward(params.layer1, x, dh, optionsFor(dlayerOptions, grads.layer1, makeDlayer));
    // SGD through the shadows.
    rate[0] = options.lr;
    walkShadows(params, grads, sgdPair);
  },
  { outputs: () => ({ loss: Undef('float32', [1]) }) },
);

/**
 * The functional form of {@link trainStepInto}: `const { loss } = trainStep(space, params, grads, x, labels, { lr })`: one SGD step; the loss output comes from `space`.
 *
 * @example
 * ```ts
 * import { Similar } from '@pol/core';
 * import { Shadows } from '@pol/verbs';
 * import { blobs, initMlp, seededRandom, trainStep } from '@pol/verbs/examples';
 * const random = seededRandom(2);
 * const space = Similar(new Float32Array(0));
 * const { x, labels } = blobs(space, random, 10, 3);
 * const params = initMlp(space, random, 2, 8, 3);
 * const { loss } = trainStep(space, params, Shadows(space, params), x, labels, { lr: 0.5 });
 * ```
 */
export const trainStep = Allocating(trainStepInto);

/**
 * Parameters for a two-layer perceptron `inputs → hidden → classes`, allocated from `space` and
 * initialized from `random` (scaled normal weights, zero biases).
 *
 * @example
 * ```ts
 * import { Similar } from '@pol/core';
 * import { initMlp, seededRandom } from '@pol/verbs/examples';
 * const params = initMlp(Similar(new Float32Array(0)), seededRandom(1), 2, 8, 3);
 * ```
 */
export function initMlp(space: Space<'host'>, random: () => number, inputs: number, hidden: number, classes: number): Mlp {
  const params = alloc(space, {
    layer1: { w: Undef('float32', [inputs, hidden]), b: Undef('float32', [hidden]) },
    layer2: { w: Undef('float32', [hidden, classes]), b: Undef('float32', [classes]) },
  });
  const init = (layer: Layer, fanIn: number): void => {
    const scale = Math.sqrt(2 / fanIn);
    for (let i = 0; i < layer.w.data.length; i++) layer.w.data[i] = normal(random) * scale;
    layer.b.data.fill(0);
  };
  init(params.layer1, inputs);
  init(params.layer2, hidden);
  return params;
}

/**
 * A synthetic classification task: `perClass` points around each of `classes` centres on a circle of radius
 * 1.5 in the plane, with Gaussian noise of standard deviation 0.7. `x` is `[perClass · classes, 2]`, `labels` is int32.
 *
 * @example
 * ```ts
 * import { Similar } from '@pol/core';
 * import { blobs, seededRandom } from '@pol/verbs/examples';
 * const { x, labels } = blobs(Similar(new Float32Array(0)), seededRandom(3), 20, 3);
 * ```
 */
export function blobs(
  space: Space<'host'>,
  random: () => number,
  perClass: number,
  classes: number,
): { readonly x: F32; readonly labels: I32 } {
  const n = perClass * classes;
  const { x, labels } = alloc(space, { x: Undef('float32', [n, 2]), labels: Undef('int32', [n]) });
  for (let c = 0; c < classes; c++) {
    const angle = (2 * Math.PI * c) / classes;
    for (let k = 0; k < perClass; k++) {
      const i = c * perClass + k;
      x.data[2 * i] = 1.5 * Math.cos(angle) + 0.7 * normal(random);
      x.data[2 * i + 1] = 1.5 * Math.sin(angle) + 0.7 * normal(random);
      labels.data[i] = c;
    }
  }
  return { x, labels };
}

/**
 * Train the perceptron on {@link blobs} for `steps` steps from `seed`, with everything (data,
 * parameters, shadows, every step's buffers) in `space`, and return the loss of each step. Each
 * step runs in a frame of its own, so on an arena a steady loop reuses the same bytes.
 *
 * @example
 * ```ts
 * import { Similar } from '@pol/core';
 * import { train } from '@pol/verbs/examples';
 * const losses = train(Similar(new Float32Array(0)), { steps: 50 });
 * console.log((losses.at(-1) ?? 0) < (losses[0] ?? 0) / 2); // true: the loss falls
 * ```
 */
export function train(
  space: Space<'host'>,
  options: { readonly steps?: number; readonly seed?: number; readonly lr?: number; readonly hidden?: number } = {},
): number[] {
  const random = seededRandom(options.seed ?? 1);
  const { x, labels } = blobs(space, random, 30, 3);
  const params = initMlp(space, random, 2, options.hidden ?? 16, 3);
  const grads = Shadows(space, params);
  const losses: number[] = [];
  const lr = options.lr ?? 0.1;
  for (let step = 0; step < (options.steps ?? 200); step++) {
    const loss = scratchspace(space, (frame) => trainStep(frame, params, grads, x, labels, { lr }).loss);
    losses.push(loss.data[0] ?? Number.NaN);
  }
  return losses;
}
