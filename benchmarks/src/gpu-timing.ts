/**
 * Timing GPU steps: the CPU-side time of the synchronous step calls (JavaScript, Dawn's validation
 * and recording, the driver's work on the calling thread), in rounds of a fixed number of calls per
 * variant, variants interleaved (in a fresh order every round, see `roundOrders`), each round's submitted work drained outside the timing so that
 * queues stay short. A variant's figure is the median round. Alongside: bytes allocated per step
 * (`bytesPerOp`) and the buffers and bind groups created per step, counted on the device over the
 * timed rounds. A variant may instead await each call (a step and its read-back), for the time
 * end to end.
 */
import type { GpuObjectCounter } from './gpu-count.js';
import { bytesPerAwaitedOp, bytesPerOp, median } from './measure.js';
import type { Measurement, RunOptions } from './model.js';
import { formatBytes, formatNs } from './op.js';

/** What every way of running a step has, however it is called. */
interface GpuVariantBase {
  /** Measurement id, such as `gpu-mlp.replay`. */
  readonly id: string;
  readonly label: string;
  readonly pol: boolean;
  /** The device it submits to (drained between rounds). */
  readonly device: GPUDevice;
  /** Counts the GPU objects the device creates. */
  readonly counter: GpuObjectCounter;
  /** Steps one call of `run` performs (several steps per submit). Default 1. */
  readonly steps?: number;
  /**
   * Submits whatever the calls left encoded but unsubmitted, timed with them (once per round):
   * for a library that defers its submits (TensorFlow.js's WebGPU backend submits every 15
   * dispatches), so that the time is the time to the last submit.
   */
  readonly flush?: () => void;
}

/**
 * One way of running a step: `run()` is one call, synchronous (the time to its last submit), or,
 * with `awaits`, a promise awaited before the next call (a step and the read-back of its result:
 * the time end to end).
 */
export type GpuVariant = GpuVariantBase &
  ({ readonly run: () => void; readonly awaits?: false } | { readonly run: () => Promise<unknown>; readonly awaits: true });

/** How many calls per round, rounds and warm-up rounds, and the calls in a bytes batch. */
export interface GpuTimingOptions {
  readonly batch?: number;
  readonly rounds?: number;
  readonly warmRounds?: number;
  /** Calls in every bytes batch (default: 8 in quick mode; else 16 in the first, up to 64 after). */
  readonly bytesOps?: number;
}

/** Time, bytes and GPU objects of each variant, per step, measured in one run. */
export async function measureGpuSteps(
  section: string,
  variants: readonly GpuVariant[],
  run: RunOptions,
  options: GpuTimingOptions = {},
): Promise<Measurement[]> {
  const batch = options.batch ?? 16;
  // Quick mode runs 2 rounds after 1 of warm-up, or fewer where the options ask for fewer.
  const rounds = run.quick ? Math.min(2, options.rounds ?? 2) : (options.rounds ?? 200);
  const warmRounds = run.quick ? Math.min(1, options.warmRounds ?? 1) : (options.warmRounds ?? 10);
  const perRound: number[][] = variants.map(() => []);
  const objects: number[] = variants.map(() => 0);
  const orders = roundOrders(variants.length);
  for (let r = 0; r < warmRounds + rounds; r++) {
    const order = orders.next();
    for (let k = 0; k < order.length; k++) {
      const v = order[k] as number;
      const variant = variants[v] as GpuVariant;
      const { device, counter } = variant;
      const made = counter.total;
      const t0 = performance.now();
      if (variant.awaits === true) {
        const step = variant.run;
        for (let i = 0; i < batch; i++) await step();
      } else {
        const step = variant.run;
        for (let i = 0; i < batch; i++) step();
      }
      variant.flush?.();
      const t1 = performance.now();
      const created = counter.total - made;
      await device.queue.onSubmittedWorkDone();
      if (r >= warmRounds) {
        perRound[v]?.push(((t1 - t0) * 1e6) / batch);
        objects[v] = (objects[v] ?? 0) + created;
      }
    }
  }
  const out: Measurement[] = [];
  for (let v = 0; v < variants.length; v++) {
    const variant = variants[v] as GpuVariant;
    const steps = variant.steps ?? 1;
    const bytesOps = options.bytesOps ?? (run.quick ? 8 : 16);
    const bytes =
      variant.awaits === true
        ? await bytesPerAwaitedOp(variant.run, bytesOps, run.quick ? 1 : 3)
        : await bytesPerOp(variant.run, {
            ops: bytesOps,
            maxOps: options.bytesOps ?? (run.quick ? 8 : 64),
            minOps: Math.min(8, bytesOps),
            repeats: run.quick ? 1 : 3,
            between: () => {
              variant.flush?.();
              return variant.device.queue.onSubmittedWorkDone();
            },
          });
    const times = (perRound[v] ?? []).map((ns) => ns / steps);
    const m: Measurement = {
      id: variant.id,
      section,
      label: variant.label,
      pol: variant.pol,
      unit: 'step',
      timeNs: median(times),
      p50Ns: median(times),
      meanNs: times.reduce((a, b) => a + b, 0) / times.length,
      bytesPerOp: bytes / steps,
      gpuObjects: (objects[v] ?? 0) / (times.length * batch * steps),
      ops: times.length * batch * steps,
    };
    run.log(
      `  ${m.label.padEnd(72)} ${formatNs(m.timeNs).padStart(9)}/step  ${formatBytes(m.bytesPerOp).padStart(8)}  ` +
        `${(m.gpuObjects ?? 0).toFixed(1)} new GPU objects/step`,
    );
    out.push(m);
  }
  return out;
}

/**
 * The order of the variants in each round: a fresh permutation every round (Fisher–Yates, from a
 * fixed seed, so a run is repeatable). Why: on SwiftShader the GPU work is CPU work, and what ran
 * just before a variant slows it, so each variant must follow every other about equally often; a
 * fixed order, or one only rotated, gives each variant the same predecessor round after round.
 */
export function roundOrders(n: number, seed = 0x9e3779b9): { next(): readonly number[] } {
  let state = seed >>> 0 || 1;
  const random = (): number => {
    // xorshift32: enough to decorrelate orders, and the same in every run.
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state / 0x1_0000_0000;
  };
  const order = Array.from({ length: n }, (_, i) => i);
  return {
    next(): readonly number[] {
      for (let i = n - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1));
        const t = order[i] as number;
        order[i] = order[j] as number;
        order[j] = t;
      }
      return order;
    },
  };
}
