import { serialize } from 'node:v8';
import { describeSharedSlab } from '@pol/arena';
import { type Batch, type BatchShape, claimDataRegion, createBatch, createSlab, inferOnThisThread } from './batch.js';
import { openPool } from './pool.js';
import { splitRows } from './task.js';
import type { WorkerReport } from './worker.js';

export interface DemoOptions {
  readonly shape?: BatchShape;
  readonly threads?: number;
  /** Batches run after the first, before the second report, and in each measured run (default 50). */
  readonly steady?: number;
  /** One-row tasks per measured run of the bytes a task allocates (default 1,000). */
  readonly bodyRepeats?: number;
  /** The worker module (tests point it at the built one). */
  readonly workerFile?: URL;
}

/** A small tabular classifier (64 features, 64 hidden units, 10 classes) over a batch of 1,024 rows: the benchmarks' model. */
export const demoShape: BatchShape = { rows: 1024, features: 64, hidden: 64, classes: 10 };

const n = (v: number) => v.toLocaleString('en-US');
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

/** Whether two float32 arrays hold the same bits, element by element (NaN included). */
export function sameBits(a: Float32Array, b: Float32Array): number {
  const x = new Uint32Array(a.buffer, a.byteOffset, a.length);
  const y = new Uint32Array(b.buffer, b.byteOffset, b.length);
  let same = 0;
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] === y[i]) same++;
  return same;
}

async function timePerBatch(run: () => unknown, batches: number): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < batches; i++) await run();
  return (performance.now() - start) / batches;
}

/** The demo: what `npm start` prints, line by line. */
export async function demo(options: DemoOptions = {}): Promise<string[]> {
  const shape = options.shape ?? demoShape;
  const threads = options.threads ?? 2;
  const steady = options.steady ?? 50;
  const bodyRepeats = options.bodyRepeats ?? 1000;
  const lines: string[] = [];
  const { rows, features, hidden, classes } = shape;
  lines.push(
    `Batched inference of a ${features}-${hidden}-${classes} perceptron over ${n(rows)} rows, split across ${threads} worker threads (piscina)`,
  );

  // The slab, and the main thread's claim on its data region, before any worker starts.
  const slab = createSlab(shape, threads);
  const arena = claimDataRegion(slab);
  const batch: Batch = createBatch(arena, shape);
  const layout = describeSharedSlab(slab);
  lines.push(
    `  shared slab: ${layout.regions} regions of ${mib(layout.regionByteLength)}; region 0 is the main thread's: ` +
      `X [${rows}, ${features}], the parameters and Y [${rows}, ${classes}]`,
  );

  // The reference: the same step on this thread alone.
  inferOnThisThread(batch);
  const reference = Float32Array.from(batch.y.data);
  batch.y.data.fill(Number.NaN);

  const pool = await openPool(slab, { threads, ...(options.workerFile === undefined ? {} : { workerFile: options.workerFile }) });
  try {
    const holders = pool.identities();
    lines.push(`  workers: ${holders.map((h) => `thread ${h.threadId} holds region ${h.region}`).join(', ')}`);

    const regions = await pool.infer(batch);
    const blocks = splitRows(rows, threads);
    lines.push(
      `  the split: ${blocks.map(([start, end], i) => `rows ${start}-${end - 1} -> region ${regions[i]}`).join(', ')} ` +
        '(a task: the offsets and dims of X, the parameters and Y, and its rows)',
    );
    const same = sameBits(reference, batch.y.data);
    lines.push(
      `  pooled Y ${same === reference.length ? 'equals' : 'DIFFERS FROM'} the one-thread Y, bit for bit: ${n(same)} of ${n(reference.length)} values`,
    );

    const first = await pool.report();
    for (let i = 0; i < steady; i++) await pool.infer(batch);
    const later = await pool.report();
    lines.push(`  each worker's arena after its first task, and after ${steady} more:`);
    lines.push('    region  thread  tasks            watermark   arrays created  open frames');
    for (const before of first) {
      const after = later.find((r) => r.region === before.region) as WorkerReport;
      const mark = after.watermark === before.watermark ? 'unchanged' : `grew by ${n(after.watermark - before.watermark)}`;
      lines.push(
        `    ${String(after.region).padStart(6)}  ${String(after.threadId).padStart(6)}  ${String(after.tasks).padStart(5)}  ` +
          `${`${n(after.watermark)} B, ${mark}`.padStart(19)}  ${`${before.arraysCreated} -> ${after.arraysCreated}`.padStart(15)}  ` +
          `${String(after.openFrames).padStart(11)}`,
      );
    }
    const steadyAll = first.every((b) => {
      const a = later.find((r) => r.region === b.region);
      return a !== undefined && a.watermark === b.watermark && a.arraysCreated === b.arraysCreated && a.openFrames === 0;
    });
    lines.push(
      `  after the first task: ${steadyAll ? 'no worker carved a new array or moved its watermark' : 'SOME WORKER CARVED AGAIN'}`,
    );

    // The bytes, measured on short tasks (the first row of each worker's block) so that thousands run.
    const probes = pool.probeTasks(batch, 1);
    const body = await pool.bodyBytes(probes, bodyRepeats);
    const dispatched = await pool.workerBytes(probes, 200);
    const worst = (xs: readonly number[]) => (xs.some(Number.isNaN) ? Number.NaN : Math.max(...xs));
    const bytes = (b: number) =>
      Number.isNaN(b) ? 'not measured (run node with --expose-gc)' : `${b < 1 ? 0 : Math.round(b)} B`;
    lines.push(
      `  bytes a steady task allocates in its worker (one-row tasks): ${bytes(worst(body))} for its own work ` +
        `(the views, the forward pass); ${bytes(worst(dispatched.map((d) => d.perTask)))} with piscina's handling of it, ` +
        `against ${bytes(worst(dispatched.map((d) => d.emptyPerTask)))} for a task that ignores the same message`,
    );
    const message = serialize(batch.task(blocks[0]?.[0] ?? 0, blocks[0]?.[1] ?? 1)).length;
    lines.push(
      `  bytes of X and Y copied per task: 0; a task's message is its 12 numbers, ${message} B serialized ` +
        '(the workers read X and write Y in the shared slab)',
    );

    const one = await timePerBatch(() => inferOnThisThread(batch), steady);
    const pooled = await timePerBatch(() => pool.infer(batch), steady);
    lines.push(
      `  time per batch: ${one.toFixed(2)} ms on the main thread alone, ${pooled.toFixed(2)} ms on the pool (${(one / pooled).toFixed(2)}x)`,
    );
  } finally {
    await pool.close();
    arena.dispose();
  }
  lines.push(
    `  pool closed: the main thread freed the workers' regions; claimed now: [${describeSharedSlab(slab).claimed.join(', ')}]`,
  );
  return lines;
}
