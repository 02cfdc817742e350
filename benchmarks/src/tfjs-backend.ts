/**
 * TensorFlow.js in this process, as a user in Node.js would run it: `@tensorflow/tfjs` (whose CPU
 * backend runs anywhere) and `@tensorflow/tfjs-backend-webgpu` on Dawn, given what a browser would
 * give it: WebGPU's globals on `globalThis` and `navigator.gpu`, here this process's Dawn instance,
 * so that TensorFlow.js and Pol run on the same adapter. Loaded on first use only, so that the
 * other suites never load it.
 */
import { globals } from 'webgpu';
import { gpuInstance } from './gpu.js';

/** The `@tensorflow/tfjs` module. */
export type Tf = typeof import('@tensorflow/tfjs');

/** The members of the WebGPU backend (`WebGPUBackend`) that the sections use. */
interface WebGpuBackend {
  readonly device: GPUDevice;
  ensureCommandEncoderReady(): void;
  endComputePassEncoder(): void;
  submitQueue(): void;
}

let loading: Promise<Tf> | undefined;

async function load(): Promise<Tf> {
  // The WebGPU backend reads GPUBufferUsage, GPUMapMode and GPUShaderStage as globals, and
  // registers itself only if `navigator.gpu` exists when it loads.
  Object.assign(globalThis, globals);
  const gpu = gpuInstance();
  const scope = globalThis as { navigator?: object };
  if (scope.navigator === undefined) Object.defineProperty(globalThis, 'navigator', { value: { gpu }, configurable: true });
  else Object.defineProperty(scope.navigator, 'gpu', { value: gpu, configurable: true });
  const tf = await import('@tensorflow/tfjs');
  await import('@tensorflow/tfjs-backend-webgpu');
  return tf;
}

/** TensorFlow.js with its WebGPU backend registered (loaded once). */
export function loadTf(): Promise<Tf> {
  loading ??= load();
  return loading;
}

/** TensorFlow.js set to one backend, for one section. */
export interface TfBackend {
  readonly tf: Tf;
  /** The WebGPU backend's device; undefined on the CPU. */
  readonly device: GPUDevice | undefined;
  /**
   * Submit what the WebGPU backend has encoded but not submitted yet: it submits every 15
   * dispatches (`WEBGPU_DEFERRED_SUBMIT_BATCH_SIZE`) and before a read, so a step can end with
   * dispatches pending. Nothing to do on the CPU.
   */
  readonly flush: () => void;
  /**
   * Dispose every tensor, variable and backend instance (`tf.engine().reset()`, which keeps the
   * registered backends, so a later section can set one again), then destroy the WebGPU
   * backend's device, which TensorFlow.js never does, and which keeps the process alive.
   */
  readonly release: () => Promise<void>;
}

/** Set TensorFlow.js to `name`; refused with TensorFlow.js's own reason when the backend cannot start. */
export async function useTfBackend(name: 'cpu' | 'webgpu'): Promise<TfBackend> {
  const tf = await loadTf();
  let ok: boolean;
  try {
    ok = await tf.setBackend(name);
  } catch (cause) {
    throw new Error(`TensorFlow.js: setBackend('${name}') threw: ${String(cause)}`, { cause });
  }
  if (!ok) throw new Error(`TensorFlow.js: setBackend('${name}') returned false (its console output says why)`);
  await tf.ready();
  const gpu = name === 'webgpu' ? (tf.backend() as unknown as WebGpuBackend) : undefined;
  const device = gpu?.device;
  const flush =
    gpu === undefined
      ? () => undefined
      : () => {
          // Its encoder is private: null when nothing is pending (submitQueue would then throw).
          if ((gpu as unknown as { commandEncoder: unknown }).commandEncoder == null) return;
          gpu.endComputePassEncoder();
          gpu.submitQueue();
        };
  const release = async () => {
    flush();
    tf.engine().reset();
    if (device !== undefined) {
      await device.queue.onSubmittedWorkDone();
      device.destroy();
    }
  };
  return { tf, device, flush, release };
}
