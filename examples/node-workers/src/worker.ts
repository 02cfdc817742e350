/**
 * The pool's worker: piscina loads this module once per worker thread. Its top level claims the
 * first free region of the shared slab and keeps that arena for the worker's life; each task is a
 * handful of numbers naming rows of X and Y in the slab, which the worker views in place (views
 * made once per block and kept), computes with the scratch from a frame on its own region, and
 * answers with its region's index. The other exports are the probes the main thread broadcasts:
 * one call per worker, each waiting for the others (see `meet`).
 */
import { memoryUsage } from 'node:process';
import { setTimeout as sleep } from 'node:timers/promises';
import { GCProfiler, getHeapSpaceStatistics } from 'node:v8';
import { threadId } from 'node:worker_threads';
import { type Arena, ContendedError, carve, claimRegion, describeSharedSlab, watermark } from '@pol/arena';
import type { F32, Mlp } from '@pol/verbs/examples';
import { workerData } from 'piscina';
import { dataBounds, IDENTITY, IDENTITY_WORDS } from './identity.js';
import { infer } from './infer.js';
import { checkTask, type Task } from './task.js';

/** What the pool hands each worker when it starts. */
export interface WorkerData {
  /** The shared slab (a SharedArrayBuffer is shared with the worker, not copied). */
  readonly slab: SharedArrayBuffer;
  /** One int32 word the broadcasts meet on. */
  readonly gate: SharedArrayBuffer;
}

const { slab, gate } = workerData as WorkerData;
const bounds = dataBounds(slab);
const gateWord = new Int32Array(gate);

/**
 * Claim the first free region. A worker that piscina starts in place of one that died may start
 * before the main thread has seen the exit and freed the dead worker's region, so a refusal is
 * tried again for a while (10 ms apart, 2 s in all) before the worker gives up.
 */
function claimOwnRegion(): Arena<'host'> {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let attempt = 1; ; attempt++) {
    try {
      return claimRegion(slab);
    } catch (error) {
      if (!(error instanceof ContendedError) || attempt === 200) throw error;
      Atomics.wait(pause, 0, 0, 10);
    }
  }
}

/** This worker's arena, over its own region, for as long as the worker lives. */
export const arena = claimOwnRegion();
/** Which region of the slab it is. */
export const region = describeSharedSlab(slab).byteOffsets.indexOf(arena.byteOffset);
// The identity block: the arena's first carve, at the region's first byte, where the main thread reads it.
const identity = arena.alloc('int32', [IDENTITY_WORDS]).data;
identity[IDENTITY.thread] = threadId;
identity[IDENTITY.offset] = arena.offset;
identity[IDENTITY.watermark] = watermark(arena);
// Tasks handled, the empty ones included (the identity block counts the forward passes only).
let handled = 0;

// A worker ends when piscina terminates it (the pool closes, or replaces it), and then no code of
// its own runs: the main thread frees the region when it sees the exit. When the worker ends itself
// (`process.exit`), it gives the region back here, unless it exits inside a task (a frame still
// open), which leaves that to the main thread too.
process.once('exit', () => {
  if (!arena.disposed && arena.describe().openFrames === 0) arena.dispose();
});

/**
 * Views of row blocks, made on the first task that names a block and found again after: a steady
 * task makes no view. Keyed by byte offset; a different shape at the same offset replaces the view.
 */
class Blocks {
  readonly #views = new Map<number, F32>();
  readonly #outputs = new WeakMap<F32, { readonly y: F32 }>();

  rows(offset: number, rows: number, cols: number): F32 {
    const cached = this.#views.get(offset);
    if (cached !== undefined && cached.dims[0] === rows && cached.dims[1] === cols) return cached;
    if (this.#views.size >= 1024) this.#views.clear(); // a bound, for a program that never repeats a block
    const view = carve(slab, offset, 'float32', [rows, cols]);
    this.#views.set(offset, view);
    return view;
  }

  /** The same, as the verb's options: `{ y }`, the caller's own output buffer passed by name. */
  output(offset: number, rows: number, cols: number): { readonly y: F32 } {
    const y = this.rows(offset, rows, cols);
    let options = this.#outputs.get(y);
    if (options === undefined) {
      options = { y };
      this.#outputs.set(y, options);
    }
    return options;
  }
}

const inputs = new Blocks();
const outputs = new Blocks();

// The parameters, viewed once per model (the last one's offsets and dims, as numbers).
let params: Mlp | undefined;
const paramsKey = new Float64Array(7);

function parameters(t: Task): Mlp {
  const k = paramsKey;
  if (
    params !== undefined &&
    k[0] === t.w1 &&
    k[1] === t.b1 &&
    k[2] === t.w2 &&
    k[3] === t.b2 &&
    k[4] === t.features &&
    k[5] === t.hidden &&
    k[6] === t.classes
  ) {
    return params;
  }
  params = {
    layer1: { w: carve(slab, t.w1, 'float32', [t.features, t.hidden]), b: carve(slab, t.b1, 'float32', [t.hidden]) },
    layer2: { w: carve(slab, t.w2, 'float32', [t.hidden, t.classes]), b: carve(slab, t.b2, 'float32', [t.classes]) },
  };
  k.set([t.w1, t.b1, t.w2, t.b2, t.features, t.hidden, t.classes]);
  return params;
}

/** The task's work: check it, view its rows, run the forward pass into its rows of Y. */
function compute(task: Task): void {
  checkTask(task, bounds);
  const rows = task.end - task.start;
  const x = inputs.rows(task.x + 4 * task.start * task.features, rows, task.features);
  const y = outputs.output(task.y + 4 * task.start * task.classes, rows, task.classes);
  // The verb opens a frame on this worker's arena for the hidden activations and the logits, and
  // closes it when it returns or throws; softmax writes straight into the block of Y.
  infer(arena, parameters(task), x, y);
}

/** A task: compute rows `start` to `end` of the batch; answers this worker's region. */
export default function forward(task: Task): number {
  try {
    compute(task);
  } catch (error) {
    identity[IDENTITY.failed] = (identity[IDENTITY.failed] ?? 0) + 1;
    throw error;
  }
  identity[IDENTITY.tasks] = (identity[IDENTITY.tasks] ?? 0) + 1;
  handled++;
  identity[IDENTITY.watermark] = watermark(arena);
  identity[IDENTITY.offset] = arena.offset;
  return region;
}

// --- probes, broadcast by the main thread -------------------------------------------------------

/** What every probe gets: how many workers the broadcast reaches. */
export interface Broadcast {
  readonly workers: number;
}

/**
 * Wait until every worker of the broadcast has arrived here. A worker runs one task at a time, so
 * while this one waits no other probe of the broadcast can come to it: each worker gets exactly one.
 */
function meet(b: Broadcast): void {
  Atomics.add(gateWord, 0, 1);
  Atomics.notify(gateWord, 0);
  const deadline = performance.now() + 5000;
  for (;;) {
    const arrived = Atomics.load(gateWord, 0);
    if (arrived >= b.workers) return;
    if (performance.now() > deadline) {
      throw new Error(`broadcast: ${arrived} of ${b.workers} workers arrived within 5 s (a worker is busy, or gone)`);
    }
    Atomics.wait(gateWord, 0, arrived, 20);
  }
}

/** A worker's own account of its arena: what only its thread can ask (`describe()` makes an object). */
export interface WorkerReport {
  readonly region: number;
  readonly threadId: number;
  readonly tasks: number;
  readonly failed: number;
  readonly capacity: number;
  readonly offset: number;
  readonly watermark: number;
  readonly arraysCreated: number;
  readonly openFrames: number;
  readonly epoch: number;
}

export function report(b: Broadcast): WorkerReport {
  meet(b);
  const d = arena.describe();
  return {
    region,
    threadId,
    tasks: identity[IDENTITY.tasks] ?? 0,
    failed: identity[IDENTITY.failed] ?? 0,
    capacity: d.capacity,
    offset: d.offset,
    watermark: d.watermark,
    arraysCreated: d.arraysCreated,
    openFrames: d.openFrames,
    epoch: d.epoch,
  };
}

const gc = (globalThis as { gc?: () => void }).gc;

// The heap spaces JavaScript objects live in. V8 keeps compiled code and its metadata in spaces of
// their own, which grow when a compilation that ran on another thread is installed: on a loaded
// machine that can land inside a measured window, by chance, and it is no object a task made.
const OBJECT_SPACES = new Set(['new_space', 'old_space', 'new_large_object_space', 'large_object_space']);

/** The worker's JavaScript object and ArrayBuffer bytes. */
function footprint(): number {
  let bytes = memoryUsage().arrayBuffers;
  for (const space of getHeapSpaceStatistics()) if (OBJECT_SPACES.has(space.space_name)) bytes += space.space_used_size;
  return bytes;
}

/**
 * A full collection, then a wait until the ArrayBuffer sweeper (which frees what the collection
 * found dead, on another thread) is done, so that nothing is freed during the reading that follows.
 */
async function quiesce(): Promise<void> {
  gc?.();
  let last = memoryUsage().arrayBuffers;
  for (let i = 0; i < 40; i++) {
    await sleep(5);
    const now = memoryUsage().arrayBuffers;
    if (now === last) return;
    last = now;
  }
}

let heapAtStart = 0;
let tasksAtStart = 0;
let collections: GCProfiler | undefined;

/** Start a measurement of the bytes that tasks allocate in this worker: a full collection, then a reading. */
export async function heapStart(b: Broadcast): Promise<boolean> {
  meet(b);
  if (gc === undefined) return false;
  await quiesce();
  collections = new GCProfiler();
  collections.start();
  tasksAtStart = handled;
  heapAtStart = footprint();
  return true;
}

/** What the worker's heap grew by since `heapStart`, over how many tasks, and whether a collection ran between (which voids it). */
export interface HeapReading {
  readonly region: number;
  readonly tasks: number;
  readonly bytes: number;
  readonly collections: number;
}

export function heapEnd(b: Broadcast): HeapReading {
  const now = footprint();
  const tasks = handled - tasksAtStart;
  const ran = collections?.stop().statistics.length ?? Number.NaN;
  collections = undefined;
  meet(b);
  return { region, tasks, bytes: now - heapAtStart, collections: ran };
}

/** A task that does nothing with its message: what piscina's handling of a task costs on its own. */
export function empty(): number {
  handled++;
  return region;
}

/**
 * What `calls` calls of `work` grow the footprint by; NaN when a collection ran during them. The
 * reading starts after `quiesce` and as many calls again, unmeasured: a full collection can discard
 * compiled code, and V8 compiles it again some calls later, which must not fall inside the reading
 * of a longer run only.
 */
async function growth(work: () => void, calls: number): Promise<number> {
  await quiesce();
  for (let i = 0; i < calls; i++) work();
  const profiler = new GCProfiler();
  profiler.start();
  const before = footprint();
  for (let i = 0; i < calls; i++) work();
  const after = footprint();
  return profiler.stop().statistics.length > 0 ? Number.NaN : after - before;
}

/**
 * What `work` allocates per call, as the benchmarks measure it: after a warm-up (at least
 * `WARM_CALLS` calls, then a full collection and as many again: V8 settles the code of a verb's
 * call after a few thousand calls, and again after a collection that discarded some, and until
 * then a call may allocate), the least growth of three clean runs of `2 × calls` calls less the
 * least of three of `calls` calls, over `calls`: what a run costs whatever its length (the
 * readings' own objects, the loop's compilation) cancels. NaN without `--expose-gc`, or when no
 * run was clean.
 */
async function bytesPerCall(work: () => void, calls: number): Promise<number> {
  if (gc === undefined) return Number.NaN;
  const least = async (n: number): Promise<number> => {
    let best = Number.NaN;
    for (let round = 0; round < 3; round++) {
      const grew = await growth(work, n);
      if (!Number.isNaN(grew) && !(grew >= best)) best = grew;
    }
    return best;
  };
  const warm = Math.max(4 * calls, WARM_CALLS);
  for (let i = 0; i < warm; i++) work();
  await quiesce();
  for (let i = 0; i < warm; i++) work();
  const once = await least(calls);
  const twice = await least(2 * calls);
  return Math.max(0, twice - once) / calls;
}

/** The fewest warm-up calls: V8's top tier takes a few thousand calls of a small task to settle. */
const WARM_CALLS = 20_000;

let probeTask: Task | undefined;
function computeProbe(): void {
  if (probeTask !== undefined) compute(probeTask);
}

/**
 * The bytes one task's own work allocates (`compute`: the check, the views, the forward pass),
 * without piscina's messages around it: `repeats` runs of `task`, measured as `bytesPerCall` says.
 */
export async function bodyBytes(probe: Broadcast & { readonly task: Task; readonly repeats: number }): Promise<number> {
  meet(probe);
  probeTask = probe.task;
  try {
    return await bytesPerCall(computeProbe, probe.repeats);
  } finally {
    probeTask = undefined;
  }
}
