import { expect, test } from 'vitest';
import { quickStart, training } from './demo.js';
import { trainOnArena } from './train.js';

test('the quick start describes, materializes and computes a softmax', () => {
  const lines = quickStart();
  expect(lines[0]).toBe('outputs described: y = Undef(float32, [4])');
  expect(lines[1]).toBe('scratch described: tmp = Undef(float32, [4])');
  expect(lines.at(-1)).toBe('softmax([1, 2, 3, 4]) = [0.0321, 0.0871, 0.2369, 0.6439]');
});

test('the perceptron trains: the loss falls', () => {
  const { records } = trainOnArena({ steps: 200 });
  const first = records[0]?.loss ?? Number.NaN;
  const last = records.at(-1)?.loss ?? Number.NaN;
  expect(first).toBeGreaterThan(0.8);
  expect(last).toBeLessThan(first / 2);
});

test('after step 1 the loop carves no new buffers: offset, watermark and arrays created stay put', () => {
  const { arena, records } = trainOnArena({ steps: 50 });
  const first = records[0];
  expect(first).toBeDefined();
  for (const r of records) {
    expect(r.offset).toBe(first?.offset);
    expect(r.watermark).toBe(first?.watermark);
    expect(r.arraysCreated).toBe(first?.arraysCreated);
  }
  expect(arena.describe().openFrames).toBe(0);
  // The step's frame needs more than the persistent buffers: the watermark is above the offset.
  expect(first?.watermark).toBeGreaterThan(first?.offset ?? 0);
});

test('the printed summary says so', () => {
  const lines = training(100);
  expect(lines.at(-2)).toMatch(/^after step 1: 0 new arrays, watermark unchanged \(\d+ bytes\)/);
  expect(lines.at(-1)).toMatch(/^loss: 1\.\d{4} -> 0\.\d{4}$/);
});
