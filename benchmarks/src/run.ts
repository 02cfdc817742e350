import { coreAllocSection, coreAwaitSection, coreCosts } from './core.js';
import { environment } from './env.js';
import { gpuSteps } from './gpu.js';
import { gpuStepSuites } from './gpu-steps.js';
import { hostAllocation, hostSection, hostSizes } from './host.js';
import type { Comparison, Measurement, Results, RunOptions } from './model.js';
import { softmaxSection, trainingSection, verbsAndTraining } from './verbs.js';
import { wasmSection, wasmSizes, wasmSuite } from './wasm.js';
import { workersSection, workersSizes, workersSuite } from './workers.js';

/** The suites, by the name `--only` takes. */
export const suiteNames = ['host', 'verbs', 'gpu', 'gpu-steps', 'core', 'wasm', 'workers'] as const;
export type SuiteName = (typeof suiteNames)[number];

/** Run the suites (all by default), in this process, and gather the results. */
export async function runBenchmarks(run: RunOptions, only: readonly SuiteName[] = suiteNames): Promise<Results> {
  const started = performance.now();
  const measurements: Measurement[] = [];
  const comparisons: Comparison[] = [];
  const sections: string[] = [];
  let gpu: string | undefined;
  if (only.includes('host')) {
    const r = await hostAllocation(run);
    measurements.push(...r.measurements);
    comparisons.push(...r.comparisons);
    sections.push(...hostSizes.map(hostSection));
  }
  if (only.includes('verbs')) {
    const r = await verbsAndTraining(run);
    measurements.push(...r.measurements);
    comparisons.push(...r.comparisons);
    sections.push(softmaxSection, trainingSection);
  }
  if (only.includes('gpu')) {
    const r = await gpuSteps(run);
    measurements.push(...r.measurements);
    comparisons.push(...r.comparisons);
    sections.push(r.section);
    gpu = r.adapter;
  }
  if (only.includes('gpu-steps')) {
    const r = await gpuStepSuites(run);
    measurements.push(...r.measurements);
    comparisons.push(...r.comparisons);
    sections.push(...r.sections);
    gpu ??= r.adapter;
  }
  if (only.includes('core')) {
    const r = await coreCosts(run);
    measurements.push(...r.measurements);
    comparisons.push(...r.comparisons);
    sections.push(coreAllocSection, coreAwaitSection);
  }
  if (only.includes('wasm')) {
    const r = await wasmSuite(run);
    measurements.push(...r.measurements);
    comparisons.push(...r.comparisons);
    sections.push(...wasmSizes.map(wasmSection));
  }
  if (only.includes('workers')) {
    const r = await workersSuite(run);
    measurements.push(...r.measurements);
    comparisons.push(...r.comparisons);
    sections.push(...workersSizes.map(workersSection));
  }
  return {
    environment: environment(run.quick, gpu),
    measurements,
    comparisons,
    sections,
    seconds: (performance.now() - started) / 1000,
  };
}
