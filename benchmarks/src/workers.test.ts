/**
 * The workers suite: its four ways of running the node-workers example's step compute the same Y,
 * bit for bit, at every size; what each copies per task is what it is said to copy; and the suite,
 * in quick mode, produces every row and its targets. Nothing about timing is asserted.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Measurement, SuiteResult } from './model.js';
import {
  copiesShare,
  openRig,
  WORKERS_COPIES_SHARE,
  type WorkersRig,
  workerOps,
  workersSizes,
  workersSuite,
  workerVariants,
} from './workers.js';

describe('the four ways', () => {
  let rig: WorkersRig;
  beforeAll(async () => {
    rig = await openRig();
  }, 60_000);
  afterAll(async () => {
    await rig?.close();
  });

  test.each(workersSizes.map((rows) => [rows]))('compute the one-thread Y bit for bit, %i rows', async (rows) => {
    const ops = workerOps(rig, rows);
    const results = await ops.results();
    const bits = (a: Float32Array) => Array.from(new Uint32Array(a.buffer, a.byteOffset, a.length));
    const reference = bits(results['one-thread']);
    expect(reference.length).toBe(rows * 10);
    for (const variant of workerVariants) expect(bits(results[variant]), variant).toEqual(reference);
    // A task's payload: its rows of X in, its rows of Y out, float32.
    expect(ops.payloadPerTask).toBe((rows * 4 * (64 + 10)) / Math.min(2, rows));
  });
});

describe('the suite, in quick mode', () => {
  let result: SuiteResult;
  const log: string[] = [];
  beforeAll(async () => {
    result = await workersSuite({ quick: true, log: (line) => log.push(line) });
  }, 180_000);

  const find = (id: string): Measurement => {
    const m = result.measurements.find((x) => x.id === id);
    if (m === undefined) throw new Error(`no measurement ${id}`);
    return m;
  };

  test('produces every row, with finite figures, and the bytes each way copies per task', () => {
    for (const rows of workersSizes) {
      for (const variant of [...workerVariants, 'copies']) {
        const m = find(`workers.${variant}.${rows}`);
        expect(Number.isFinite(m.timeNs) && m.timeNs > 0, m.id).toBe(true);
        expect(Number.isFinite(m.bytesPerOp), m.id).toBe(true);
      }
      expect(find(`workers.pol.${rows}`).copiedPerTask).toBe(0);
      const payload = (rows * 4 * 74) / 2;
      expect(find(`workers.copy.${rows}`).copiedPerTask).toBe(payload);
      expect(find(`workers.transfer.${rows}`).copiedPerTask).toBe(payload);
      expect(find(`workers.one-thread.${rows}`).copiedPerTask).toBeUndefined();
      expect(find(`workers.pol.${rows}`).tasksPerOp).toBe(2);
    }
  });

  test("has the issue's targets: 0 bytes copied at every size, 1.7× one thread at the largest, 1.3× the copies where they are a fifth of a batch", () => {
    const targeted = result.comparisons.filter((c) => c.target !== undefined);
    const largest = Math.max(...workersSizes);
    const copiedTargets = targeted.filter((c) => c.target?.kind === 'copied-at-most');
    expect(copiedTargets.map((c) => c.subject)).toEqual(workersSizes.map((rows) => `workers.pol.${rows}`));
    expect(copiedTargets.every((c) => c.met === true)).toBe(true);
    const oneThread = targeted.filter((c) => c.peer.startsWith('workers.one-thread'));
    expect(oneThread.map((c) => [c.subject, c.target])).toEqual([
      [`workers.pol.${largest}`, { kind: 'faster-at-least', value: 1.7 }],
    ]);
    const againstCopies = targeted.filter((c) => c.target?.kind === 'faster-at-least' && c.peer.startsWith('workers.copy.'));
    const due = workersSizes.filter(
      (rows) => copiesShare(find(`workers.copies.${rows}`), find(`workers.copy.${rows}`)) >= WORKERS_COPIES_SHARE,
    );
    expect(againstCopies.map((c) => c.subject)).toEqual(due.map((rows) => `workers.pol.${rows}`));
    expect(log.some((line) => line.includes("of the copying pool's batch"))).toBe(true);
  });
});
