import { Arena, watermark } from '@pol/arena';
import { alloc } from '@pol/core';
import { Shadows } from '@pol/verbs';
import { blobs, initMlp, seededRandom, trainStep } from '@pol/verbs/examples';

/** What one step left behind: its loss, and the arena's state after it. */
export interface StepRecord {
  readonly step: number;
  readonly loss: number;
  readonly offset: number;
  readonly watermark: number;
  readonly arraysCreated: number;
}

export interface TrainOptions {
  readonly steps?: number;
  readonly seed?: number;
  readonly lr?: number;
  readonly hidden?: number;
  /** The slab's size in bytes (default 256 KiB; the model needs far less). */
  readonly slabBytes?: number;
}

/**
 * Train a two-layer perceptron (2 → hidden → 3, ReLU, softmax cross-entropy, SGD) on three
 * Gaussian blobs, with every buffer in one arena:
 *
 * - the data, the parameters, their gradients (shadows) and the loss are carved once, before the
 *   loop, from the arena itself: they live as long as the arena;
 * - each `trainStep` call opens a frame on the arena for its activations and intermediate
 *   gradients, and retracts it when it returns.
 *
 * Passing our own `loss` buffer means the step materializes nothing outside its frame, so the
 * arena's offset is the same after every step, and, since every step repeats the same
 * allocations, the arena hands back the same array objects: after the first step, neither the
 * watermark nor the count of arrays ever created moves. Nor does a step make a JavaScript object
 * (the verbs reuse their results and options objects); what this loop allocates per step is its
 * own record of the step.
 */
export function trainOnArena(options: TrainOptions = {}): { readonly arena: Arena<'host'>; readonly records: StepRecord[] } {
  const arena = new Arena(new ArrayBuffer(options.slabBytes ?? 256 << 10));
  const random = seededRandom(options.seed ?? 1);
  const { x, labels } = blobs(arena, random, 30, 3); // 90 points in the plane, 3 classes
  const params = initMlp(arena, random, 2, options.hidden ?? 16, 3);
  const grads = Shadows(arena, params); // same structure as params, zeroed
  const loss = alloc(arena, 'float32', [1]);
  // One options object for every step, made here: a literal in the loop would be a new object per
  // step. The verb never writes into it (a kernel without checkpoints or scratch receives it as is).
  const stepOptions = { lr: options.lr ?? 0.1, loss };

  const records: StepRecord[] = [];
  for (let step = 1; step <= (options.steps ?? 200); step++) {
    trainStep(arena, params, grads, x, labels, stepOptions);
    const { offset, arraysCreated } = arena.describe();
    records.push({ step, loss: loss.data[0] ?? Number.NaN, offset, watermark: watermark(arena), arraysCreated });
  }
  return { arena, records };
}
