import { checkpoints, type HostArray, hostArray } from '@pol/core';
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { countingSpace } from '../test-support/counting.js';
import { normal, seededRandom } from './random.js';
import { rmsNorm, rmsNormBackward, rmsNormInto } from './rmsnorm.js';

type F32 = HostArray<'float32'>;

function randomArray(random: () => number, dims: number[]): F32 {
  const n = dims.reduce((a, b) => a * b, 1);
  return hostArray(
    Float32Array.from({ length: n }, () => normal(random)),
    dims,
  );
}

// L(x, w) = Σ y(x, w) ⊙ g, accumulated in float64.
function loss(x: F32, w: F32, g: F32): number {
  const { y } = rmsNorm(x, w, { eps: 1e-5 });
  let total = 0;
  for (let i = 0; i < y.data.length; i++) total += (y.data[i] ?? 0) * (g.data[i] ?? 0);
  return total;
}

function finiteDifference(x: F32, w: F32, g: F32, of: F32, i: number, h: number): number {
  const saved = of.data[i] ?? 0;
  of.data[i] = saved + h;
  const up = loss(x, w, g);
  of.data[i] = saved - h;
  const down = loss(x, w, g);
  of.data[i] = saved;
  // The perturbation actually stored in float32:
  const step = Math.fround(saved + h) - Math.fround(saved - h);
  return (up - down) / step;
}

test('the forward pass saves rstd as a checkpoint, one per row, and returns it beside y', () => {
  const x = hostArray(Float32Array.from([3, 4, 0, 0]), [2, 2]);
  const w = hostArray(Float32Array.from([1, 2]));
  expect(String(checkpoints(rmsNormInto, x).rstd)).toBe('Undef(float32, [2])');
  const space = countingSpace();
  const { y, rstd } = rmsNorm(space, x, w, { eps: 0 });
  expect(space.live).toBe(2);
  expect(rstd.data[0]).toBeCloseTo(1 / Math.sqrt(12.5), 6);
  expect(y.data[1]).toBeCloseTo((4 * 2) / Math.sqrt(12.5), 5);
});

test('property: the backward pass matches finite differences for dx and dw', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 6 }), fc.nat(), (rows, cols, seed) => {
      const random = seededRandom(seed);
      const x = randomArray(random, [rows, cols]);
      const w = randomArray(random, [cols]);
      const g = randomArray(random, [rows, cols]);
      const { rstd } = rmsNorm(x, w, { eps: 1e-5 });
      const { dx, dw } = rmsNormBackward(countingSpace(Number.NaN), g, x, w, rstd);
      expect(dx.dims).toEqual([rows, cols]);
      expect(dw.dims).toEqual([cols]);
      for (let i = 0; i < rows * cols; i++) {
        // Step with the row's scale: y is flat along the row and curves within about its RMS.
        const r = Math.floor(i / cols);
        const rms = Math.sqrt(x.data.slice(r * cols, (r + 1) * cols).reduce((a, v) => a + v * v, 0) / cols);
        const fd = finiteDifference(x, w, g, x, i, 1e-2 * Math.max(rms, 1e-2));
        expect(Math.abs((dx.data[i] ?? 0) - fd)).toBeLessThan(2e-3 + 2e-3 * Math.abs(fd));
      }
      for (let j = 0; j < cols; j++) {
        const fd = finiteDifference(x, w, g, w, j, 1e-2);
        expect(Math.abs((dw.data[j] ?? 0) - fd)).toBeLessThan(2e-3 + 2e-3 * Math.abs(fd));
      }
    }),
    { numRuns: 40 },
  );
});

test('the gradients are shadows: zeroed when materialized, accumulated into when they are yours', () => {
  const random = seededRandom(11);
  const x = randomArray(random, [2, 3]);
  const w = randomArray(random, [3]);
  const g = randomArray(random, [2, 3]);
  const { rstd } = rmsNorm(x, w);
  const once = rmsNormBackward(countingSpace(Number.NaN), g, x, w, rstd);
  const dw = hostArray(new Float32Array(3));
  rmsNormBackward(g, x, w, rstd, { dw });
  const { dw: same } = rmsNormBackward(g, x, w, rstd, { dw });
  expect(same).toBe(dw);
  for (let j = 0; j < 3; j++) expect(dw.data[j]).toBeCloseTo(2 * (once.dw.data[j] ?? 0), 5);
});
