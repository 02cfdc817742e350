import fc from 'fast-check';
import { expect, test } from 'vitest';
import { normal, seededRandom } from './random.js';
import { rowCount, rowLength, rowsOf } from './types.js';

test('property: the same seed gives the same sequence, in [0, 1)', () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 2 ** 32 - 1 }), (seed) => {
      const a = seededRandom(seed);
      const b = seededRandom(seed);
      for (let i = 0; i < 20; i++) {
        const v = a();
        expect(v).toBe(b());
        expect(v).toBeGreaterThanOrEqual(0);
        expect(v).toBeLessThan(1);
      }
    }),
  );
});

test('different seeds give different sequences', () => {
  const first = (seed: number) => Array.from({ length: 4 }, seededRandom(seed));
  expect(first(1)).not.toEqual(first(2));
});

test('normal samples have about zero mean and unit variance', () => {
  const random = seededRandom(9);
  const xs = Array.from({ length: 20_000 }, () => normal(random));
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const variance = xs.reduce((a, b) => a + (b - mean) ** 2, 0) / xs.length;
  expect(Math.abs(mean)).toBeLessThan(0.03);
  expect(Math.abs(variance - 1)).toBeLessThan(0.05);
});

test('rowsOf: the last dim is the row, the others multiply into rows', () => {
  expect(rowsOf({ dims: [2, 3, 4] })).toEqual({ rows: 6, cols: 4 });
  expect(rowsOf({ dims: [5] })).toEqual({ rows: 1, cols: 5 });
  expect(rowsOf({ dims: [] })).toEqual({ rows: 1, cols: 1 });
  expect(rowsOf({ dims: [3, 0] })).toEqual({ rows: 3, cols: 0 });
  for (const dims of [[2, 3, 4], [5], [], [3, 0]]) {
    expect([rowCount({ dims }), rowLength({ dims })]).toEqual([rowsOf({ dims }).rows, rowsOf({ dims }).cols]);
  }
});
