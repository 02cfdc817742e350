import { Arena, createSharedSlab, describeSharedSlab } from '@pol/arena';
import { hostArray } from '@pol/core';
import { afterEach, describe, expect, test } from 'vitest';
import {
  type Batch,
  type BatchShape,
  claimDataRegion,
  createBatch,
  createSlab,
  IDENTITY_BYTES,
  inferOnThisThread,
} from './batch.js';
import { sameBits } from './demo.js';
import { infer, scratchBytes } from './infer.js';
import { openPool, type WorkerPool } from './pool.js';
import { type Task, taskProblem } from './task.js';
import type { FaultyTask } from './test-support/faulty-worker.js';

// The workers run the built modules (`npm test` builds first), as a user's program does.
const workerFile = new URL('../dist/worker.js', import.meta.url);
const faultyWorker = new URL('../dist/test-support/faulty-worker.js', import.meta.url);

const small: BatchShape = { rows: 256, features: 64, hidden: 32, classes: 10 };

const open: { pool: WorkerPool; arena: Arena<'host'> }[] = [];

afterEach(async () => {
  for (const { pool, arena } of open.splice(0)) {
    await pool.close();
    arena.dispose();
  }
});

/** A slab, its data region claimed, a batch in it, the one-thread result, and a pool over it. */
async function setUp(shape = small, threads = 2, file = workerFile) {
  const slab = createSlab(shape, threads);
  const arena = claimDataRegion(slab);
  const batch = createBatch(arena, shape);
  inferOnThisThread(batch);
  const reference = Float32Array.from(batch.y.data);
  batch.y.data.fill(Number.NaN);
  const pool = await openPool(slab, { threads, workerFile: file });
  open.push({ pool, arena });
  return { slab, arena, batch, reference, pool };
}

/** Wait until `ok()` holds (checked every 10 ms, for 5 s at most). */
async function until(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !ok(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(ok()).toBe(true);
}

describe('results', () => {
  test('the pooled Y equals the one-thread Y bit for bit, each worker computing one block of rows', async () => {
    const { batch, reference, pool } = await setUp();
    const regions = await pool.infer(batch);
    expect(sameBits(reference, batch.y.data)).toBe(reference.length);
    // Each block went to its own worker's region, never the data region.
    expect(new Set(regions).size).toBe(2);
    expect(regions).not.toContain(0);
    // The rows are probabilities: each sums to 1.
    const first = batch.y.data.subarray(0, 10).reduce((a, b) => a + b, 0);
    expect(first).toBeCloseTo(1, 5);
  });

  test('so do three workers over an uneven split, and a second run of the same batch', async () => {
    const shape = { rows: 100, features: 48, hidden: 24, classes: 7 };
    const { batch, reference, pool } = await setUp(shape, 3);
    await pool.infer(batch);
    expect(sameBits(reference, batch.y.data)).toBe(reference.length);
    batch.y.data.fill(0);
    await pool.infer(batch);
    expect(sameBits(reference, batch.y.data)).toBe(reference.length);
    expect(pool.identities().map((i) => i.tasks)).toEqual([2, 2, 2]);
  });
});

describe('steady tasks', () => {
  test('after the first task, no worker carves a new array, moves its watermark or leaves a frame open', async () => {
    const { batch, pool } = await setUp();
    await pool.infer(batch);
    const first = await pool.report();
    for (let i = 0; i < 30; i++) await pool.infer(batch);
    const later = await pool.report();
    expect(later.map((r) => r.tasks)).toEqual([31, 31]);
    for (const r of later) {
      const before = first.find((f) => f.region === r.region);
      expect(r.arraysCreated).toBe(before?.arraysCreated);
      expect(r.watermark).toBe(before?.watermark);
      expect(r.openFrames).toBe(0);
      // Between tasks the arena holds its identity block and nothing else; the frame's scratch was above it.
      expect(r.offset).toBe(before?.offset);
      expect(r.watermark).toBeGreaterThan(r.offset);
      expect(r.watermark).toBeLessThanOrEqual(IDENTITY_BYTES + scratchBytes(128, small.hidden, small.classes));
    }
    // The identity blocks, read in place without a message, say the same.
    expect(pool.identities().map(({ region, tasks, watermark, offset }) => ({ region, tasks, watermark, offset }))).toEqual(
      later.map(({ region, tasks, watermark, offset }) => ({ region, tasks, watermark, offset })),
    );
  });

  test("a task's own work allocates nothing in its worker (measured after a full collection, with --expose-gc)", async () => {
    const { batch, pool } = await setUp();
    const bytes = await pool.bodyBytes(pool.probeTasks(batch, 1), 1000);
    expect(bytes).toHaveLength(2);
    // Nothing, on every line: less than one byte a task is no object at all.
    const bound = 1;
    for (const b of bytes) expect(b).toBeLessThan(bound);
  });

  test("through piscina a task allocates, in its worker, what piscina's handling of its message does", async () => {
    const { batch, pool } = await setUp();
    const readings = await pool.workerBytes(pool.probeTasks(batch, 1), 100);
    for (const r of readings) {
      expect(r.tasks).toBe(100);
      expect(Number.isFinite(r.perTask)).toBe(true);
      expect(Number.isFinite(r.emptyPerTask)).toBe(true);
    }
  });
});

describe('failures', () => {
  test('a task that throws mid-task rejects; its worker stays, its arena intact, and the next batch is right', async () => {
    const { batch, reference, pool } = await setUp(small, 2, faultyWorker);
    const before = pool.identities();
    const task: FaultyTask = { ...batch.task(0, 128), fault: 'throw' };
    await expect(pool.piscina.run(task)).rejects.toThrow('injected fault after rows 0 to 64');
    // Rows 0-63 were written before the throw; rows 64-127 never were.
    expect(sameBits(reference.subarray(0, 640), batch.y.data.subarray(0, 640))).toBe(640);
    expect(batch.y.data.subarray(640, 1280).every(Number.isNaN)).toBe(true);
    // The same workers, in the same regions, every frame closed.
    expect(pool.identities().map((i) => [i.region, i.threadId])).toEqual(before.map((i) => [i.region, i.threadId]));
    for (const r of await pool.report()) expect(r.openFrames).toBe(0);
    await pool.infer(batch);
    expect(sameBits(reference, batch.y.data)).toBe(reference.length);
  });

  test('a kernel that throws inside its frame (the region too small for the task) closes the frame on the way out', async () => {
    // A slab whose regions fit the data and the scratch of half the batch, not of all of it.
    const shape = { rows: 256, features: 64, hidden: 256, classes: 10 };
    const slab = createSharedSlab({ regions: 3, regionByteLength: IDENTITY_BYTES + scratchBytes(128, 256, 10) });
    const arena = claimDataRegion(slab);
    const batch = createBatch(arena, shape);
    const pool = await openPool(slab, { threads: 2, workerFile });
    open.push({ pool, arena });
    const before = await pool.report();
    // The whole batch on one worker: its hidden activations fit, their ReLU does not.
    await expect(pool.run(batch.task(0, 256))).rejects.toThrow(/is full: float32\[256, 256\] needs 262144 bytes/);
    const after = await pool.report();
    const failed = after.find((r) => r.failed === 1);
    expect(failed).toBeDefined();
    const was = before.find((r) => r.region === failed?.region);
    expect(failed?.openFrames).toBe(0);
    expect(failed?.offset).toBe(was?.offset);
    // Half the batch per worker fits; the result is the one-thread result (here from an arena of its own).
    await pool.infer(batch);
    const y = hostArray(new Float32Array(256 * 10), [256, 10]);
    infer(new Arena(new ArrayBuffer(4 << 20)), batch.params, batch.x, { y });
    expect(sameBits(y.data, batch.y.data)).toBe(y.data.length);
  });

  test('a worker that ends itself mid-task: the task rejects, its region is given back, piscina starts another that claims one', async () => {
    const { slab, batch, reference, pool } = await setUp(small, 2, faultyWorker);
    const before = new Set(pool.identities().map((i) => i.threadId));
    const task: FaultyTask = { ...batch.task(0, 128), fault: 'exit' };
    await expect(pool.piscina.run(task)).rejects.toThrow('worker exited with code: 7');
    // Outside any frame, the worker disposed its own arena on exit (or the pool freed it): either way its region is
    // free, and the worker piscina starts in its place claims one. One holder is new; the other stayed.
    const holders = () => pool.identities().map((i) => i.threadId);
    await until(() => holders().length === 2 && holders().filter((id) => !before.has(id)).length === 1);
    expect(describeSharedSlab(slab).claimed).toEqual([true, true, true]);
    await pool.infer(batch);
    expect(sameBits(reference, batch.y.data)).toBe(reference.length);
  });

  test('a worker terminated from outside (no code of its own runs): the pool frees its region on its exit', async () => {
    const { slab, batch, reference, pool } = await setUp();
    const thread = pool.piscina.threads[0];
    const id = thread?.threadId;
    await thread?.terminate();
    await until(() => pool.freed.some((f) => f.threadId === id));
    await until(() => pool.identities().length === 2);
    expect(describeSharedSlab(slab).claimed).toEqual([true, true, true]);
    const replaced = await pool.report();
    expect(replaced.map((r) => r.threadId)).not.toContain(id);
    // The region was claimed a second time: its new holder's arena starts at a new epoch.
    const freedRegion = pool.freed.find((f) => f.threadId === id)?.region;
    expect(replaced.find((r) => r.region === freedRegion)?.epoch).toBe(2);
    await pool.infer(batch);
    expect(sameBits(reference, batch.y.data)).toBe(reference.length);
  });

  test('closing the pool frees every worker region (the workers are terminated; the main thread frees their claims)', async () => {
    const slab = createSlab(small, 2);
    const arena = claimDataRegion(slab);
    const pool = await openPool(slab, { threads: 2, workerFile });
    expect(describeSharedSlab(slab).claimed).toEqual([true, true, true]);
    await pool.close();
    expect(describeSharedSlab(slab).claimed).toEqual([true, false, false]);
    expect(pool.freed.map((f) => f.region).sort()).toEqual([1, 2]);
    arena.dispose();
  });
});

describe('refusals', () => {
  let batch: Batch;
  const good = () => batch.task(0, 128);
  const bad = (change: Partial<Record<keyof Task, unknown>>) => ({ ...good(), ...change }) as Task;

  test('a task naming bytes outside the data region is refused before it is sent, with what and where', async () => {
    const s = await setUp();
    batch = s.batch;
    const end = batch.bounds.end;
    await expect(s.pool.run(bad({ x: end - 16 }))).rejects.toThrow(
      new RegExp(`refused task: X needs bytes ${end - 16} to \\d+ of the slab, outside the data region`),
    );
    await expect(s.pool.run(bad({ y: s.slab.byteLength + 4 }))).rejects.toThrow(RangeError);
    await expect(s.pool.run(bad({ w1: 2 }))).rejects.toThrow('W1 at byte 2 is not on a 4-byte boundary');
    await expect(s.pool.run(bad({ y: good().x }))).rejects.toThrow('overlaps X or a parameter');
    await expect(s.pool.run(bad({ end: 257 }))).rejects.toThrow("not a non-empty range of the batch's 256 rows");
    await expect(s.pool.run(bad({ hidden: 1.5 }))).rejects.toThrow('task.hidden must be a whole number');
    // Nothing reached a worker.
    expect(s.pool.identities().map((i) => i.failed + i.tasks)).toEqual([0, 0]);
  });

  test('the worker checks again: a bad task sent straight to piscina is refused there, and the worker carries on', async () => {
    const { pool, batch: b, reference } = await setUp();
    batch = b;
    await expect(pool.piscina.run(bad({ x: b.bounds.end }))).rejects.toThrow(/refused task: X needs bytes/);
    expect(pool.identities().reduce((n, i) => n + i.failed, 0)).toBe(1);
    await pool.infer(b);
    expect(sameBits(reference, b.y.data)).toBe(reference.length);
  });

  test('a good task has no problem; the pool refuses to start before the data region is claimed', async () => {
    const slab = createSlab(small, 2);
    const arena = claimDataRegion(slab);
    const b = createBatch(arena, small);
    expect(taskProblem(b.task(0, 256), b.bounds)).toBeUndefined();
    arena.dispose();
    await expect(openPool(slab, { threads: 2, workerFile })).rejects.toThrow('claim the data region (region 0) before');
    await expect(openPool(createSlab(small, 1), { threads: 2, workerFile })).rejects.toThrow();
  });
});
