import { expect, test } from 'vitest';
import { demo } from './demo.js';

test('the demo says what it shows: the split, equal results, steady workers, no bytes copied, regions freed', async () => {
  const lines = await demo({
    shape: { rows: 64, features: 64, hidden: 32, classes: 10 },
    steady: 20,
    workerFile: new URL('../dist/worker.js', import.meta.url),
  });
  const text = lines.join('\n');
  expect(text).toMatch(/the split: rows 0-31 -> region [12], rows 32-63 -> region [12]/);
  expect(text).toContain('pooled Y equals the one-thread Y, bit for bit: 640 of 640 values');
  expect(text).toContain('after the first task: no worker carved a new array or moved its watermark');
  // 0 B on every line (see pool.test.ts).
  const own = /: (\d+) B for its own work/.exec(text);
  expect(own, text).not.toBeNull();
  expect(Number(own?.[1])).toBe(0);
  expect(text).toContain('bytes of X and Y copied per task: 0;');
  expect(text).toContain('claimed now: [false, false, false]');
});
