/**
 * TensorFlow.js's CPU backend against Pol's host training step, on both models of
 * `tfjs-model.ts`: TensorFlow.js's step as its documentation writes it (`tfjs-step.ts`), its cost
 * read with `dataSync`; Pol's `trainStep` of `@pol/verbs/examples` with everything (data,
 * parameters, Shadows, every step's buffers) on one `Arena`, retracted to its mark after each
 * step, its loss read from the returned array. One operation is one step and its loss read: on the
 * host a step ends when its call returns, so there is one time, end to end.
 */
import { Arena, mark, retract } from '@pol/arena';
import { Similar } from '@pol/core';
import { Shadows } from '@pol/verbs';
import { trainStep } from '@pol/verbs/examples';
import { type Comparison, compare, type Measurement, type RunOptions, type SuiteResult } from './model.js';
import { measureOps } from './op.js';
import { type TfBackend, useTfBackend } from './tfjs-backend.js';
import { hostModel, type ModelSpec, modelBytes, perceptronSpec, tfjsModels } from './tfjs-model.js';
import { tfTrainer } from './tfjs-step.js';

/** `TensorFlow.js, host: the perceptron (…)` */
export function tfjsHostSection(spec: ModelSpec): string {
  return `TensorFlow.js, host: ${spec.title}`;
}

/**
 * The kernels Pol's host step calls, read off `trainStepInto`: linear, relu, linear, softmax
 * cross-entropy (its mean included), its backward, linear's backward, relu's, linear's again, and
 * one SGD update per parameter (4). Its `zeroShadows` (4 fills) is not counted, as TensorFlow.js,
 * which makes its gradients anew every step, has nothing to zero.
 */
export const POL_HOST_KERNELS = 12;

/** Pol's loop on an arena: the step, its loss read into `last` (a typed cell), and a retract. */
function polLoop(spec: ModelSpec): { readonly step: () => void; readonly last: Float64Array } {
  const arena = new Arena(new ArrayBuffer(modelBytes(spec)));
  const model = hostModel(arena, spec);
  const grads = Shadows(arena, model.params);
  const options = { lr: spec.lr };
  const start = mark(arena);
  // A number returned or stored in a closure variable is boxed anew (16 B a step, which the step
  // does not make); a typed cell is not.
  const last = Float64Array.of(Number.NaN);
  return {
    step: () => {
      const { loss } = trainStep(arena, model.params, grads, model.x, model.labels, options);
      last[0] = loss.data[0] ?? Number.NaN;
      retract(arena, start);
    },
    last,
  };
}

async function hostModelSection(spec: ModelSpec, tfb: TfBackend, run: RunOptions): Promise<SuiteResult> {
  const section = tfjsHostSection(spec);
  run.log(section);
  const pol = polLoop(spec);
  const trainer = tfTrainer(tfb.tf, hostModel(Similar(new Float32Array(0)), spec));
  const steps = run.quick ? spec.curveSteps.quick : spec.curveSteps.full;
  const polLosses: number[] = [];
  for (let i = 0; i < steps; i++) {
    pol.step();
    polLosses.push(pol.last[0] ?? Number.NaN);
  }
  const tfLosses: number[] = [];
  let afterFirstStep = Number.NaN;
  for (let i = 0; i < steps; i++) {
    tfLosses.push(trainer.stepReadSync());
    if (i === 0) afterFirstStep = tfb.tf.memory().numTensors;
  }
  const tfKernels = await trainer.profileKernels();
  // A larger step allocates megabytes in TensorFlow.js: a bytes batch of a few steps fits between collections.
  const small = spec === perceptronSpec;
  const id = `tfjs-host.${spec.id}`;
  const specs = [
    {
      id: `${id}.tfjs`,
      label: 'TensorFlow.js CPU backend: optimizer.minimize(loss, true), cost read (dataSync)',
      pol: false,
      op: trainer.stepReadSync,
    },
    { id: `${id}.pol`, label: 'Pol trainStep(arena, …) + retract, loss read', pol: true, op: pol.step },
  ].map((s) => ({
    ...s,
    section,
    unit: 'step' as const,
    bytesOps: small ? 64 : 2,
    maxBytesOps: small ? 2000 : 16,
    minBytesOps: 1,
  }));
  // Interleaved rounds, rotated: the TensorFlow.js step leaves the collector work.
  const [tfStep, polStep] = (await measureOps(specs, run, 3, true)) as [Measurement, Measurement];
  const tensors = { afterFirstStep, afterRun: tfb.tf.memory().numTensors };
  trainer.dispose();
  const measurements: Measurement[] = [
    { ...tfStep, kernelsPerStep: tfKernels, tensors, losses: tfLosses, way: { name: 'TensorFlow.js', time: 'end to end' } },
    { ...polStep, kernelsPerStep: POL_HOST_KERNELS, losses: polLosses, way: { name: 'Pol', time: 'end to end' } },
  ];
  run.log(
    `  kernels per step: TensorFlow.js ${tfKernels}, Pol ${POL_HOST_KERNELS}; TensorFlow.js tensors alive: ${tensors.afterFirstStep} → ${tensors.afterRun}`,
  );
  const comparisons: Comparison[] = [
    // At the perceptron the issue asks for more than ahead: half of TensorFlow.js's step.
    compare(polStep, tfStep, small ? { kind: 'ratio-at-most', value: 0.5 } : { kind: 'faster-at-least', value: 1 }),
  ];
  return { measurements, comparisons };
}

/** The suite's host half: both models, on TensorFlow.js's CPU backend. */
export async function tfjsHost(run: RunOptions): Promise<SuiteResult & { readonly sections: string[] }> {
  const tfb = await useTfBackend('cpu');
  try {
    const measurements: Measurement[] = [];
    const comparisons: Comparison[] = [];
    for (const spec of tfjsModels) {
      const r = await hostModelSection(spec, tfb, run);
      measurements.push(...r.measurements);
      comparisons.push(...r.comparisons);
    }
    return { measurements, comparisons, sections: tfjsModels.map(tfjsHostSection) };
  } finally {
    await tfb.release();
  }
}
