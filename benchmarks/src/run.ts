import { coreAllocSection, coreAwaitSection, coreCosts } from './core.js';
import { environment } from './env.js';
import { framesInLoops, framesSection } from './frames-loops.js';
import { gpuSteps, openAdapter } from './gpu.js';
import { adapterChoice, adapterInfo, adapterLabel, checkAdapter } from './gpu-environment.js';
import { gpuStepSuites } from './gpu-steps.js';
import { hostAllocation, hostSection, hostSizes } from './host.js';
import type { AdapterInfo, Comparison, Measurement, Results, RunOptions, SuiteResult } from './model.js';
import { tfjsGpu } from './tfjs-gpu.js';
import { tfjsHost } from './tfjs-host.js';
import { softmaxSection, trainingSection, verbsAndTraining } from './verbs.js';
import { wasmSection, wasmSizes, wasmSuite } from './wasm.js';
import { workersSection, workersSizes, workersSuite } from './workers.js';

/** The suites, by the name `--only` takes. */
export const suiteNames = ['host', 'verbs', 'gpu', 'gpu-steps', 'core', 'frames', 'wasm', 'workers', 'tfjs'] as const;
export type SuiteName = (typeof suiteNames)[number];

/** The suites that measure on the WebGPU adapter (the tfjs suite in its WebGPU half). */
export const gpuSuiteNames: readonly SuiteName[] = ['gpu', 'gpu-steps', 'tfjs'];

/** The adapter the GPU suites will get, described; refused where `--adapter system` found no GPU. */
async function gpuAdapter(): Promise<AdapterInfo> {
  const adapter = await openAdapter().catch((cause: unknown) => {
    if (adapterChoice() !== 'system') throw cause;
    throw new Error(`--adapter system: the system's Vulkan drivers give no WebGPU adapter (${String(cause)})`, { cause });
  });
  const info = adapterInfo(adapter);
  checkAdapter(info);
  return info;
}

/**
 * The GPU sections' titles name the adapter they were written for, SwiftShader ("Dawn over
 * SwiftShader"): on any other adapter, that name is replaced by the adapter's.
 */
export function onAdapter(title: string, info: AdapterInfo | undefined): string {
  if (info === undefined || adapterLabel(info) === 'SwiftShader') return title;
  return title.replaceAll('Dawn over SwiftShader', `Dawn on ${adapterLabel(info)}`);
}

/** Run the suites (all by default), in this process, and gather the results. */
export async function runBenchmarks(run: RunOptions, only: readonly SuiteName[] = suiteNames): Promise<Results> {
  const started = performance.now();
  const measurements: Measurement[] = [];
  const comparisons: Comparison[] = [];
  const sections: string[] = [];
  const gpuSections: string[] = [];
  let gpu: string | undefined;
  // Described before anything is measured, so that a run refused its adapter fails at once.
  const adapter = only.some((name) => gpuSuiteNames.includes(name)) ? await gpuAdapter() : undefined;
  // One suite's results into the run's: its measurements, comparisons and sections (`gpuOwn`: those
  // measured on the adapter, titled by it).
  const gather = (r: SuiteResult, own: readonly string[], gpuOwn: readonly string[] = []): void => {
    measurements.push(...r.measurements);
    comparisons.push(...r.comparisons);
    sections.push(...own);
    gpuSections.push(...gpuOwn);
  };
  if (only.includes('host')) gather(await hostAllocation(run), hostSizes.map(hostSection));
  if (only.includes('verbs')) gather(await verbsAndTraining(run), [softmaxSection, trainingSection]);
  if (only.includes('gpu')) {
    const r = await gpuSteps(run);
    gather(r, [r.section], [r.section]);
    gpu = r.adapter;
  }
  if (only.includes('gpu-steps')) {
    const r = await gpuStepSuites(run);
    gather(r, r.sections, r.sections);
    gpu ??= r.adapter;
  }
  if (only.includes('core')) gather(await coreCosts(run), [coreAllocSection, coreAwaitSection]);
  if (only.includes('frames')) gather(await framesInLoops(run), [framesSection]);
  if (only.includes('wasm')) gather(await wasmSuite(run), wasmSizes.map(wasmSection));
  if (only.includes('workers')) gather(await workersSuite(run), workersSizes.map(workersSection));
  if (only.includes('tfjs')) {
    // TensorFlow.js's CPU backend, then its WebGPU backend, each against Pol on the same model.
    const host = await tfjsHost(run);
    gather(host, host.sections);
    const webgpu = await tfjsGpu(run);
    gather(webgpu, webgpu.sections, webgpu.sections);
    gpu ??= webgpu.adapter;
  }
  const title = (section: string) => (gpuSections.includes(section) ? onAdapter(section, adapter) : section);
  return {
    environment: { ...environment(run.quick, gpu), adapter },
    measurements: measurements.map((m) => (title(m.section) === m.section ? m : { ...m, section: title(m.section) })),
    comparisons,
    sections: sections.map(title),
    gpuSections: gpuSections.map(title),
    seconds: (performance.now() - started) / 1000,
  };
}
