import { type HostArray, hostArray, outputs, Similar, scratch, withspace } from '@pol/core';
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { countingSpace } from '../test-support/counting.js';
import { softmax, softmaxInto } from './softmax.js';

type F32 = HostArray<'float32'>;

function reference(values: number[], cols: number): number[] {
  const out: number[] = [];
  for (let r = 0; r < values.length / cols; r++) {
    const row = values.slice(r * cols, (r + 1) * cols);
    const max = Math.max(...row);
    const sum = row.reduce((a, v) => a + Math.exp(v - max), 0);
    out.push(...row.map((v) => Math.exp(v - max) / sum));
  }
  return out;
}

const x = hostArray(Float32Array.from([1, 2, 3, 4]));

test('the kernel describes its output and its scratch like its input', () => {
  expect(String(outputs(softmaxInto, x).y)).toBe('Undef(float32, [4])');
  expect(String(scratch(softmaxInto, x).tmp)).toBe('Undef(float32, [4])');
});

test('softmax(space, x).y: the output from the space, the scratch from a frame that closed', () => {
  const space = countingSpace();
  const { y } = softmax(space, x);
  expect(Array.from(y.data, (v) => v.toFixed(4))).toEqual(['0.0321', '0.0871', '0.2369', '0.6439']);
  expect(space.log).toEqual(['float32[4]', 'float32[4]']);
  expect(space.live).toBe(1);
});

test('the same call against the ambient space, and unscoped against Similar(x)', () => {
  const space = countingSpace();
  const ambient = withspace(space, () => softmax(x).y);
  expect(space.live).toBe(1);
  const unscoped = softmax(x).y;
  expect(Array.from(unscoped.data)).toEqual(Array.from(ambient.data));
  expect(String(Similar(unscoped))).toBe(String(Similar(x)));
});

test('rows: softmax along the last dim of a matrix', () => {
  const m = hostArray(Float32Array.from([0, 0, 1, 3, 1000, 1000]), [3, 2]);
  const { y } = softmax(m);
  expect(y.dims).toEqual([3, 2]);
  const want = reference([0, 0, 1, 3, 1000, 1000], 2);
  for (let i = 0; i < 6; i++) expect(y.data[i]).toBeCloseTo(want[i] ?? Number.NaN, 6);
});

test('property: outputs have the described dims for random sizes, and each row sums to one', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 5 }),
      fc.integer({ min: 1, max: 9 }),
      fc.array(fc.float({ min: -20, max: 20, noNaN: true }), { minLength: 45, maxLength: 45 }),
      (rows, cols, values) => {
        const input: F32 = hostArray(Float32Array.from(values.slice(0, rows * cols)), [rows, cols]);
        const space = countingSpace();
        const { y } = softmax(space, input);
        expect(y.dims).toEqual([rows, cols]);
        expect(space.log).toEqual([`float32[${rows}, ${cols}]`, `float32[${rows}, ${cols}]`]);
        for (let r = 0; r < rows; r++) {
          let sum = 0;
          for (let c = 0; c < cols; c++) sum += y.data[r * cols + c] ?? 0;
          expect(sum).toBeCloseTo(1, 5);
        }
      },
    ),
  );
});

test('property: a caller-supplied y is passed through by identity and written', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 16 }), fc.boolean(), (n, giveTmp) => {
      const input = hostArray(new Float32Array(n).fill(1));
      const y = hostArray(new Float32Array(n));
      const tmp = hostArray(new Float32Array(n));
      const space = countingSpace();
      const result = giveTmp ? softmax(space, input, { y, tmp }) : softmax(space, input, { y });
      expect(result.y).toBe(y);
      expect(y.data[0]).toBeCloseTo(1 / n, 6);
      expect(space.log).toEqual(giveTmp ? [] : [`float32[${n}]`]);
      if (giveTmp) expect(tmp.data[0]).toBe(1);
    }),
  );
});
