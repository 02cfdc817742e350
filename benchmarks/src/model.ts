/**
 * What a benchmark run produces: measurements (one per thing timed), comparisons of a Pol
 * measurement against its peer, each with the target it is held to, and the machine it ran on.
 */

/** One thing timed: mean time per operation, bytes allocated per operation. */
export interface Measurement {
  /** Stable identifier, such as `host.arena-steady.1024`. */
  readonly id: string;
  /** The table it appears in, such as `Host allocation, n = 1,024`. */
  readonly section: string;
  /** What was measured, for a reader. */
  readonly label: string;
  /** Whether this is Pol (as opposed to a peer or a baseline). */
  readonly pol: boolean;
  /** What one operation is: an allocation, a call, a step. */
  readonly unit: 'alloc' | 'call' | 'step' | 'batch';
  /**
   * Time per operation, in nanoseconds: the median, over interleaved rounds, of each round's mean
   * time per operation (garbage collection included in the rounds it fell in).
   */
  readonly timeNs: number;
  /** The median of the median samples of the rounds (mitata's p50), or of the round means. */
  readonly p50Ns: number;
  /** The mean over every round, outliers included (GPU steps). */
  readonly meanNs?: number;
  /** JavaScript heap plus ArrayBuffer bytes allocated per operation (see the README for the method). */
  readonly bytesPerOp: number;
  /** Garbage collections observed over `gcSteps` operations, where counted. */
  readonly gcs?: number;
  /** How many operations `gcs` counts over. */
  readonly gcSteps?: number;
  /** GPU buffers and bind groups created per operation, counted on the device over the timed steps (GPU steps). */
  readonly gpuObjects?: number;
  /** Tasks one operation sends to a worker pool (the workers suite: a batch is one task per worker). */
  readonly tasksPerOp?: number;
  /** Bytes of input and output copied between threads per task (the workers suite: computed from the payload, 0 for a shared slab). */
  readonly copiedPerTask?: number;
  /**
   * Kernels one step runs (the tfjs sections): for TensorFlow.js, what `tf.profile` lists (every
   * kernel its engine runs, those that dispatch nothing included: Identity, Reshape, Cast); for
   * Pol, the kernels its step calls.
   */
  readonly kernelsPerStep?: number;
  /** GPU compute dispatches one step encodes, counted on the compute pass (the tfjs WebGPU sections). */
  readonly dispatchesPerStep?: number;
  /** TensorFlow.js tensors alive (`tf.memory().numTensors`) after the first step and after the whole run. */
  readonly tensors?: { readonly afterFirstStep: number; readonly afterRun: number };
  /** The loss of every step of a run from the initial weights, before its update (the tfjs sections' curves). */
  readonly losses?: readonly number[];
  /**
   * For a step timed as a whole (the tfjs sections): the way of running it that this row measures
   * (`TensorFlow.js`, `Pol eager`), and which time it is: to its last submit (the JavaScript side of
   * a GPU step) or end to end (its result read back; on the host, the step's call).
   */
  readonly way?: { readonly name: string; readonly time: 'submit' | 'end to end' };
  /** How many operations the time is averaged over. */
  readonly ops: number;
}

/**
 * A target: what a comparison must show.
 *
 * - `ratio-at-most`: subject time ÷ peer time ≤ value;
 * - `faster-at-least`: peer time ÷ subject time ≥ value;
 * - `overhead-at-most`: subject time − peer time ≤ ns;
 * - `fewer-gcs-at-least`: 1 − subject GCs ÷ peer GCs ≥ fraction.
 *
 * - `bytes-at-most`: the subject allocates at most `bytes` per operation (0: less than one byte);
 *   the time is shown as a ratio to the peer, for information.
 * - `copied-at-most`: the subject copies at most `bytes` of input and output between threads per
 *   task (`copiedPerTask`); the time is shown as a ratio to the peer, for information.
 *
 * `zeroBytes` adds: the subject allocates less than one byte per operation (no object at all);
 * `maxBytes`: at most that many bytes per operation; `noExtraBytes`: it allocates less than one
 * byte per operation more than its peer (for GPU steps, whose peer is the floor: WebGPU's own
 * encoder, pass and command buffer objects are all it allocates); `zeroGpuObjects`: it creates no
 * GPU buffer or bind group.
 */
export type Target =
  | {
      readonly kind: 'ratio-at-most';
      readonly value: number;
      readonly zeroBytes?: boolean;
      readonly maxBytes?: number;
      readonly noExtraBytes?: boolean;
      readonly zeroGpuObjects?: boolean;
    }
  | { readonly kind: 'faster-at-least'; readonly value: number; readonly zeroBytes?: boolean; readonly maxBytes?: number }
  | { readonly kind: 'overhead-at-most'; readonly ns: number; readonly zeroBytes?: boolean; readonly maxBytes?: number }
  | { readonly kind: 'fewer-gcs-at-least'; readonly fraction: number }
  | { readonly kind: 'bytes-at-most'; readonly bytes: number }
  | { readonly kind: 'copied-at-most'; readonly bytes: number };

/** How a comparison reads: `0.42× the time of X`, `3.1× faster than X`, `+1.8 µs over X`, `7 vs 10 GCs`. */
export type ComparisonView = 'time-ratio' | 'speed' | 'overhead' | 'gcs';

/** A Pol measurement against its peer. */
export interface Comparison {
  readonly subject: string;
  readonly peer: string;
  /** How it is shown (the terms of its target, or chosen for a comparison without one). */
  readonly view: ComparisonView;
  /** Subject time ÷ peer time. */
  readonly ratio: number;
  /** Subject time − peer time, in nanoseconds. */
  readonly overheadNs: number;
  /** The target, or undefined for a comparison shown for information. */
  readonly target: Target | undefined;
  /** Whether the target was met (undefined without a target). */
  readonly met: boolean | undefined;
}

/** Which adapter the GPU sections were asked to run on (`--adapter`; `auto` resolves to one of these). */
export type AdapterChoice = 'swiftshader' | 'system';

/** The WebGPU adapter the GPU sections ran on, as it describes itself (Dawn's `GPUAdapterInfo`). */
export interface AdapterInfo {
  readonly vendor: string;
  readonly architecture: string;
  readonly device: string;
  readonly description: string;
  /** A CPU implementation (SwiftShader, llvmpipe): WebGPU's CPU-side costs on the host's cores, not a GPU's. */
  readonly fallback: boolean;
  /** What the run asked for; undefined where it made no choice (the tests). */
  readonly choice?: AdapterChoice | undefined;
}

/** The machine and run. */
export interface Environment {
  readonly node: string;
  readonly v8: string;
  readonly platform: string;
  readonly cpu: string;
  readonly cores: number;
  readonly memoryGiB: number;
  readonly date: string;
  readonly quick: boolean;
  readonly gpu: string | undefined;
  /** The adapter of the GPU sections, where any ran (runs before it was recorded have `gpu` only). */
  readonly adapter?: AdapterInfo | undefined;
  readonly harness: string;
}

export interface Results {
  readonly environment: Environment;
  readonly measurements: readonly Measurement[];
  readonly comparisons: readonly Comparison[];
  /** Sections in the order they ran. */
  readonly sections: readonly string[];
  /**
   * The sections measured on the WebGPU adapter (`gpu`, `gpu-steps`, the tfjs sections' WebGPU
   * half), which go to the adapter's own results file; absent in runs from before it was recorded.
   */
  readonly gpuSections?: readonly string[];
  /** Seconds the whole run took. */
  readonly seconds: number;
}

/** Settings every suite receives. */
export interface RunOptions {
  /** Few iterations: for CI, to keep the benchmarks building and running. No figure means anything. */
  readonly quick: boolean;
  /** Progress lines (stderr by default). */
  readonly log: (line: string) => void;
}

/** What a suite returns. */
export interface SuiteResult {
  readonly measurements: Measurement[];
  readonly comparisons: Comparison[];
}

const views: Readonly<Record<Target['kind'], ComparisonView>> = {
  'ratio-at-most': 'time-ratio',
  'faster-at-least': 'speed',
  'overhead-at-most': 'overhead',
  'fewer-gcs-at-least': 'gcs',
  'bytes-at-most': 'time-ratio',
  'copied-at-most': 'time-ratio',
};

/** Build a comparison of two measurements and judge it against its target. */
export function compare(subject: Measurement, peer: Measurement, target?: Target, view?: ComparisonView): Comparison {
  return {
    subject: subject.id,
    peer: peer.id,
    view: view ?? (target === undefined ? 'speed' : views[target.kind]),
    ratio: subject.timeNs / peer.timeNs,
    overheadNs: subject.timeNs - peer.timeNs,
    target,
    met: target === undefined ? undefined : judge(subject, peer, target),
  };
}

/** Less than one byte per operation: not a single object per operation. */
export function allocatesNothing(m: Measurement): boolean {
  return m.bytesPerOp < 1;
}

function bytesMet(subject: Measurement, zeroBytes: boolean | undefined, maxBytes: number | undefined): boolean {
  return (zeroBytes !== true || allocatesNothing(subject)) && (maxBytes === undefined || subject.bytesPerOp <= maxBytes);
}

function judge(subject: Measurement, peer: Measurement, target: Target): boolean {
  switch (target.kind) {
    case 'ratio-at-most':
      return (
        subject.timeNs / peer.timeNs <= target.value &&
        bytesMet(subject, target.zeroBytes, target.maxBytes) &&
        (target.noExtraBytes !== true || subject.bytesPerOp - peer.bytesPerOp < 1) &&
        (target.zeroGpuObjects !== true || subject.gpuObjects === 0)
      );
    case 'faster-at-least':
      return peer.timeNs / subject.timeNs >= target.value && bytesMet(subject, target.zeroBytes, target.maxBytes);
    case 'overhead-at-most':
      return subject.timeNs - peer.timeNs <= target.ns && bytesMet(subject, target.zeroBytes, target.maxBytes);
    case 'bytes-at-most':
      return target.bytes === 0 ? allocatesNothing(subject) : subject.bytesPerOp <= target.bytes;
    case 'copied-at-most':
      return (subject.copiedPerTask ?? Number.NaN) <= target.bytes;
    case 'fewer-gcs-at-least': {
      const s = subject.gcs ?? Number.NaN;
      const p = peer.gcs ?? Number.NaN;
      if (p === 0) return s === 0;
      return 1 - s / p >= target.fraction;
    }
  }
}
