import { bindGroup } from '../index.js';
import type { ModelArenas } from './model.js';
import type { GpuF32, GpuI32 } from './types.js';
import { type KernelName, type KernelSource, kernelSources, wgslOf } from './wgsl.js';

/**
 * One dispatch as a trace records it (`trainOnGpu(device, { trace: true })`): which kernel, what
 * it bound, and the step arena's frames at the time. Pictures of the arena are drawn from these.
 *
 * @example
 * ```ts
 * import { type DispatchRecord, trainOnGpu } from '@pol/webgpu/examples';
 * const { trace } = await trainOnGpu(device, { steps: 1, trace: true });
 * const first: DispatchRecord | undefined = trace?.captured[0];
 * console.log(first?.kernel, first?.bindings.map((b) => `${b.name} on ${b.on}`)); // 'linear' [ 'x on arena', 'w on params', 'b on params', 'y on arena' ]
 * ```
 */
export interface DispatchRecord {
  readonly kernel: KernelName;
  /** Each binding: its name in the kernel, the arena it lies on, and its range there. */
  readonly bindings: readonly {
    readonly name: string;
    readonly on: 'params' | 'arena';
    readonly offset: number;
    readonly size: number;
  }[];
  /** The step arena's offset, and where each open frame starts (outermost first), at the dispatch. */
  readonly offset: number;
  readonly frameMarks: readonly number[];
}

/** A kernel compiled on one device: its source, its bindings' names in order, its pipeline and layout. */
interface Compiled {
  readonly source: KernelSource;
  readonly names: readonly string[];
  readonly pipeline: GPUComputePipeline;
  readonly layout: GPUBindGroupLayout;
}

// GPUShaderStage.COMPUTE, spelled out so that no WebGPU global is needed (Dawn defines none).
const COMPUTE = 4;

/**
 * The perceptron's compiled pipelines on one device, and the compute pass its kernels encode
 * into. Compiling is the cold part of a warm-up: it happens here, once, before anything is
 * captured. Each pipeline is labelled with its kernel's name.
 *
 * @example
 * ```ts
 * import { alloc } from '@pol/core';
 * import { deviceArena, download, upload } from '@pol/webgpu';
 * import { GpuKernels } from '@pol/webgpu/examples';
 *
 * const kernels = new GpuKernels(device, { lr: 0.1 });
 * const arena = deviceArena(device, 1 << 12);
 * const x = alloc(arena, 'float32', [4]);
 * const y = alloc(arena, 'float32', [4]);
 * upload(x, Float32Array.of(-1, 2, -3, 4));
 * const encoder = device.createCommandEncoder();
 * const pass = encoder.beginComputePass();
 * kernels.pass = pass; // dispatches go into this pass until it is taken away
 * kernels.dispatch('relu', x.length, x, y);
 * pass.end();
 * kernels.pass = undefined;
 * device.queue.submit([encoder.finish()]);
 * console.log((await download(y)).data); // Float32Array(4) [ 0, 2, 0, 4 ]
 * arena.slab.destroy();
 * ```
 */
export class GpuKernels {
  /** The device the pipelines are compiled on. */
  readonly device: GPUDevice;
  readonly #compiled: Record<KernelName, Compiled>;
  /** The pass the kernels encode into while a step runs (`trainStep` opens and closes it). */
  pass: GPUComputePassEncoder | undefined;
  // The pipeline last set, and on which pass: consecutive dispatches of one kernel (SGD's) set it once.
  #pipelineOf: GPUComputePassEncoder | undefined;
  #pipeline: GPUComputePipeline | undefined;
  /** When set, every dispatch is recorded here, with the step arena's state (for pictures). */
  trace: { arenas: ModelArenas; dispatches: DispatchRecord[] } | undefined;

  /** Compile the eight kernels on `device`; `lr` is SGD's learning rate (a pipeline constant). */
  constructor(device: GPUDevice, options: { readonly lr: number }) {
    this.device = device;
    const compile = (name: KernelName): Compiled => {
      const source: KernelSource = kernelSources[name];
      const layout = device.createBindGroupLayout({
        label: name,
        entries: Object.values(source.bindings).map((access, binding) => ({
          binding,
          visibility: COMPUTE,
          buffer: { type: access === 'read' ? 'read-only-storage' : 'storage' },
        })),
      });
      const pipeline = device.createComputePipeline({
        label: name,
        layout: device.createPipelineLayout({ bindGroupLayouts: [layout] }),
        compute: {
          module: device.createShaderModule({ label: name, code: wgslOf(source) }),
          entryPoint: 'main',
          ...(name === 'sgd' ? { constants: { lr: options.lr } } : {}),
        },
      });
      return { source, names: Object.keys(source.bindings), pipeline, layout };
    };
    this.#compiled = {
      linear: compile('linear'),
      relu: compile('relu'),
      softmaxCrossEntropy: compile('softmaxCrossEntropy'),
      mean: compile('mean'),
      softmaxCrossEntropyBackward: compile('softmaxCrossEntropyBackward'),
      linearBackward: compile('linearBackward'),
      reluBackward: compile('reluBackward'),
      sgd: compile('sgd'),
    };
  }

  /**
   * Encode one dispatch of `kernel` over `threads` invocations into `pass`, binding `arrays` in
   * binding order through `bindGroup`'s cache (a steady step creates no bind group).
   */
  dispatch(kernel: KernelName, threads: number, ...arrays: (GpuF32 | GpuI32)[]): void {
    const pass = this.pass;
    if (pass === undefined) throw new Error(`${kernel}: no compute pass is open (call it inside trainStep)`);
    const { source, names, pipeline, layout } = this.#compiled[kernel];
    if (arrays.length !== names.length) throw new Error(`${kernel} binds ${names.length} arrays, ${arrays.length} were given`);
    if (pipeline !== this.#pipeline || pass !== this.#pipelineOf) {
      pass.setPipeline(pipeline);
      this.#pipeline = pipeline;
      this.#pipelineOf = pass;
    }
    pass.setBindGroup(0, bindGroup(this.device, layout, arrays));
    pass.dispatchWorkgroups(Math.ceil(threads / source.workgroupSize));
    if (this.trace !== undefined) this.#record(this.trace, kernel, arrays);
  }

  #record(trace: NonNullable<GpuKernels['trace']>, kernel: KernelName, arrays: readonly (GpuF32 | GpuI32)[]): void {
    const { offset, frameMarks } = trace.arenas.arena.describe();
    const params = trace.arenas.params.slab.buffer;
    const { names } = this.#compiled[kernel];
    trace.dispatches.push({
      kernel,
      bindings: arrays.map((a, i) => ({
        name: names[i] ?? '',
        on: a.buffer === params ? 'params' : 'arena',
        offset: a.offset,
        size: a.size,
      })),
      offset,
      frameMarks,
    });
  }
}
