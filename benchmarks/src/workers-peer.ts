/**
 * The workers suite's peer worker: the node-workers example's step (the same `infer` verb, its
 * scratch from a frame on an arena of the worker's own), on rows the main thread sends it, as a
 * program without a shared slab does. The model's parameters come once, in `workerData` (copied
 * when the worker starts). Two ways to get the rows in and out:
 *
 * - `copy`: the rows arrive as a Float32Array (structured clone: copied), Y goes back the same way;
 * - `transfer`: an ArrayBuffer of X's rows and one for Y's are transferred in (moved, not copied),
 *   and transferred back with Y written.
 */
import { Arena } from '@pol/arena';
import { hostArray } from '@pol/core';
import type { Mlp } from '@pol/verbs/examples';
import { move, transferableSymbol, valueSymbol, workerData } from 'piscina';
import { infer } from 'pol-example-node-workers/infer';

/** What each peer worker receives when it starts. */
export interface PeerData {
  readonly features: number;
  readonly hidden: number;
  readonly classes: number;
  readonly w1: Float32Array;
  readonly b1: Float32Array;
  readonly w2: Float32Array;
  readonly b2: Float32Array;
  /** The scratch arena's size: enough for the largest block. */
  readonly scratchBytes: number;
}

const data = workerData as PeerData;
const { features, hidden, classes } = data;
const params: Mlp = {
  layer1: { w: hostArray(data.w1, [features, hidden]), b: hostArray(data.b1, [hidden]) },
  layer2: { w: hostArray(data.w2, [hidden, classes]), b: hostArray(data.b2, [classes]) },
};
const arena = new Arena(new ArrayBuffer(data.scratchBytes));

/** Nothing: answers once the worker has started. */
export function ready(): boolean {
  return true;
}

/** Rows of X in a Float32Array of their own (copied in); their rows of Y in a new one (copied out). */
export function copy(task: { readonly x: Float32Array; readonly rows: number }): Float32Array {
  const y = hostArray(new Float32Array(task.rows * classes), [task.rows, classes]);
  infer(arena, params, hostArray(task.x, [task.rows, features]), { y });
  return y.data;
}

/** The rows in an ArrayBuffer of X's and one of Y's, both transferred in and back. */
export interface Moved {
  readonly x: ArrayBuffer;
  readonly y: ArrayBuffer;
  readonly rows: number;
}

export function transfer(task: Moved): unknown {
  const x = hostArray(new Float32Array(task.x), [task.rows, features]);
  const y = hostArray(new Float32Array(task.y), [task.rows, classes]);
  infer(arena, params, x, { y });
  // Both buffers go back moved: an object with piscina's two symbols, marked movable by move().
  return move({ [transferableSymbol]: [task.x, task.y], [valueSymbol]: task } as never);
}
