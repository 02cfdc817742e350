import { expect, test } from 'vitest';
import { demo } from './demo.js';

test('the demo describes, materializes and computes a softmax', () => {
  const lines = demo();
  expect(lines[0]).toBe('outputs described: y = Undef(float32, [4])');
  expect(lines[1]).toBe('scratch described: tmp = Undef(float32, [4])');
  expect(lines.at(-1)).toBe('softmax([1, 2, 3, 4]) = [0.0321, 0.0871, 0.2369, 0.6439]');
});
