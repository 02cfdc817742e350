/**
 * The tfjs sections in quick mode (their figures mean nothing; no timing is asserted): every row
 * comes out with finite figures, Pol and TensorFlow.js compute the same losses step after step on
 * both models (same model, same data, same weights, so the same work), TensorFlow.js keeps no
 * tensor per step, the kernels are counted, and the targets are the ones the sections promise. On
 * Dawn over SwiftShader, as the other GPU tests (a missing adapter fails these tests, never skips
 * them).
 */
import { Similar } from '@pol/core';
import { Shadows } from '@pol/verbs';
import { trainStep } from '@pol/verbs/examples';
import { beforeAll, describe, expect, test } from 'vitest';
import type { Measurement, Results, SuiteResult } from './model.js';
import { markdown } from './report.js';
import { curveGap } from './report-steps.js';
import { tfjsGpu, tfjsGpuSection } from './tfjs-gpu.js';
import { POL_HOST_KERNELS, tfjsHost, tfjsHostSection } from './tfjs-host.js';
import { hostModel, type ModelSpec, perceptronSpec, tfjsModels } from './tfjs-model.js';

/**
 * How far Pol's loss may be from TensorFlow.js's at any step. Both compute the same float32 model
 * from the same numbers, but not in the same order nor with the same functions: TensorFlow.js takes
 * the log-softmax in separate kernels (max, subtract, exp, sum, log), each result rounded to
 * float32, where Pol's kernels fuse them; its SGD multiplies then adds; on the GPU each side's exp
 * and log are the driver's. Such differences are a few float32 units in the last place of a loss
 * near 1 (1 ulp is 1.2e-7), and SGD carries them from step to step: the curves of quick and full
 * runs agree to within 1e-6 (on the larger model, over 20 steps, on SwiftShader). A difference in
 * the work itself shows far above that: a learning rate off by 0.1% moves the curve by about 5e-4
 * within 20 steps (the last test checks that it exceeds ten times this bound). So 1e-5: ten times
 * the rounding seen, fifty times below the smallest real change tried.
 */
const LOSS_TOLERANCE = 1e-5;

let host: SuiteResult & { readonly sections: string[] };
let gpu: SuiteResult & { readonly adapter: string; readonly sections: string[] };

beforeAll(async () => {
  const run = { quick: true, log: () => undefined };
  host = await tfjsHost(run);
  gpu = await tfjsGpu(run);
}, 170_000);

function row(suite: SuiteResult, id: string): Measurement {
  const m = suite.measurements.find((x) => x.id === id);
  if (m === undefined) throw new Error(`missing ${id}`);
  return m;
}

const gpuWays = ['tfjs', 'eager', 'replay'] as const;

describe('the tfjs sections, in quick mode', () => {
  test('a row per way and model, with finite figures, in its section', () => {
    expect(host.measurements.map((m) => m.id)).toEqual(
      tfjsModels.flatMap((s) => [`tfjs-host.${s.id}.tfjs`, `tfjs-host.${s.id}.pol`]),
    );
    expect(gpu.measurements.map((m) => m.id)).toEqual(
      tfjsModels.flatMap((s) => ['submit', 'e2e'].flatMap((time) => gpuWays.map((way) => `tfjs-gpu.${s.id}.${way}.${time}`))),
    );
    expect(host.sections).toEqual(tfjsModels.map(tfjsHostSection));
    expect(gpu.sections).toEqual(tfjsModels.map(tfjsGpuSection));
    for (const m of [...host.measurements, ...gpu.measurements]) {
      expect(Number.isFinite(m.timeNs) && m.timeNs > 0, m.id).toBe(true);
      expect(Number.isFinite(m.bytesPerOp) && m.bytesPerOp >= 0, m.id).toBe(true);
      expect(m.pol, m.id).toBe(!m.id.includes('.tfjs'));
      expect([...host.sections, ...gpu.sections]).toContain(m.section);
    }
  });

  test('Pol and TensorFlow.js compute the same loss at every step, on the host and on WebGPU (same model, same work)', () => {
    for (const spec of tfjsModels) {
      const curves: [string, readonly number[] | undefined, readonly number[] | undefined][] = [
        ['host', row(host, `tfjs-host.${spec.id}.pol`).losses, row(host, `tfjs-host.${spec.id}.tfjs`).losses],
        ['eager', row(gpu, `tfjs-gpu.${spec.id}.eager.e2e`).losses, row(gpu, `tfjs-gpu.${spec.id}.tfjs.e2e`).losses],
        ['replayed', row(gpu, `tfjs-gpu.${spec.id}.replay.e2e`).losses, row(gpu, `tfjs-gpu.${spec.id}.tfjs.e2e`).losses],
      ];
      for (const [name, pol, tf] of curves) {
        const where = `${spec.id}, ${name}`;
        expect(pol?.length, where).toBe(spec.curveSteps.quick);
        expect(tf?.length, where).toBe(spec.curveSteps.quick);
        expect(curveGap(pol ?? [], tf ?? []), where).toBeLessThanOrEqual(LOSS_TOLERANCE);
        // And they trained: the loss fell.
        expect(pol?.at(-1) ?? Number.NaN, where).toBeLessThan((pol?.[0] ?? Number.NaN) * 0.8);
      }
    }
  });

  test('TensorFlow.js keeps no tensor per step: as many alive after the run as after the first step', () => {
    const rows = [...host.measurements, ...gpu.measurements].filter((m) => !m.pol);
    expect(rows.length).toBe(6);
    for (const m of rows) {
      expect(m.tensors, m.id).toBeDefined();
      expect(m.tensors?.afterRun, m.id).toBe(m.tensors?.afterFirstStep);
      // The 4 variables, the data, the labels, and SGD's rate: nothing that a step makes.
      expect(m.tensors?.afterRun, m.id).toBe(7);
    }
  });

  test('the kernels are counted: TensorFlow.js by tf.profile and on the pass, Pol’s step on the pass', () => {
    for (const spec of tfjsModels) {
      const tf = row(gpu, `tfjs-gpu.${spec.id}.tfjs.submit`);
      expect(tf.kernelsPerStep ?? 0).toBeGreaterThan(tf.dispatchesPerStep ?? Number.NaN);
      expect(tf.dispatchesPerStep ?? 0).toBeGreaterThan(13);
      expect(row(host, `tfjs-host.${spec.id}.tfjs`).kernelsPerStep).toBe(tf.kernelsPerStep);
      expect(row(host, `tfjs-host.${spec.id}.pol`).kernelsPerStep).toBe(POL_HOST_KERNELS);
      for (const way of ['eager', 'replay'] as const) {
        // The example's step: 13 dispatches, eager or replayed.
        for (const time of ['submit', 'e2e']) expect(row(gpu, `tfjs-gpu.${spec.id}.${way}.${time}`).dispatchesPerStep).toBe(13);
      }
    }
  });

  test('the targets: Pol ahead of TensorFlow.js on every row; at the perceptron, the replay at most a tenth and the host step half', () => {
    for (const spec of tfjsModels) {
      const perceptron = spec === perceptronSpec;
      const target = (suite: SuiteResult, subject: string, peer: string) =>
        suite.comparisons.find((c) => c.subject === subject && c.peer === peer)?.target;
      const g = (way: string, time: string) => `tfjs-gpu.${spec.id}.${way}.${time}`;
      const ahead = { kind: 'faster-at-least', value: 1 };
      expect(target(host, `tfjs-host.${spec.id}.pol`, `tfjs-host.${spec.id}.tfjs`)).toEqual(
        perceptron ? { kind: 'ratio-at-most', value: 0.5 } : ahead,
      );
      expect(target(gpu, g('eager', 'submit'), g('tfjs', 'submit'))).toEqual(ahead);
      expect(target(gpu, g('replay', 'submit'), g('tfjs', 'submit'))).toEqual(ahead);
      expect(target(gpu, g('eager', 'e2e'), g('tfjs', 'e2e'))).toEqual(ahead);
      expect(target(gpu, g('replay', 'e2e'), g('tfjs', 'e2e'))).toEqual(
        perceptron ? { kind: 'ratio-at-most', value: 0.1 } : ahead,
      );
    }
    expect(host.comparisons.length + gpu.comparisons.length).toBe(10);
    for (const c of [...host.comparisons, ...gpu.comparisons]) expect(typeof c.met).toBe('boolean');
  });

  test('the report shows where the time goes and the loss curves side by side', () => {
    const results: Results = {
      environment: {
        node: process.version,
        v8: process.versions.v8,
        platform: 'test',
        cpu: 'test',
        cores: 1,
        memoryGiB: 1,
        date: new Date(0).toISOString(),
        quick: true,
        gpu: gpu.adapter,
        harness: 'test',
      },
      measurements: [...host.measurements, ...gpu.measurements],
      comparisons: [...host.comparisons, ...gpu.comparisons],
      sections: [...host.sections, ...gpu.sections],
      seconds: 1,
    };
    const page = markdown(results);
    expect(page.match(/\| where the time goes \|/g)?.length).toBe(4);
    expect(page.match(/\| loss at step \|/g)?.length).toBe(4);
    expect(page).toContain('| TensorFlow.js | Pol eager | Pol replayed |');
    expect(page).not.toMatch(/NaN|undefined/);
  });
});

describe('the loss tolerance', () => {
  /** Pol's host curve of `steps` steps, at `spec`'s learning rate times `scale`. */
  function curve(spec: ModelSpec, steps: number, scale: number): number[] {
    const space = Similar(new Float32Array(0));
    const m = hostModel(space, spec);
    const grads = Shadows(space, m.params);
    const options = { lr: spec.lr * scale };
    return Array.from(
      { length: steps },
      () => trainStep(space, m.params, grads, m.x, m.labels, options).loss.data[0] ?? Number.NaN,
    );
  }

  test('is far below what a real difference in the work does: a learning rate 0.1% off', () => {
    for (const spec of tfjsModels) {
      expect(curveGap(curve(spec, 20, 1.001), curve(spec, 20, 1)), spec.id).toBeGreaterThan(10 * LOSS_TOLERANCE);
    }
  });
});
