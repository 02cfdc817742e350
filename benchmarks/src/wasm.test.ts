/**
 * The WebAssembly suite on its own, in quick mode (its figures mean nothing; no timing is
 * asserted): every row comes out, the targets are the ones the section promises, and the six ways
 * compute the same power spectrum, so they do the same work.
 */
import { loadKissFft } from 'pol-example-node-wasm/kissfft';
import { beforeAll, expect, test } from 'vitest';
import type { SuiteResult } from './model.js';
import { COPIES_SHARE, wasmOps, wasmSizes, wasmSuite } from './wasm.js';

let suite: SuiteResult;

beforeAll(async () => {
  suite = await wasmSuite({ quick: true, log: () => undefined });
}, 120_000);

test('a row per way and size, with finite figures', () => {
  const ids = suite.measurements.map((m) => m.id);
  expect(ids).toEqual(
    wasmSizes.flatMap((n) => ['pol', 'readme', 'copy', 'floor', 'arrays', 'framed'].map((way) => `wasm.${way}.${n}`)),
  );
  for (const m of suite.measurements) {
    expect(Number.isFinite(m.timeNs) && m.timeNs > 0, m.id).toBe(true);
    expect(Number.isFinite(m.bytesPerOp) && m.bytesPerOp >= 0, m.id).toBe(true);
    expect(m.pol).toBe(m.id.startsWith('wasm.pol.'));
  }
});

test("the targets: within 1.05x of the floor with 0 B a call at every size; ahead of the copies where they are over a tenth of that path's time", () => {
  for (const n of wasmSizes) {
    const time = (way: string) => suite.measurements.find((m) => m.id === `wasm.${way}.${n}`)?.timeNs ?? Number.NaN;
    const of = (peer: string) => suite.comparisons.find((c) => c.subject === `wasm.pol.${n}` && c.peer === `wasm.${peer}.${n}`);
    expect(of('floor')?.target).toEqual({ kind: 'ratio-at-most', value: 1.05, zeroBytes: true });
    const share = (time('copy') - time('floor')) / time('copy');
    expect(of('copy')?.target).toEqual(share > COPIES_SHARE ? { kind: 'faster-at-least', value: 1 } : undefined);
    expect(of('readme')?.target).toBeUndefined();
    for (const way of ['arrays', 'framed']) {
      const breakdown = suite.comparisons.find((c) => c.subject === `wasm.${way}.${n}` && c.peer === `wasm.floor.${n}`);
      expect(breakdown?.target, way).toBeUndefined();
      expect(Number.isFinite(breakdown?.ratio), way).toBe(true);
    }
  }
});

test('the six ways compute the same power spectrum, bit for bit (so they do the same work)', async () => {
  const kiss = await loadKissFft();
  for (const n of wasmSizes) {
    const ops = await wasmOps(kiss, n);
    try {
      const { pol, readme, copy, floor, arrays, framed } = ops.results();
      expect(pol?.length, `n = ${n}`).toBe((n >> 1) + 1);
      expect(readme, `n = ${n}`).toEqual(pol);
      expect(copy, `n = ${n}`).toEqual(pol);
      expect(floor, `n = ${n}`).toEqual(pol);
      expect(arrays, `n = ${n}`).toEqual(pol);
      expect(framed, `n = ${n}`).toEqual(pol);
      expect(Math.max(...(pol ?? []))).toBeGreaterThan(0);
    } finally {
      ops.close();
    }
  }
});
