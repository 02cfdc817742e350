/**
 * How everything is measured.
 *
 * - Time: mitata's `measure` (batches of calls between two clock reads, so that the clock's own cost
 *   is amortized; samples trimmed of their extremes; mean and median reported). GPU steps and the
 *   training loop are timed with plain loops instead (see `timeLoop`), because they must drain the
 *   GPU queue between batches or count collections over a fixed number of steps.
 * - Bytes per operation: the growth of `heapUsed + arrayBuffers` (`process.memoryUsage()`) over a
 *   batch of operations run right after a full collection (`--expose-gc`), with no collection in
 *   between: a collection during the batch (counted by `gcWindow`) voids the batch, which is redone
 *   smaller. The smallest of three clean batches is kept, less what an empty batch shows.
 * - Collections: counted by `gcWindow` (node:v8's GCProfiler) over the operations.
 */
import { performance } from 'node:perf_hooks';
import { GCProfiler } from 'node:v8';
import { do_not_optimize, measure } from 'mitata';

// --- garbage collections ---------------------------------------------------------------------

/**
 * Counts the garbage collections that run between `gcWindow()` and `stop()`, synchronously, with
 * node:v8's GCProfiler (one record per collection, written by V8's GC callbacks). A
 * PerformanceObserver on `gc` entries would do too, but its entries arrive asynchronously and
 * late: two event-loop turns after a training loop it had delivered 8 of 58 collections.
 */
export function gcWindow(): { stop(): number } {
  const profiler = new GCProfiler();
  profiler.start();
  return { stop: () => profiler.stop().statistics.length };
}

const exposedGc = (globalThis as { gc?: () => void }).gc;

/** Whether node runs with `--expose-gc` (bytes per operation are exact only then). */
export const gcExposed = exposedGc !== undefined;

/**
 * A full collection, then a wait until the ArrayBuffer sweeper (which frees the backing stores the
 * collection found dead, on another thread) has finished, so that nothing is freed during the next
 * batch.
 */
export async function quiesce(): Promise<void> {
  exposedGc?.();
  let last = process.memoryUsage().arrayBuffers;
  for (let i = 0; i < 40; i++) {
    await new Promise<void>((resolve) => setTimeout(resolve, 5));
    const now = process.memoryUsage().arrayBuffers;
    if (now === last) return;
    last = now;
  }
}

// --- bytes per operation -----------------------------------------------------------------------

function footprint(): number {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

const sink: unknown[] = new Array(64).fill(undefined);

function batch(op: () => unknown, count: number): void {
  for (let i = 0; i < count; i++) sink[i & 63] = op();
}

export interface BytesOptions {
  /** Operations in the first batch; later batches are sized to allocate about `budget` bytes. */
  readonly ops: number;
  /** Bytes a batch should allocate at most (so that no collection interrupts it). Default 1 MiB. */
  readonly budget?: number;
  /** Fewest operations in a batch. Default 8. */
  readonly minOps?: number;
  /** Most operations in a batch. Default 100,000. */
  readonly maxOps?: number;
  /** Clean batches to take the smallest of. Default 3. */
  readonly repeats?: number;
  /** Run between batches, outside the measurement (to drain a GPU queue, say). */
  readonly between?: () => Promise<void>;
}

/** One batch: bytes it grew the footprint by, or NaN when a collection ran during it. */
async function growth(op: () => unknown, count: number): Promise<number> {
  await quiesce();
  const window = gcWindow();
  const before = footprint();
  batch(op, count);
  const after = footprint();
  const collections = window.stop();
  const grew = after - before;
  return collections > 0 || grew < 0 ? Number.NaN : grew;
}

let fixedCost: number | undefined;

/**
 * What a batch of operations that allocate nothing still shows: the measurement's own allocations
 * (the objects `process.memoryUsage()` returns). Subtracted from every batch.
 */
async function measurementCost(): Promise<number> {
  if (fixedCost !== undefined) return fixedCost;
  const nothing = () => undefined;
  let least = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 6; i++) {
    const grew = await growth(nothing, 1000);
    if (!Number.isNaN(grew)) least = Math.min(least, grew);
  }
  fixedCost = Number.isFinite(least) ? least : 0;
  return fixedCost;
}

/**
 * Bytes allocated per call of `op` (JavaScript heap plus ArrayBuffer backing stores), measured over
 * batches with no garbage collection in them; when no clean batch can be had, over one batch
 * across its collections (`growthAcrossCollections`).
 */
export async function bytesPerOp(op: () => unknown, options: BytesOptions): Promise<number> {
  const budget = options.budget ?? 1 << 20;
  const minOps = options.minOps ?? 8;
  const maxOps = options.maxOps ?? 100_000;
  const repeats = options.repeats ?? 3;
  const fixed = await measurementCost();
  // A first batch, not counted: it warms up the loop and sizes the next ones.
  let count = Math.min(maxOps, Math.max(minOps, options.ops));
  batch(op, count);
  await options.between?.();
  let best = Number.POSITIVE_INFINITY;
  let clean = 0;
  for (let attempt = 0; attempt < repeats + 8 && clean < repeats; attempt++) {
    const grew = await growth(op, count);
    await options.between?.();
    if (Number.isNaN(grew)) {
      count = Math.max(minOps, count >> 1);
      continue;
    }
    clean++;
    const perOp = Math.max(0, grew - fixed) / count;
    best = Math.min(best, perOp);
    // Size the next batch to the budget.
    count = Math.max(minOps, Math.min(maxOps, perOp > 0 ? Math.floor(budget / perOp) : maxOps));
  }
  if (clean > 0) return best;
  // No batch ran without a collection, even of the fewest operations: one operation allocates more
  // than the young generation holds (a TensorFlow.js step on the larger model makes megabytes).
  // Count one batch across its collections instead.
  return Math.max(0, (await growthAcrossCollections(() => batch(op, minOps))) - fixed) / minOps;
}

/**
 * One batch's growth of the heap plus ArrayBuffers, plus what each collection during it freed of
 * the heap (node:v8's GCProfiler records the used heap before and after each): the heap's
 * allocations, wherever collections fell. The ArrayBuffers are counted by their growth alone,
 * which a collection can shrink, so that part is a lower bound.
 */
async function growthAcrossCollections(run: () => unknown): Promise<number> {
  await quiesce();
  const profiler = new GCProfiler();
  profiler.start();
  const before = footprint();
  await run();
  const after = footprint();
  let freed = 0;
  for (const gc of profiler.stop().statistics) {
    freed += gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize;
  }
  return after - before + freed;
}

/** Call `op` `n` times, each call awaited before the next. */
async function awaitEach(op: () => unknown, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    // An operation that returns no promise is not awaited: awaiting it would allocate what it does not.
    const pending = op();
    if (pending instanceof Promise) await pending;
  }
}

/** Growth of the heap plus ArrayBuffers over `n` calls awaited one after the other, read right after a full collection; NaN when a collection ran during them. */
async function awaitedGrowth(op: () => unknown, n: number): Promise<number> {
  await quiesce();
  const window = gcWindow();
  const before = footprint();
  await awaitEach(op, n);
  const grew = footprint() - before;
  return window.stop() > 0 || grew < 0 ? Number.NaN : grew;
}

/**
 * Bytes per call, as `bytesPerOp` measures a synchronous operation, for an asynchronous one
 * (each call awaited before the next): runs of `count` calls (halved after a run a collection
 * voided), the least of `repeats` clean runs (three by default), less what a run shows with
 * nothing to do (the readings themselves); when no run is clean, one call across its collections
 * (`growthAcrossCollections`).
 * What the awaits allocate (a promise, its reactions) is counted, and so is whatever else runs
 * while they wait (Dawn's bindings allocate as they poll a pending map or submit): the caller
 * pays it.
 */
export async function bytesPerAwaitedOp(op: () => unknown, count: number, repeats = 3): Promise<number> {
  let fixed = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 3; i++) {
    const grew = await awaitedGrowth(() => undefined, 1);
    if (!Number.isNaN(grew)) fixed = Math.min(fixed, grew);
  }
  if (!Number.isFinite(fixed)) fixed = 0;
  let n = count;
  let best = Number.NaN;
  let clean = 0;
  for (let attempt = 0; attempt < repeats + 8 && clean < repeats; attempt++) {
    const grew = await awaitedGrowth(op, n);
    if (Number.isNaN(grew)) {
      n = Math.max(1, n >> 1);
      continue;
    }
    clean++;
    const perCall = Math.max(0, grew - fixed) / n;
    if (!(perCall >= best)) best = perCall;
  }
  if (clean > 0) return best;
  // Not even one call ran without a collection (a long wait on Dawn allocates as it polls): count
  // one call across its collections.
  return Math.max(0, (await growthAcrossCollections(() => awaitEach(op, 1))) - fixed);
}

// --- time ----------------------------------------------------------------------------------------

export interface Timing {
  /** Mean nanoseconds per call. */
  readonly mean: number;
  /** Median nanoseconds per call. */
  readonly p50: number;
  /** Calls timed. */
  readonly ops: number;
}

/** The subset of mitata's options used here. */
interface MitataOptions {
  gc?: boolean;
  min_samples?: number;
  max_samples?: number;
  min_cpu_time?: number;
  warmup_samples?: number;
  batch_samples?: number;
  batch_unroll?: number;
}

/** mitata's options for a full or a quick run. */
function mitataOptions(quick: boolean, minCpuMs: number | undefined): MitataOptions {
  const gc = exposedGc === undefined ? { gc: false } : {};
  if (quick) {
    return { ...gc, min_samples: 2, max_samples: 4, min_cpu_time: 1e5, warmup_samples: 1, batch_samples: 32, batch_unroll: 1 };
  }
  return minCpuMs === undefined ? gc : { ...gc, min_cpu_time: minCpuMs * 1e6 };
}

/**
 * Time `op` with mitata: nanoseconds per call. `op`'s result is passed to `do_not_optimize`, so
 * the work it does cannot be optimized away. In full mode the op is first warmed up for about
 * 50 ms so that the optimizing compiler has seen it.
 */
export async function timeOp(op: () => unknown, quick: boolean, minCpuMs?: number): Promise<Timing> {
  if (!quick) warmUp(op, 50);
  const stats = await measure(() => do_not_optimize(op()), mitataOptions(quick, minCpuMs));
  return { mean: stats.avg, p50: stats.p50, ops: stats.ticks };
}

/** Call `op` for about `ms` milliseconds (at most 100,000 calls). */
export function warmUp(op: () => unknown, ms: number): void {
  const end = performance.now() + ms;
  for (let i = 0; i < 100_000; i++) {
    sink[i & 63] = op();
    if ((i & 15) === 0 && performance.now() > end) break;
  }
}

/** The median of some numbers (NaN for none). */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? (s[mid] ?? Number.NaN) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
}
