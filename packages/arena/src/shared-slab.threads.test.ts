/// <reference types="node" />
// Shared slabs across real threads (node:worker_threads): races for one region, regions that never
// overlap, and workers that exit or throw while holding a claim. The workers run the built package
// (dist/), as a user's workers would.
import { existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ContendedError, claimRegion, createSharedSlab, describeSharedSlab, freeRegion } from './index.js';

const workerFile = new URL('./test-support/claim-worker.mjs', import.meta.url);
const REGIONS = 3;
const REGION_BYTES = 4096;
const WORKERS = 4;

interface Reply {
  readonly kind: string;
  readonly id: number;
  readonly won?: boolean;
  readonly code?: string;
  readonly epoch?: number;
  readonly byteOffset?: number;
}

/** A worker and a queue of its replies. */
class Thread {
  readonly worker: Worker;
  readonly #replies: Reply[] = [];
  readonly #waiting: ((reply: Reply) => void)[] = [];

  constructor(slab: SharedArrayBuffer, control: SharedArrayBuffer, id: number) {
    this.worker = new Worker(workerFile, { workerData: { slab, control, id } });
    this.worker.on('message', (reply: Reply) => {
      const next = this.#waiting.shift();
      if (next === undefined) this.#replies.push(reply);
      else next(reply);
    });
  }

  next(): Promise<Reply> {
    const reply = this.#replies.shift();
    if (reply !== undefined) return Promise.resolve(reply);
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  async ask(message: object): Promise<Reply> {
    this.worker.postMessage(message);
    return this.next();
  }
}

const exited = (worker: Worker) =>
  new Promise<{ code: number; error: unknown }>((resolve) => {
    let error: unknown;
    worker.on('error', (e) => {
      error = e;
    });
    worker.on('exit', (code) => resolve({ code, error }));
  });

let slab: SharedArrayBuffer;
let control: SharedArrayBuffer;
let threads: Thread[];
let round = 0;

beforeAll(() => {
  if (!existsSync(new URL('../dist/index.js', import.meta.url))) {
    throw new Error(
      'These tests run the built package in worker threads: build @pol/arena first (pnpm --filter @pol/arena build).',
    );
  }
  slab = createSharedSlab({ regions: REGIONS, regionByteLength: REGION_BYTES });
  control = new SharedArrayBuffer(4);
  threads = Array.from({ length: WORKERS }, (_, id) => new Thread(slab, control, id + 1));
});

afterAll(async () => {
  await Promise.all(threads.map((t) => t.worker.terminate()));
});

const regionBytes = (region: number) => {
  const at = describeSharedSlab(slab).byteOffsets[region] as number;
  return new Uint8Array(slab, at, REGION_BYTES);
};

describe('claims across threads', () => {
  test('hundreds of races: of the workers claiming one region at once, exactly one wins', async () => {
    const gate = new Int32Array(control);
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: REGIONS - 1 }),
        fc.subarray(
          Array.from({ length: WORKERS }, (_, i) => i),
          { minLength: 2 },
        ),
        async (region, racers) => {
          round++;
          const before = describeSharedSlab(slab);
          const others = Array.from({ length: REGIONS }, (_, r) => r)
            .filter((r) => r !== region)
            .map((r) => regionBytes(r).slice());
          // Arm every racer; each says it is ready and then blocks on the gate.
          for (const i of racers) threads[i]?.worker.postMessage({ kind: 'race', region, round });
          const ready = await Promise.all(racers.map((i) => (threads[i] as Thread).next()));
          expect(ready.every((r) => r.kind === 'ready')).toBe(true);
          Atomics.store(gate, 0, round);
          Atomics.notify(gate, 0);
          const results = await Promise.all(racers.map((i) => (threads[i] as Thread).next()));
          const winners = results.filter((r) => r.won === true);
          expect(winners).toHaveLength(1);
          expect(results.filter((r) => r.won === false).every((r) => r.code === 'POL_CONTENDED')).toBe(true);
          const winner = winners[0] as Reply;
          // The winner's arena is the region's next generation, and wrote every byte of the region.
          expect(winner.epoch).toBe((before.generations[region] as number) + 1);
          expect(describeSharedSlab(slab).claimed[region]).toBe(true);
          expect(regionBytes(region).every((b) => b === winner.id)).toBe(true);
          // No other region changed.
          Array.from({ length: REGIONS }, (_, r) => r)
            .filter((r) => r !== region)
            .forEach((r, k) => {
              expect(regionBytes(r)).toEqual(others[k]);
            });
          // The winner releases; the region is free again.
          expect((await (threads[winner.id - 1] as Thread).ask({ kind: 'release' })).kind).toBe('released');
          expect(describeSharedSlab(slab).claimed[region]).toBe(false);
        },
      ),
      { numRuns: 300 },
    );
  });

  test('workers claiming side by side get distinct regions, and never touch one another’s bytes', async () => {
    const header = new Uint8Array(slab, 0, describeSharedSlab(slab).byteOffsets[0]).slice();
    const claimers = threads.slice(0, REGIONS);
    const replies = await Promise.all(claimers.map((t) => t.ask({ kind: 'claim' })));
    const offsets = replies.map((r) => r.byteOffset);
    expect(new Set(offsets).size).toBe(REGIONS);
    // The last worker finds every region claimed.
    const last = threads[REGIONS] as Thread;
    last.worker.postMessage({ kind: 'claim' });
    const refused = await exited(last.worker);
    expect(refused.error).toBeInstanceOf(Error);
    expect((refused.error as { code?: string }).code).toBe('POL_CONTENDED');
    for (const reply of replies) {
      const region = describeSharedSlab(slab).byteOffsets.indexOf(reply.byteOffset as number);
      expect(regionBytes(region).every((b) => b === reply.id)).toBe(true);
    }
    // The header's layout words are as they were (the claim words changed, by design).
    const now = new Uint8Array(slab, 0, header.length);
    expect(now.subarray(0, 24)).toEqual(header.subarray(0, 24));
    await Promise.all(claimers.map((t) => t.ask({ kind: 'release' })));
    expect(describeSharedSlab(slab).claimed).toEqual([false, false, false]);
  });
});

describe('a worker that exits or throws while holding a claim', () => {
  test.each(['exit', 'throw'] as const)(
    'its region stays claimed until freeRegion, then the next claim starts a new epoch (%s)',
    async (how) => {
      const local = createSharedSlab({ regions: 1, regionByteLength: 256 });
      const dying = new Worker(workerFile, { workerData: { slab: local, control, id: 7 } });
      const gone = exited(dying);
      dying.postMessage({ kind: 'die', how, region: 0 });
      const { code, error } = await gone;
      if (how === 'exit') expect(code).toBe(3);
      else expect((error as Error).message).toMatch(/throws while holding region 0/);
      // Nobody can claim it: the claim word still names the dead holder.
      expect(describeSharedSlab(local).claimed).toEqual([true]);
      expect(() => claimRegion(local, { region: 0 })).toThrow(ContendedError);
      // The thread that saw it exit frees it; the next holder starts a new epoch over the same bytes.
      expect(freeRegion(local, 0)).toBe(true);
      const next = claimRegion(local, { region: 0 });
      expect(next.epoch).toBe(2);
      expect(Array.from(next.alloc('uint8', [8]).data)).toEqual(new Array(8).fill(7)); // the dead holder's bytes
      next.dispose();
    },
  );
});
