/**
 * `graph.replay(options)` on a real device: several steps per submit compute what as many replays
 * compute, bad options are refused with a typed error that changes nothing, and nothing new is
 * created.
 */
import { alloc, InvalidArgumentError } from '@pol/core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { bindGroup, capture, deviceArena, download, type GpuArray, type Graph, GraphInvalidError, upload } from './index.js';
import { countCalls, requestDevice } from './test-support/gpu.js';

let device: GPUDevice;
let addOne: GPUComputePipeline;
let accumulate: GPUComputePipeline;

beforeAll(async () => {
  device = await requestDevice('graph');
  deviceArena(device, 256); // the device meets Pol before its pipelines are made
  const pipeline = (code: string) =>
    device.createComputePipeline({
      layout: 'auto',
      compute: { module: device.createShaderModule({ code }), entryPoint: 'main' },
    });
  // a += 1; b = 2b + a: a step whose result depends on how many steps ran, and in which order.
  addOne = pipeline(`@group(0) @binding(0) var<storage, read_write> a: array<f32>;
    @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3u) { if (id.x < arrayLength(&a)) { a[id.x] += 1.0; } }`);
  accumulate = pipeline(`@group(0) @binding(0) var<storage, read_write> a: array<f32>;
    @group(0) @binding(1) var<storage, read_write> b: array<f32>;
    @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3u) { if (id.x < arrayLength(&b)) { b[id.x] = 2.0 * b[id.x] + a[id.x]; } }`);
});
afterAll(() => device.destroy());

/** Two arrays on a fresh arena, and a step over them: a clear of `c`, then two passes: a += 1; b = 2b + a and c = 2c + b. */
function twin() {
  const arena = deviceArena(device, 1 << 12);
  const a = alloc(arena, 'float32', [8]);
  const b = alloc(arena, 'float32', [8]);
  const c = alloc(arena, 'float32', [8]);
  upload(
    a,
    Float32Array.from({ length: 8 }, (_, i) => i),
  );
  upload(b, new Float32Array(8).fill(1));
  upload(c, new Float32Array(8).fill(7));
  const dispatch = (pass: GPUComputePassEncoder, pipeline: GPUComputePipeline, arrays: GpuArray[]) => {
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bindGroup(device, pipeline.getBindGroupLayout(0), arrays));
    pass.dispatchWorkgroups(1);
  };
  const step = () => {
    const encoder = device.createCommandEncoder();
    encoder.clearBuffer(c.buffer, c.offset, c.size);
    let pass = encoder.beginComputePass();
    dispatch(pass, addOne, [a]);
    pass.end();
    pass = encoder.beginComputePass();
    dispatch(pass, accumulate, [a, b]);
    dispatch(pass, accumulate, [b, c]);
    pass.end();
    device.queue.submit([encoder.finish()]);
  };
  return { arena, a, b, c, step };
}

async function contents(...arrays: GpuArray<'float32'>[]): Promise<number[][]> {
  return Promise.all(arrays.map(async (x) => Array.from((await download(x)).data)));
}

describe('graph.replay({ times })', () => {
  test('k steps in one submit compute what k replays compute, bit for bit', async () => {
    for (const k of [1, 2, 5]) {
      const one = twin();
      const many = twin();
      const g1 = await capture(device, one.step);
      const gk = await capture(device, many.step);
      for (let i = 0; i < k; i++) g1.replay();
      gk.replay({ times: k });
      const [want, got] = await Promise.all([contents(one.a, one.b, one.c), contents(many.a, many.b, many.c)]);
      expect(got).toEqual(want);
      expect(got[0]?.[0]).toBe(k + 1); // a += 1 ran k + 1 times: the capture's eager run, then k steps
      g1.dispose();
      gk.dispose();
    }
  });

  test('and equal as many eager steps', async () => {
    const eager = twin();
    const replayed = twin();
    const graph = await capture(device, replayed.step);
    for (let i = 0; i < 4; i++) eager.step();
    graph.replay({ times: 3 });
    expect(await contents(replayed.a, replayed.b, replayed.c)).toEqual(await contents(eager.a, eager.b, eager.c));
  });

  test('creates no buffer and no bind group', async () => {
    const { step } = twin();
    const graph = await capture(device, step);
    const calls = countCalls(device, ['createBuffer', 'createBindGroup']);
    try {
      for (let i = 0; i < 20; i++) graph.replay({ times: 4 });
      expect(calls.counts).toEqual({ createBuffer: 0, createBindGroup: 0 });
    } finally {
      calls.restore();
    }
  });

  test.each<[string, unknown, RegExp]>([
    ['zero steps', { times: 0 }, /whole number of steps, at least 1, got 0/],
    ['a negative count', { times: -2 }, /at least 1, got -2/],
    ['a fraction', { times: 1.5 }, /got 1\.5/],
    ['NaN', { times: Number.NaN }, /got NaN/],
    ['a string', { times: '4' }, /got '4'/],
    ['an unknown option', { times: 2, repeat: 2 }, /no option 'repeat'.*'times'/],
    ['a misspelt option', { Times: 2 }, /did you mean 'times'/],
    ['not an object', 4, /takes an options object, got 4/],
  ])('%s is refused with InvalidArgumentError, and nothing is submitted', async (_name, options, message) => {
    const { a, b, c, step } = twin();
    const graph = await capture(device, step);
    const before = await contents(a, b, c);
    expect(() => graph.replay(options as { times?: number })).toThrow(InvalidArgumentError);
    expect(() => graph.replay(options as { times?: number })).toThrow(message);
    expect(await contents(a, b, c)).toEqual(before);
    expect(graph.valid).toBe(true);
    graph.replay({ times: 2 }); // and it still replays
    expect((await contents(a))[0]?.[1]).toBe((before[0]?.[1] ?? 0) + 2);
  });

  test('an invalid graph refuses any number of steps', async () => {
    const { step } = twin();
    const graph: Graph = await capture(device, step);
    graph.dispose();
    expect(() => graph.replay({ times: 3 })).toThrow(GraphInvalidError);
  });

  test('inside a captured step, the k steps are recorded, and replay as such', async () => {
    const inner = twin();
    const reference = twin();
    const graph = await capture(device, inner.step);
    const outer = await capture(device, () => graph.replay({ times: 3 })); // runs 3 steps now
    expect(outer.stats.dispatches).toBe(9);
    expect(outer.stats.submits).toBe(1);
    outer.replay(); // 3 more
    for (let i = 0; i < 7; i++) reference.step();
    expect(await contents(inner.a, inner.b, inner.c)).toEqual(await contents(reference.a, reference.b, reference.c));
  });
});
