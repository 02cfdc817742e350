import { existsSync, readFileSync } from 'node:fs';
import { expect, test } from 'vitest';

// The training code is shared verbatim with examples/node-webgpu, so that each example can be
// copied out of the repository on its own; inside the repository the copies must not drift.
const here = new URL('./mlp-gpu.ts', import.meta.url);
const there = new URL('../../node-webgpu/src/mlp-gpu.ts', import.meta.url);

test.runIf(existsSync(there))('src/mlp-gpu.ts is the same as examples/node-webgpu/src/mlp-gpu.ts', () => {
  expect(readFileSync(here, 'utf8')).toBe(readFileSync(there, 'utf8'));
});
