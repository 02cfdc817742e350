import { availableParallelism } from 'node:os';
import { describeSharedSlab, freeRegion } from '@pol/arena';
import { Piscina } from 'piscina';
import { type Batch, DATA_REGION } from './batch.js';
import { dataBounds, type Identity, identities } from './identity.js';
import { checkTask, type DataBounds, splitRows, type Task } from './task.js';
import type { Broadcast, HeapReading, WorkerData, WorkerReport } from './worker.js';

export interface PoolOptions {
  /** Worker threads (default: the machine's cores). The slab needs a region for each, and one for the data. */
  readonly threads?: number;
  /** The worker module (default: `worker.js` beside this file). */
  readonly workerFile?: URL;
}

/** A worker region freed by the main thread after its holder exited. */
export interface FreedRegion {
  readonly region: number;
  readonly threadId: number;
}

/** Bytes a steady task allocates in one worker, measured over a run of batches. */
export interface WorkerBytes {
  readonly region: number;
  readonly tasks: number;
  /** Heap growth per task over the run, piscina's handling of each task included (NaN when a collection ran during every run). */
  readonly perTask: number;
  /** The same for a task that is sent the same message and does nothing with it: piscina's share. */
  readonly emptyPerTask: number;
}

/** A piscina pool whose workers each hold a region of one shared slab. */
export interface WorkerPool {
  readonly threads: number;
  readonly slab: SharedArrayBuffer;
  /** The piscina pool itself. */
  readonly piscina: Piscina;
  /** Every row of `batch`, one block per worker, computed into its Y; resolves to the region that computed each block. */
  infer(batch: Batch): Promise<readonly number[]>;
  /** One task, checked here first (a `RangeError` for a task naming bytes outside the data region, before anything is sent). */
  run(task: Task): Promise<number>;
  /** Each worker's account of its arena (one probe per worker), in the order of their regions. */
  report(): Promise<readonly WorkerReport[]>;
  /** Each worker region's identity block, read in place: no message. */
  identities(): readonly Identity[];
  /**
   * Tasks to measure with: for each worker's block of `batch`, its first `rows` rows (short tasks, so
   * that a measurement can run thousands of them).
   */
  probeTasks(batch: Batch, rows: number): readonly Task[];
  /**
   * The heap each worker's steady tasks allocate (with `--expose-gc`): after `5 × batches` rounds of
   * `tasks` (all at once) to warm up, `batches` rounds between two readings in every worker, and the
   * same with empty tasks.
   */
  workerBytes(tasks: readonly Task[], batches: number): Promise<readonly WorkerBytes[]>;
  /** The bytes a task's own work allocates in each worker, piscina aside (with `--expose-gc`): `tasks[i]` run `repeats` times in worker i. */
  bodyBytes(tasks: readonly Task[], repeats: number): Promise<readonly number[]>;
  /** Regions freed so far because their holder exited. */
  readonly freed: readonly FreedRegion[];
  /** Errors piscina reported outside any task. */
  readonly errors: readonly unknown[];
  /** Stop the workers; every worker region is free when this resolves. */
  close(): Promise<void>;
}

/**
 * Start `threads` workers over `slab`, whose data region this thread must have claimed already (so
 * that no worker takes it), and wait until each has claimed a region of its own.
 *
 * A worker that exits (it crashed, or piscina replaced or stopped it) leaves its region claimed: no
 * code of its own runs when it is terminated. The pool hears each worker's `exit` event and frees
 * the region whose identity block names that thread, so that the worker piscina starts in its place
 * can claim it.
 */
export async function openPool(slab: SharedArrayBuffer, options: PoolOptions = {}): Promise<WorkerPool> {
  const layout = describeSharedSlab(slab);
  const threads = options.threads ?? Math.max(1, availableParallelism());
  if (layout.claimed[DATA_REGION] !== true) {
    throw new Error(
      `openPool: claim the data region (region ${DATA_REGION}) before starting the workers, or one of them takes it`,
    );
  }
  if (layout.regions < threads + 1) {
    throw new Error(
      `openPool: ${threads} workers need ${threads + 1} regions (one each, and the data's), the slab has ${layout.regions}`,
    );
  }
  const bounds: DataBounds = dataBounds(slab);
  const gate = new SharedArrayBuffer(4);
  const gateWord = new Int32Array(gate);
  const workerData: WorkerData = { slab, gate };
  const piscina = new Piscina({
    filename: (options.workerFile ?? new URL('./worker.js', import.meta.url)).href,
    minThreads: threads,
    maxThreads: threads,
    // Workers live as long as the pool: a region is claimed once per worker, not per task.
    idleTimeout: Number.POSITIVE_INFINITY,
    workerData,
  });
  const freed: FreedRegion[] = [];
  const errors: unknown[] = [];
  piscina.on('error', (error: unknown) => errors.push(error));
  piscina.on('workerCreate', (worker: { id: number }) => {
    // The thread's id now: a Worker reads -1 once it has exited.
    const id = worker.id;
    const thread = piscina.threads.find((t) => t.threadId === id);
    thread?.once('exit', () => {
      for (const held of identities(slab)) {
        if (held.threadId === id && freeRegion(slab, held.region)) freed.push({ region: held.region, threadId: id });
      }
    });
  });

  /** Run `name` once on every worker, each call waiting for the others, with the arguments `args(i)`. */
  const broadcast = <R>(name: string, args: (i: number) => object = () => ({})): Promise<R[]> => {
    Atomics.store(gateWord, 0, 0);
    const calls: Promise<R>[] = [];
    for (let i = 0; i < threads; i++) {
      const probe: Broadcast = { workers: threads, ...args(i) };
      calls.push(piscina.run(probe, { name }));
    }
    return Promise.all(calls);
  };

  // The task of each block of a batch, made and checked once per batch.
  const tasksOf = new WeakMap<Batch, readonly Task[]>();
  const blocks = (batch: Batch): readonly Task[] => {
    let tasks = tasksOf.get(batch);
    if (tasks === undefined) {
      tasks = splitRows(batch.shape.rows, threads).map(([start, end]) => batch.task(start, end));
      for (const task of tasks) checkTask(task, bounds);
      tasksOf.set(batch, tasks);
    }
    return tasks;
  };

  const pool: WorkerPool = {
    threads,
    slab,
    piscina,
    infer(batch) {
      const tasks = blocks(batch);
      const runs: Promise<number>[] = [];
      for (const task of tasks) runs.push(piscina.run(task));
      return Promise.all(runs);
    },
    async run(task) {
      checkTask(task, bounds);
      return piscina.run(task);
    },
    report: async () => (await broadcast<WorkerReport>('report')).sort((a, b) => a.region - b.region),
    identities: () => identities(slab),
    probeTasks(batch, rows) {
      return blocks(batch).map((t) => batch.task(t.start, Math.min(t.end, t.start + rows)));
    },
    async workerBytes(tasks, batches) {
      // Per worker, runs of `batches` batches, each between a full collection and a reading; the
      // least of three clean runs (a collection during a run voids it). The same with empty tasks
      // (one per worker per batch) says what piscina's handling of a task allocates by itself.
      const measure = async (run: () => Promise<unknown>): Promise<Map<number, HeapReading & { perTask: number }>> => {
        const least = new Map<number, HeapReading & { perTask: number }>();
        for (let round = 0; round < 3; round++) {
          const started = await broadcast<boolean>('heapStart');
          for (let i = 0; i < batches; i++) await run();
          for (const r of await broadcast<HeapReading>('heapEnd')) {
            const clean = started.every(Boolean) && r.collections === 0 && r.tasks > 0;
            const perTask = clean ? Math.max(0, r.bytes) / r.tasks : Number.NaN;
            const best = least.get(r.region);
            if (best === undefined || Number.isNaN(best.perTask) || perTask < best.perTask)
              least.set(r.region, { ...r, perTask });
          }
        }
        return least;
      };
      for (const task of tasks) checkTask(task, bounds);
      const runTasks = () => Promise.all(tasks.map((task) => piscina.run(task)));
      // The same messages, to a task that does nothing with them.
      const empty = () => Promise.all(tasks.map((task) => piscina.run(task, { name: 'empty' })));
      for (let i = 0; i < 5 * batches; i++) await runTasks();
      const forward = await measure(runTasks);
      const empties = await measure(empty);
      return [...forward.values()]
        .sort((a, b) => a.region - b.region)
        .map((r) => ({
          region: r.region,
          tasks: r.tasks,
          perTask: r.perTask,
          emptyPerTask: empties.get(r.region)?.perTask ?? Number.NaN,
        }));
    },
    bodyBytes(tasks, repeats) {
      for (const task of tasks) checkTask(task, bounds);
      return broadcast<number>('bodyBytes', (i) => ({ task: tasks[i % tasks.length], repeats }));
    },
    freed,
    errors,
    async close() {
      await piscina.destroy();
      const still = describeSharedSlab(slab).claimed.filter((claimed, region) => claimed && region !== DATA_REGION).length;
      if (still > 0) throw new Error(`openPool: ${still} worker regions are still claimed after the pool closed`);
    },
  };
  // Every worker has started and claimed its region once each has answered a probe.
  await pool.report();
  return pool;
}
