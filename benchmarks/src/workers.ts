/**
 * Worker threads: the node-workers example's step (batched inference of a two-layer perceptron,
 * split by blocks of rows, one block per worker) on one thread, and on a piscina pool three ways:
 * rows copied in and out (structured clone), rows transferred in and out (ArrayBuffers moved, the
 * rows copied into and out of them), and Pol's shared slab (X, the parameters and Y in the data
 * region, a task is 12 numbers, each worker's scratch from frames on its own region). One
 * operation is one batch: every row, one task per worker, awaited.
 */
import type { Arena } from '@pol/arena';
import { Piscina } from 'piscina';
import {
  type Batch,
  type BatchShape,
  claimDataRegion,
  createBatch,
  createSlab,
  inferOnThisThread,
} from 'pol-example-node-workers/batch';
import { scratchBytes } from 'pol-example-node-workers/infer';
import { openPool, type WorkerPool } from 'pol-example-node-workers/pool';
import { splitRows } from 'pol-example-node-workers/task';
import { bytesPerAwaitedOp, bytesPerOp, median, timeOp } from './measure.js';
import { type Comparison, compare, type Measurement, type RunOptions, type SuiteResult } from './model.js';
import { formatBytes, formatNs } from './op.js';
import type { Moved, PeerData } from './workers-peer.js';

/** The model: a small tabular classifier, 64 features → 64 hidden units → 10 classes. */
export const workersModel = { features: 64, hidden: 64, classes: 10 } as const;
/** Rows per batch: from one where a pool cannot pay for its messages to one where it pays for them many times over. */
export const workersSizes = [8, 64, 512, 4096] as const;
/** Worker threads of every pool (this machine's 2 cores). */
export const WORKER_THREADS = 2;
/** The copies' share of a copying pool's batch from which Pol must be 1.3× faster than it. */
export const WORKERS_COPIES_SHARE = 0.2;

const { features, hidden, classes } = workersModel;

/** `Workers: 64-64-10 perceptron inference, 4,096 rows, 2 worker threads` */
export function workersSection(rows: number): string {
  return `Workers: ${features}-${hidden}-${classes} perceptron inference, ${rows.toLocaleString('en-US')} rows, ${WORKER_THREADS} worker threads`;
}

/** The variants, by id. */
export const workerVariants = ['one-thread', 'copy', 'transfer', 'pol'] as const;
export type WorkerVariant = (typeof workerVariants)[number];

const labels: Readonly<Record<WorkerVariant, string>> = {
  'one-thread': 'the same step on the main thread alone (no pool)',
  copy: 'piscina pool, rows copied in and out (structured clone)',
  transfer: 'piscina pool, rows transferred in and out (ArrayBuffers moved)',
  pol: 'Pol: piscina pool over a shared slab (a task is 12 numbers)',
};

// The peers' worker module, built: beside this file in dist/, or there when the tests run this file
// from src/ (the test task builds the package first).
const peerWorker = new URL(import.meta.url.endsWith('.ts') ? '../dist/workers-peer.js' : './workers-peer.js', import.meta.url);

/** The pools and the slab, made once for every size (the slab sized for the largest). */
export interface WorkersRig {
  readonly arena: Arena<'host'>;
  readonly pool: WorkerPool;
  /** A pool per peer, so that each worker runs one way only, as a program's would. */
  readonly peers: { readonly copy: Piscina; readonly transfer: Piscina };
  close(): Promise<void>;
}

export async function openRig(): Promise<WorkersRig> {
  const largest: BatchShape = { rows: Math.max(...workersSizes), ...workersModel };
  const slab = createSlab(largest, WORKER_THREADS);
  const arena = claimDataRegion(slab);
  const pool = await openPool(slab, { threads: WORKER_THREADS });
  // The peers get the same parameters (the batch's, which every size draws first from the same seed), once.
  const { params } = createBatch(arena, { ...workersModel, rows: 1 });
  const peerData: PeerData = {
    ...workersModel,
    w1: Float32Array.from(params.layer1.w.data),
    b1: Float32Array.from(params.layer1.b.data),
    w2: Float32Array.from(params.layer2.w.data),
    b2: Float32Array.from(params.layer2.b.data),
    scratchBytes: scratchBytes(Math.ceil(largest.rows / WORKER_THREADS), hidden, classes) + 4096,
  };
  arena.reset();
  const peerPool = () =>
    new Piscina({
      filename: peerWorker.href,
      minThreads: WORKER_THREADS,
      maxThreads: WORKER_THREADS,
      idleTimeout: Number.POSITIVE_INFINITY,
      workerData: peerData,
    });
  const peers = { copy: peerPool(), transfer: peerPool() };
  // Every peer worker started, before anything is timed.
  await Promise.all(
    [peers.copy, peers.transfer].flatMap((p) => Array.from({ length: WORKER_THREADS }, () => p.run(null, { name: 'ready' }))),
  );
  return {
    arena,
    pool,
    peers,
    close: async () => {
      await Promise.all([peers.copy.destroy(), peers.transfer.destroy()]);
      await pool.close();
      arena.dispose();
    },
  };
}

/** Each variant at one size, and what the peers copy. */
export interface WorkerOps {
  readonly batch: Batch;
  readonly run: Readonly<Record<WorkerVariant, () => unknown>>;
  /** Each variant's Y after one batch of its own (for the checks). */
  results(): Promise<Readonly<Record<WorkerVariant, Float32Array>>>;
  /** Bytes of X and Y the copying and transferring peers copy per task (one task's rows in, and out). */
  readonly payloadPerTask: number;
  /** One task's rows copied in and out on the main thread, as the copying pool copies them (a slice and a structured clone of X's rows, a structured clone of Y's, set into Y). */
  readonly copies: () => unknown;
}

/** The variants at `rows` rows: a new batch in the data region, and the peers' copies of its X and Y. */
export function workerOps(rig: WorkersRig, rows: number): WorkerOps {
  rig.arena.reset();
  const batch = createBatch(rig.arena, { rows, ...workersModel });
  const blocks = splitRows(rows, WORKER_THREADS);
  // The peers' batch: plain arrays (a program without a shared slab), the same values.
  const x = Float32Array.from(batch.x.data);
  const copyY = new Float32Array(rows * classes);
  const transferY = new Float32Array(rows * classes);
  const copy = () =>
    Promise.all(
      blocks.map(([start, end]) =>
        rig.peers.copy
          .run({ x: x.slice(start * features, end * features), rows: end - start }, { name: 'copy' })
          .then((y: Float32Array) => copyY.set(y, start * classes)),
      ),
    );
  // One pair of buffers per block, moved to the worker and back on every batch; the rows are copied
  // into X's buffer before, and out of Y's after.
  const moved: Moved[] = blocks.map(([start, end]) => ({
    x: new ArrayBuffer(4 * (end - start) * features),
    y: new ArrayBuffer(4 * (end - start) * classes),
    rows: end - start,
  }));
  const transfer = () =>
    Promise.all(
      blocks.map(([start, end], i) => {
        const task = moved[i] as Moved;
        new Float32Array(task.x).set(x.subarray(start * features, end * features));
        return rig.peers.transfer.run(task, { name: 'transfer', transferList: [task.x, task.y] }).then((back: Moved) => {
          transferY.set(new Float32Array(back.y), start * classes);
          moved[i] = back;
        });
      }),
    );
  const run: Record<WorkerVariant, () => unknown> = {
    'one-thread': () => inferOnThisThread(batch),
    copy,
    transfer,
    pol: () => rig.pool.infer(batch),
  };
  const [first = [0, 1]] = blocks;
  const taskRows = first[1] - first[0];
  return {
    batch,
    run,
    payloadPerTask: (rows * 4 * (features + classes)) / blocks.length,
    async results() {
      const out: Partial<Record<WorkerVariant, Float32Array>> = {};
      for (const variant of workerVariants) {
        batch.y.data.fill(Number.NaN);
        copyY.fill(Number.NaN);
        transferY.fill(Number.NaN);
        const pending = run[variant]();
        if (pending instanceof Promise) await pending;
        const y = variant === 'copy' ? copyY : variant === 'transfer' ? transferY : batch.y.data;
        out[variant] = Float32Array.from(y);
      }
      return out as Record<WorkerVariant, Float32Array>;
    },
    copies: () => {
      const rowsIn = structuredClone(x.slice(0, taskRows * features));
      copyY.set(structuredClone(copyY.subarray(0, taskRows * classes)), 0);
      return rowsIn;
    },
  };
}

const copiesLabel = 'copying one task’s rows in and out, alone on the main thread (slice, structured clone both ways)';

/** The copies' share of a task of the copying pool: one task's copies, timed alone, against that pool's time per batch. */
export function copiesShare(copies: Measurement, copyPool: Measurement): number {
  return copies.timeNs / copyPool.timeNs;
}

/** Whether two float32 arrays hold the same bits. */
function sameBits(a: Float32Array, b: Float32Array): boolean {
  if (a.length !== b.length) return false;
  const x = new Uint32Array(a.buffer, a.byteOffset, a.length);
  const y = new Uint32Array(b.buffer, b.byteOffset, b.length);
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}

/** Each batch's time, in ns, over `batches` batches. */
async function timeBatches(op: () => unknown, batches: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < batches; i++) {
    const t0 = performance.now();
    const pending = op();
    if (pending instanceof Promise) await pending;
    times.push((performance.now() - t0) * 1e6);
  }
  return times;
}

/** The workers suite: a section per size. */
export async function workersSuite(run: RunOptions): Promise<SuiteResult> {
  const measurements: Measurement[] = [];
  const comparisons: Comparison[] = [];
  const rig = await openRig();
  try {
    const largest = Math.max(...workersSizes);
    const pays: number[] = [];
    for (const rows of workersSizes) {
      const section = workersSection(rows);
      run.log(section);
      const ops = workerOps(rig, rows);
      // Every variant computes the one-thread Y, bit for bit.
      const results = await ops.results();
      for (const variant of workerVariants) {
        if (!sameBits(results[variant], results['one-thread']))
          throw new Error(`workers, ${rows} rows: ${variant} differs from one thread`);
      }
      // Warm up, and size the rounds to about 250 ms of each variant (a tenth of that in quick mode).
      const perBatch: Record<WorkerVariant, number> = { 'one-thread': 0, copy: 0, transfer: 0, pol: 0 };
      for (const variant of workerVariants) {
        await timeBatches(ops.run[variant], run.quick ? 2 : 20);
        perBatch[variant] = median(await timeBatches(ops.run[variant], run.quick ? 2 : 10));
      }
      const rounds = run.quick ? 1 : 6;
      const budgetNs = run.quick ? 25e6 : 250e6;
      const means: Record<WorkerVariant, number[]> = { 'one-thread': [], copy: [], transfer: [], pol: [] };
      const all: Record<WorkerVariant, number[]> = { 'one-thread': [], copy: [], transfer: [], pol: [] };
      for (let r = 0; r < rounds; r++) {
        // Rotated, so that no variant always follows the same one.
        for (let j = 0; j < workerVariants.length; j++) {
          const variant = workerVariants[(j + r) % workerVariants.length] as WorkerVariant;
          const batches = Math.max(3, Math.min(20_000, Math.round(budgetNs / perBatch[variant])));
          const times = await timeBatches(ops.run[variant], batches);
          means[variant].push(times.reduce((a, b) => a + b, 0) / times.length);
          all[variant].push(...times);
        }
      }
      const byVariant = {} as Record<WorkerVariant, Measurement>;
      for (const variant of workerVariants) {
        const count = run.quick ? 2 : Math.max(4, Math.min(400, Math.round(50e6 / perBatch[variant])));
        const bytes = await bytesPerAwaitedOp(ops.run[variant], count);
        const pooled = variant !== 'one-thread';
        const m: Measurement = {
          id: `workers.${variant}.${rows}`,
          section,
          label: labels[variant],
          pol: variant === 'pol',
          unit: 'batch',
          timeNs: median(means[variant]),
          p50Ns: median(all[variant]),
          bytesPerOp: bytes,
          ops: all[variant].length,
          ...(pooled
            ? {
                tasksPerOp: splitRows(rows, WORKER_THREADS).length,
                copiedPerTask: variant === 'pol' ? 0 : ops.payloadPerTask,
              }
            : {}),
        };
        run.log(
          `  ${m.label.padEnd(64)} ${formatNs(m.timeNs).padStart(10)}  ${formatBytes(m.bytesPerOp).padStart(10)} / batch` +
            (pooled ? `, ${formatBytes(m.copiedPerTask ?? 0)} copied / task` : ''),
        );
        byVariant[variant] = m;
        measurements.push(m);
      }
      const { 'one-thread': one, copy, transfer, pol } = byVariant;
      // What the copies of one task cost, timed alone on the main thread (mitata), against the copying pool's batch.
      const copies: Measurement = {
        id: `workers.copies.${rows}`,
        section,
        label: copiesLabel,
        pol: false,
        unit: 'batch',
        timeNs: (await timeOp(ops.copies, run.quick)).mean,
        p50Ns: Number.NaN,
        bytesPerOp: await bytesPerOp(ops.copies, {
          ops: run.quick ? 16 : 200,
          maxOps: run.quick ? 64 : 2000,
          repeats: run.quick ? 1 : 3,
        }),
        ops: 1,
      };
      measurements.push({ ...copies, p50Ns: copies.timeNs });
      const share = copiesShare(copies, copy);
      run.log(
        `  copying one task's rows in and out: ${formatNs(copies.timeNs)}, ${(100 * share).toFixed(1)}% of the copying pool's batch`,
      );
      if (pol.timeNs < one.timeNs) pays.push(rows);
      comparisons.push(
        compare(pol, one, rows === largest ? { kind: 'faster-at-least', value: 1.7 } : undefined, 'speed'),
        compare(pol, copy, { kind: 'copied-at-most', bytes: 0 }, 'speed'),
        // The target against the copies, where they take at least a fifth of the copying pool's batch.
        ...(share >= WORKERS_COPIES_SHARE ? [compare(pol, copy, { kind: 'faster-at-least', value: 1.3 })] : []),
        compare(pol, transfer, undefined, 'speed'),
        compare(copy, one, undefined, 'speed'),
        compare(transfer, one, undefined, 'speed'),
      );
    }
    run.log(
      pays.length === 0
        ? '  the pool never beat one thread at these sizes'
        : `  the pool beat one thread from ${Math.min(...pays).toLocaleString('en-US')} rows up (at: ${pays.join(', ')})`,
    );
  } finally {
    await rig.close();
  }
  return { measurements, comparisons };
}
