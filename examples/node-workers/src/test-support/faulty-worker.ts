/**
 * For the tests: the pool's worker, with a fault injected after half of a task's rows. A task with
 * `fault: 'throw'` computes the first half of its rows, then throws; with `fault: 'exit'` it
 * computes them, then ends its thread (`process.exit`), as a crash would. Without `fault` it is the
 * worker itself. Everything else (the claim, the probes) is the real worker's.
 */

import type { Task } from '../task.js';
import forward from '../worker.js';

export { bodyBytes, empty, heapEnd, heapStart, report } from '../worker.js';

export type FaultyTask = Task & { readonly fault?: 'throw' | 'exit' };

export default function faulty(task: FaultyTask): number {
  const { fault, ...plain } = task;
  if (fault === undefined) return forward(plain);
  const half = plain.start + Math.max(1, Math.floor((plain.end - plain.start) / 2));
  forward({ ...plain, end: half });
  if (fault === 'exit') process.exit(7);
  throw new Error(`injected fault after rows ${plain.start} to ${half}`);
}
