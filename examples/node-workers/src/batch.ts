import { type Arena, claimRegion, createSharedSlab } from '@pol/arena';
import { alloc } from '@pol/core';
import { type F32, initMlp, type Mlp, seededRandom } from '@pol/verbs/examples';
import { infer, scratchBytes } from './infer.js';
import type { DataBounds, Task } from './task.js';

/** A batch's dims: `rows` inputs of `features` numbers, through `hidden` units, into `classes` probabilities. */
export interface BatchShape {
  readonly rows: number;
  readonly features: number;
  readonly hidden: number;
  readonly classes: number;
}

/** The region the main thread claims for the batch (X, the parameters, Y); the workers claim the others. */
export const DATA_REGION = 0;

/** Bytes of the first carve of each worker's region: its identity and counters, which the main thread reads. */
export const IDENTITY_BYTES = 256;

const carved = (floats: number) => Math.ceil((4 * floats) / 256) * 256;

/**
 * How large each region of the slab must be for `shape` split over `threads` workers: the main
 * thread's region holds X, Y, the parameters and the scratch of the whole batch on one thread;
 * a worker's holds its identity block and the scratch of its block of rows. A shared slab's regions
 * are all one size, so the larger of the two sizes them all.
 */
export function regionBytes(shape: BatchShape, threads: number): number {
  const { rows, features, hidden, classes } = shape;
  const parameters = carved(features * hidden) + carved(hidden) + carved(hidden * classes) + carved(classes);
  const data = carved(rows * features) + carved(rows * classes) + parameters + scratchBytes(rows, hidden, classes);
  const block = Math.ceil(rows / Math.max(1, threads));
  const worker = IDENTITY_BYTES + scratchBytes(block, hidden, classes);
  return Math.max(data, worker);
}

/** A shared slab for `shape` on `threads` workers: one region for the main thread, one per worker. */
export function createSlab(shape: BatchShape, threads: number): SharedArrayBuffer {
  return createSharedSlab({ regions: threads + 1, regionByteLength: regionBytes(shape, threads) });
}

/** The batch, carved from the main thread's region of the shared slab. */
export interface Batch {
  /** The main thread's arena: its claim on the data region. */
  readonly arena: Arena<'host'>;
  readonly shape: BatchShape;
  /** The inputs, `[rows, features]`. */
  readonly x: F32;
  /** The outputs, `[rows, classes]`: what the workers write, each task its own rows. */
  readonly y: F32;
  readonly params: Mlp;
  /** The bytes of the slab a task may name (the data region's). */
  readonly bounds: DataBounds;
  /** The task that computes rows `start` up to `end`: plain numbers, offsets into the slab. */
  task(start: number, end: number): Task;
}

/** Claim the data region of `slab` for the main thread: before any worker starts, so that none takes it. */
export function claimDataRegion(slab: SharedArrayBuffer): Arena<'host'> {
  return claimRegion(slab, { region: DATA_REGION });
}

/**
 * Carve a batch from `arena` (the main thread's region): the perceptron's parameters from `seed`
 * (scaled normal weights, zero biases), the inputs X drawn uniformly from [-1, 1), and Y, zeroed.
 * Everything lives until the arena is reset.
 */
export function createBatch(arena: Arena<'host'>, shape: BatchShape, seed = 1): Batch {
  const { rows, features, hidden, classes } = shape;
  const random = seededRandom(seed);
  const params = initMlp(arena, random, features, hidden, classes);
  const x = alloc(arena, 'float32', [rows, features]);
  for (let i = 0; i < x.data.length; i++) x.data[i] = 2 * random() - 1;
  const y = alloc(arena, 'float32', [rows, classes]);
  const at = (a: F32) => a.data.byteOffset;
  const base = {
    x: at(x),
    y: at(y),
    w1: at(params.layer1.w),
    b1: at(params.layer1.b),
    w2: at(params.layer2.w),
    b2: at(params.layer2.b),
    rows,
    features,
    hidden,
    classes,
  };
  return {
    arena,
    shape: { rows, features, hidden, classes },
    x,
    y,
    params,
    bounds: { start: arena.byteOffset, end: arena.byteOffset + arena.capacity },
    task: (start, end) => ({ ...base, start, end }),
  };
}

const ownOutput = new WeakMap<Batch, { readonly y: F32 }>();

/** The same step on this thread alone: every row of `batch`, into its Y, with the scratch from a frame on the data region. */
export function inferOnThisThread(batch: Batch): F32 {
  let options = ownOutput.get(batch);
  if (options === undefined) {
    options = { y: batch.y };
    ownOutput.set(batch, options);
  }
  return infer(batch.arena, batch.params, batch.x, options).y;
}
