// The program's training run, on a real WebGPU (Dawn; SwiftShader without a GPU). The perceptron
// itself (its kernels, step and loop) is @pol/webgpu/examples, tested in depth by that package:
// this checks that it trains here, on the device src/device.ts hands out.
import { trainOnGpu } from '@pol/webgpu/examples';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { requestDevice } from './device.js';

// A missing adapter fails the test, never skips it: CI must not pass without running it.
let device: GPUDevice | undefined;
let missing = '';
let release = () => {};
beforeAll(async () => {
  const got = await requestDevice();
  if (got.device === undefined) missing = got.reason;
  else ({ device, release } = got);
});
afterAll(() => release());

test('the perceptron trains on WebGPU: the loss falls to under a fifth, on slabs of exactly their watermarks, step 1 captured and the rest replayed', async () => {
  if (device === undefined) throw new Error(`The WebGPU example needs a WebGPU adapter: ${missing}.`);
  const hows: string[] = [];
  const result = await trainOnGpu(device, {
    steps: 200,
    onStep: (_, __, how) => {
      hows.push(how);
    },
  });
  expect(result.losses).toHaveLength(200);
  expect(result.losses.at(-1)).toBeLessThan((result.losses[0] ?? 0) / 5);
  expect(result.arena.watermark).toBe(result.watermark);
  expect(result.params.watermark).toBe(result.paramsBytes);
  expect(hows.filter((how) => how === 'captured')).toHaveLength(1);
  expect(result.stats.dispatches).toBe(13);
});
