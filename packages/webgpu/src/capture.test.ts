import { Arena, mark, reset, retract, watermark } from '@pol/arena';
import { alloc, CaptureViolation, capturing, InvalidArgumentError, Similar, scratchspace } from '@pol/core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  CaptureFailedError,
  capture,
  DeviceLostError,
  deviceArena,
  deviceSlab,
  download,
  type GpuArray,
  GraphInvalidError,
  upload,
} from './index.js';
import { countCalls, GPUBufferUsage, GPUMapMode, requestDevice } from './test-support/gpu.js';
import { forward, type Model, makeModel, maxDiff, reference, type Sizes, values, type Weights } from './test-support/kernels.js';

const sizes: Sizes = { n: 8, k: 16, m: 10 };
let device: GPUDevice;
let model: Model;
let weights: Weights;
let wv: Float32Array;
let bv: Float32Array;

beforeAll(async () => {
  device = await requestDevice('capture');
  model = makeModel(device, sizes);
  const arena = deviceArena(device, 4096, { label: 'weights' });
  weights = { w: alloc(arena, 'float32', [sizes.k, sizes.m]), b: alloc(arena, 'float32', [sizes.m]) };
  wv = values(sizes.k * sizes.m, 1);
  bv = values(sizes.m, 2);
  upload(weights.w, wv);
  upload(weights.b, bv);
});
afterAll(() => device.destroy());

const tolerance = 1e-5;
const expected = (x: Float32Array) => reference(sizes, x, wv, bv);

/** An arena with x and y allocated, unframed, and the step that computes y from x on it. */
function setup(bytes = 1 << 14, label = 'activations') {
  const arena = deviceArena(device, bytes, { label });
  const x = alloc(arena, 'float32', [sizes.n, sizes.k]);
  const y = alloc(arena, 'float32', [sizes.n, sizes.m]);
  const step = () => forward(model, arena, x, weights, y);
  return { arena, x, y, step };
}

async function violationOf(f: () => void): Promise<CaptureViolation> {
  const { arena, step } = setup();
  let error: unknown;
  await capture(device, () => {
    step();
    try {
      f();
    } catch (e) {
      error = e;
    }
  });
  expect(error).toBeInstanceOf(CaptureViolation);
  // the state after a refusal: nothing recording, the device's methods back
  expect(capturing(alloc(arena, 'float32', 1))).toBe(false);
  return error as CaptureViolation;
}

describe('the real kernel chain, softmax(x·W + b)', () => {
  test('eager results match the CPU reference', async () => {
    const { x, y, step } = setup();
    const xv = values(sizes.n * sizes.k, 3);
    upload(x, xv);
    step();
    const out = await download(y);
    expect(maxDiff(out.data, expected(xv))).toBeLessThan(tolerance);
    // rows sum to one
    for (let r = 0; r < sizes.n; r++) {
      expect(out.data.subarray(r * sizes.m, (r + 1) * sizes.m).reduce((a, b) => a + b, 0)).toBeCloseTo(1, 5);
    }
  });

  test('the prescribed workflow: warm up eagerly, read the watermark, size the slab, capture, replay', async () => {
    // 1. warm up eagerly on a generous arena: compiles nothing new here (the model is built), measures the step
    const warm = deviceArena(device, 1 << 20, { label: 'warm-up' });
    const wx = alloc(warm, 'float32', [sizes.n, sizes.k]);
    const wy = alloc(warm, 'float32', [sizes.n, sizes.m]);
    forward(model, warm, wx, weights, wy);
    // 2. read the watermark: inputs, outputs and the step's scratch
    const bytes = watermark(warm);
    expect(bytes).toBeGreaterThan(0);
    expect(bytes).toBeLessThan(1 << 12);
    warm.slab.destroy();
    // 3. size the device slab (exactly: the same allocation sequence fits)
    const arena = deviceArena(device, bytes, { label: 'sized' });
    const x = alloc(arena, 'float32', [sizes.n, sizes.k]);
    const y = alloc(arena, 'float32', [sizes.n, sizes.m]);
    const x1 = values(sizes.n * sizes.k, 10);
    upload(x, x1);
    // 4. capture: the step runs once, for real
    const graph = await capture(device, () => forward(model, arena, x, weights, y), { label: 'forward' });
    expect(graph.stats).toEqual({ submits: 1, passes: 1, dispatches: 2, copies: 0 });
    expect(maxDiff((await download(y)).data, expected(x1))).toBeLessThan(tolerance);
    expect(arena.watermark).toBe(bytes);
    // 5. replay with new inputs
    for (const seed of [11, 12, 13]) {
      const xs = values(sizes.n * sizes.k, seed);
      upload(x, xs);
      graph.replay();
      expect(maxDiff((await download(y)).data, expected(xs))).toBeLessThan(tolerance);
    }
    graph.dispose();
  });

  test('a replay equals an eager step, bit for bit', async () => {
    const eager = setup();
    const captured = setup();
    const xs = values(sizes.n * sizes.k, 21);
    upload(eager.x, xs);
    upload(captured.x, xs);
    eager.step();
    const graph = await capture(device, captured.step);
    upload(captured.x, new Float32Array(xs.length)); // clobber, then restore the inputs
    upload(captured.x, xs);
    graph.replay();
    const a = await download(eager.y);
    const b = await download(captured.y);
    expect(Array.from(b.data)).toEqual(Array.from(a.data));
  });

  test('1,000 replays create no buffer and no bind group, and keep computing', async () => {
    const { x, y, step } = setup();
    const xs = values(sizes.n * sizes.k, 31);
    upload(x, xs);
    const graph = await capture(device, step);
    const calls = countCalls(device, ['createBuffer', 'createBindGroup', 'createShaderModule', 'createComputePipeline']);
    try {
      for (let i = 0; i < 1000; i++) graph.replay();
      await device.queue.onSubmittedWorkDone();
      expect(calls.counts).toEqual({ createBuffer: 0, createBindGroup: 0, createShaderModule: 0, createComputePipeline: 0 });
    } finally {
      calls.restore();
    }
    expect(maxDiff((await download(y)).data, expected(xs))).toBeLessThan(tolerance);
  });

  test('an eager steady loop on an arena creates no buffer and no bind group either', async () => {
    const { step } = setup();
    step();
    const calls = countCalls(device, ['createBuffer', 'createBindGroup']);
    try {
      for (let i = 0; i < 50; i++) step();
      expect(calls.counts).toEqual({ createBuffer: 0, createBindGroup: 0 });
    } finally {
      calls.restore();
    }
  });

  test('copies and clears are recorded and replayed', async () => {
    // two slabs: WebGPU refuses a copy whose source and destination are the same buffer
    const a = alloc(deviceArena(device, 1024), 'float32', 4);
    const b = alloc(deviceArena(device, 1024), 'float32', 4);
    upload(a, Float32Array.of(1, 2, 3, 4));
    const graph = await capture(device, () => {
      const encoder = device.createCommandEncoder();
      encoder.clearBuffer(b.buffer, b.offset, b.size);
      encoder.pushDebugGroup('copy');
      encoder.copyBufferToBuffer(a.buffer, a.offset, b.buffer, b.offset, 8);
      encoder.popDebugGroup();
      device.queue.submit([encoder.finish()]);
    });
    expect(graph.stats.copies).toBe(2);
    expect(Array.from((await download(b)).data)).toEqual([1, 2, 0, 0]);
    upload(a, Float32Array.of(5, 6, 7, 8));
    upload(b, Float32Array.of(9, 9, 9, 9));
    graph.replay();
    expect(Array.from((await download(b)).data)).toEqual([5, 6, 0, 0]);
  });

  test('graphs compose: a replay inside a captured step is recorded', async () => {
    const first = setup();
    const inner = await capture(device, first.step);
    const arena = deviceArena(device, 1024);
    const copy = alloc(arena, 'float32', [sizes.n, sizes.m]);
    const outer = await capture(device, () => {
      inner.replay();
      const encoder = device.createCommandEncoder();
      encoder.copyBufferToBuffer(first.y.buffer, first.y.offset, copy.buffer, copy.offset, copy.size);
      device.queue.submit([encoder.finish()]);
    });
    expect(outer.stats).toEqual({ submits: 2, passes: 1, dispatches: 2, copies: 1 });
    const xs = values(sizes.n * sizes.k, 41);
    upload(first.x, xs);
    outer.replay();
    expect(maxDiff((await download(copy)).data, expected(xs))).toBeLessThan(tolerance);
  });
});

describe('while recording, capture refuses synchronously with CaptureViolation', () => {
  test.each<[string, () => void, RegExp]>([
    [
      'a new GPUBuffer',
      () => device.createBuffer({ size: 16, usage: GPUBufferUsage.STORAGE }),
      /createBuffer\(16 bytes\).*arena/s,
    ],
    ['a device slab', () => deviceSlab(device, 1024), /deviceSlab.*before capture/s],
    ['a texture', () => device.createTexture({ size: [1, 1], format: 'rgba8unorm', usage: 4 }), /createTexture/],
    ['a shader module', () => device.createShaderModule({ code: '' }), /createShaderModule.*[Ww]arm up/s],
    [
      'a pipeline',
      () => device.createComputePipeline({ layout: 'auto', compute: { module: model.linear as never, entryPoint: 'main' } }),
      /createComputePipeline.*[Ww]arm up/s,
    ],
    ['an async pipeline', () => void device.createComputePipelineAsync({} as never), /createComputePipelineAsync/],
    ['a readback (mapAsync)', () => void prepared().buffer.mapAsync(GPUMapMode.READ), /mapAsync.*download/s],
    ['a wait (onSubmittedWorkDone)', () => void device.queue.onSubmittedWorkDone(), /onSubmittedWorkDone.*after replay/s],
    [
      'a host write (writeBuffer)',
      () => device.queue.writeBuffer(prepared().target, 0, new Float32Array(1)),
      /writeBuffer.*upload/s,
    ],
    ['an upload', () => upload(alloc(prepared().arena, 'float32', 1), new Float32Array(1)), /upload.*before each replay/s],
    ['a download', () => void download(alloc(prepared().arena, 'float32', 1)), /download.*after replay/s],
    ['a nested capture', () => void capture(device, () => {}), /do not nest/],
    [
      'a render pass',
      () => device.createCommandEncoder().beginRenderPass({ colorAttachments: [] }),
      /beginRenderPass.*compute passes/s,
    ],
    ['timestamp writes', () => device.createCommandEncoder().beginComputePass({ timestampWrites: {} as never }), /timestamp/],
    [
      'a command buffer encoded before the capture',
      () => device.queue.submit([prepared().commands]),
      /encoded before the capture/,
    ],
    ['a Similar allocation', () => alloc(Similar(alloc(prepared().arena, 'float32', 1)), 'float32', 4), /Similar/],
  ])('%s', async (_, f, message) => {
    const error = await violationOf(f);
    expect(error.code).toBe('POL_CAPTURE_VIOLATION');
    expect(error.message).toMatch(message);
    expect(error.message).toContain("device 'capture'");
    // One class, what was attempted kept, and a message a user reads to the end.
    expect(error.constructor).toBe(CaptureViolation);
    expect(error.message.startsWith(error.attempted)).toBe(true);
    expect(error.message.length).toBeLessThan(480); // it was about 1,000 for Similar
  });

  // Made before the captures start (the table's closures run inside the step).
  let before: { arena: Arena<'gpu'>; buffer: GPUBuffer; target: GPUBuffer; commands: GPUCommandBuffer } | undefined;
  function prepared() {
    if (before === undefined) throw new Error('beforeAll has not run');
    return before;
  }
  beforeAll(() => {
    before = {
      arena: deviceArena(device, 4096),
      buffer: device.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST }),
      target: device.createBuffer({ size: 16, usage: GPUBufferUsage.COPY_DST }),
      commands: device.createCommandEncoder().finish(),
    };
  });

  test('the device works normally after a refusal, and a new capture succeeds', async () => {
    await violationOf(() => device.createBuffer({ size: 16, usage: GPUBufferUsage.STORAGE }));
    const buffer = device.createBuffer({ size: 16, usage: GPUBufferUsage.STORAGE });
    buffer.destroy();
    const { x, y, step } = setup();
    const xs = values(sizes.n * sizes.k, 51);
    upload(x, xs);
    const graph = await capture(device, step);
    graph.replay();
    expect(maxDiff((await download(y)).data, expected(xs))).toBeLessThan(tolerance);
  });

  test('a refusal the step does not catch propagates from capture() as it is, and nothing stays wrapped', async () => {
    const { step } = setup();
    const own = Object.getOwnPropertyNames(device).sort();
    let thrown: unknown;
    try {
      await capture(device, () => {
        step();
        device.createShaderModule({ code: '' });
      });
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(CaptureViolation);
    expect(Object.getOwnPropertyNames(device).sort()).toEqual(own);
  });
});

describe('capture and its graph', () => {
  test('capturing(x) is true for arrays of the recording device only, and only while it records', async () => {
    const other = await requestDevice('other');
    const mine = setup();
    const theirs = alloc(deviceArena(other, 1024), 'float32', 4);
    const seen: boolean[] = [];
    await capture(device, () => {
      mine.step();
      seen.push(capturing(mine.x), capturing(theirs), capturing(new Float32Array(1)));
    });
    expect(seen).toEqual([true, false, false]);
    expect(capturing(mine.x)).toBe(false);
    other.destroy();
  });

  test("captures on two devices are independent: one may run inside the other's step", async () => {
    const other = await requestDevice('other');
    try {
      const a = alloc(deviceArena(other, 1024), 'float32', 4);
      const b = alloc(deviceArena(other, 1024), 'float32', 4);
      const mine = setup();
      let inner: Promise<Awaited<ReturnType<typeof capture>>> | undefined;
      const outer = await capture(device, () => {
        mine.step();
        inner = capture(other, () => {
          const encoder = other.createCommandEncoder();
          encoder.copyBufferToBuffer(a.buffer, a.offset, b.buffer, b.offset, 16);
          other.queue.submit([encoder.finish()]);
        });
      });
      const graph = await inner;
      expect(outer.stats.dispatches).toBe(2);
      expect(graph?.stats).toEqual({ submits: 1, passes: 0, dispatches: 0, copies: 1 });
      upload(a, Float32Array.of(1, 2, 3, 4));
      graph?.replay();
      outer.replay();
      expect(Array.from((await download(b)).data)).toEqual([1, 2, 3, 4]);
    } finally {
      other.destroy();
    }
  });

  test('a validation error in the step fails the capture with the device message', async () => {
    const { x, y } = setup();
    const promise = capture(device, () => {
      const encoder = device.createCommandEncoder();
      const pass = encoder.beginComputePass();
      pass.setPipeline(model.softmax);
      pass.dispatchWorkgroups(1); // bind group 0 was never set
      pass.end();
      device.queue.submit([encoder.finish()]);
      void x;
      void y;
    });
    let error: unknown;
    try {
      await promise;
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CaptureFailedError);
    expect((error as CaptureFailedError).code).toBe('POL_GPU_CAPTURE_FAILED');
    expect((error as Error).message).toMatch(/validation error.*The device said: .*bind group/is);
  });

  test('a step that submits nothing fails', () => {
    expect(() => capture(device, () => {})).toThrow(CaptureFailedError);
    expect(() =>
      capture(device, () => {
        device.createCommandEncoder().finish(); // encoded but never submitted
      }),
    ).toThrow(/recorded nothing/);
  });

  test.each([
    ['no device', () => capture({} as never, () => {})],
    ['no step', () => capture(device, 'step' as never)],
    ['an async step', () => capture(device, (async () => {}) as never)],
    ['options that are not an object', () => capture(device, () => {}, 7 as never)],
    ['an unknown option', () => capture(device, () => {}, { arena: [] } as never)],
    ['a non-string label', () => capture(device, () => {}, { label: 5 as never })],
    ['arenas that are not an array', () => capture(device, () => {}, { arenas: {} as never })],
    ['an arena that is not one', () => capture(device, () => {}, { arenas: [{} as never] })],
    ['a host arena', () => capture(device, () => {}, { arenas: [new Arena(new ArrayBuffer(64)) as never] })],
  ])('refuses %s with InvalidArgumentError before running the step, changing nothing', (_, f) => {
    const { arena, x } = setup();
    const before = arena.describe();
    const submit = device.queue.submit;
    const calls = countCalls(device, ['createCommandEncoder', 'pushErrorScope']);
    try {
      expect(f).toThrow(InvalidArgumentError);
      expect(calls.counts).toEqual({ createCommandEncoder: 0, pushErrorScope: 0 });
    } finally {
      calls.restore();
    }
    expect(arena.describe()).toEqual(before);
    expect(capturing(x)).toBe(false);
    expect(device.queue.submit).toBe(submit); // nothing wrapped again, nothing left recording
  });

  test('a step that returns a promise is refused after it ran', () => {
    const { step } = setup();
    expect(() =>
      capture(device, () => {
        step();
        return Promise.resolve() as never;
      }),
    ).toThrow(/synchronous/);
  });

  test('refuses an arena of another device', async () => {
    const other = await requestDevice('other');
    expect(() => capture(device, () => {}, { arenas: [deviceArena(other, 1024)] })).toThrow(/another device/);
    other.destroy();
  });

  test('an arena made with new Arena(deviceSlab(…)) is pinned without naming it: a reset invalidates the graph', async () => {
    const slab = deviceSlab(device, 1 << 14);
    const arena = new Arena(slab);
    const x = alloc(arena, 'float32', [sizes.n, sizes.k]);
    const y = alloc(arena, 'float32', [sizes.n, sizes.m]);
    const graph = await capture(device, () => forward(model, arena, x, weights, y));
    expect(graph.valid).toBe(true);
    reset(arena);
    expect(graph.valid).toBe(false);
    expect(graph.invalidReason).toMatch(/was reset, below the \d+ bytes of it that the graph binds/);
    // Naming it, as was required before the storage heard of every arena, still works.
    const again = new Arena(deviceSlab(device, 1 << 14));
    const ax = alloc(again, 'float32', [sizes.n, sizes.k]);
    const ay = alloc(again, 'float32', [sizes.n, sizes.m]);
    const named = await capture(device, () => forward(model, again, ax, weights, ay), { arenas: [again] });
    reset(again);
    expect(named.valid).toBe(false);
    slab.destroy();
    again.slab.destroy();
  });

  test('a slab bound with no arena over it pins nothing, and still invalidates the graph when destroyed', async () => {
    const slab = deviceSlab(device, 4096, { label: 'bare' });
    const graph = await capture(device, () => {
      const encoder = device.createCommandEncoder();
      encoder.clearBuffer(slab.buffer, 0, 256);
      device.queue.submit([encoder.finish()]);
    });
    expect(graph.valid).toBe(true);
    slab.destroy();
    expect(graph.valid).toBe(false);
    expect(graph.invalidReason).toMatch(/device slab 'bare'.*destroyed/);
  });

  test('a retract or reset below the region a graph uses invalidates it; replay throws at once, naming why', async () => {
    const arena = deviceArena(device, 1 << 14, { label: 'pinned' });
    const before = mark(arena);
    const x = alloc(arena, 'float32', [sizes.n, sizes.k]);
    const y = alloc(arena, 'float32', [sizes.n, sizes.m]);
    const graph = await capture(device, () => forward(model, arena, x, weights, y), { label: 'pinned-graph' });
    // frames above the graph's arrays come and go: still valid (the step's own scratch is reused by each replay)
    scratchspace(arena, (frame) => alloc(frame, 'float32', 1024));
    const above = mark(arena);
    alloc(arena, 'float32', 4);
    retract(arena, above);
    expect(graph.valid).toBe(true);
    graph.replay();
    // a retract below x and y
    retract(arena, before);
    expect(graph.valid).toBe(false);
    expect(graph.invalidReason).toMatch(/retracted to offset 0/);
    const calls = countCalls(device, ['createCommandEncoder']);
    let error: unknown;
    try {
      graph.replay();
    } catch (e) {
      error = e;
    } finally {
      calls.restore();
    }
    expect(error).toBeInstanceOf(GraphInvalidError);
    expect((error as GraphInvalidError).code).toBe('POL_GPU_GRAPH_INVALID');
    expect((error as Error).message).toMatch(
      /Cannot replay graph 'pinned-graph'.*retracted to offset 0.*capture the step again/s,
    );
    expect(calls.counts.createCommandEncoder).toBe(0);

    const again = setup();
    const g2 = await capture(device, again.step);
    reset(again.arena);
    expect(() => g2.replay()).toThrow(/was reset/);
  });

  test('disposing a graph unpins it', async () => {
    const { arena, step } = setup();
    const graph = await capture(device, step);
    graph.dispose();
    graph.dispose();
    reset(arena);
    expect(graph.invalidReason).toMatch(/disposed/);
    expect(() => graph.replay()).toThrow(GraphInvalidError);
    {
      using g = await capture(device, setup().step);
      expect(g.valid).toBe(true);
    }
  });

  test('a graph binding a Similar buffer becomes invalid when its frame closes', async () => {
    const { x } = setup();
    let graph: Awaited<ReturnType<typeof capture>> | undefined;
    const frame = scratchspace(Similar(x));
    const extra: GpuArray<'float32'> = alloc(frame, 'float32', 4);
    graph = await capture(device, () => {
      const encoder = device.createCommandEncoder();
      encoder.copyBufferToBuffer(x.buffer, x.offset, extra.buffer, 0, 16);
      device.queue.submit([encoder.finish()]);
    });
    expect(graph.valid).toBe(true);
    frame.close();
    expect(() => graph?.replay()).toThrow(/frame on Similar/);
  });

  test('a graph binding a destroyed slab is invalid', async () => {
    const { arena, step } = setup();
    const graph = await capture(device, step);
    arena.slab.destroy();
    expect(() => graph.replay()).toThrow(/destroyed/);
  });

  test('a device lost while the capture waits for its error scopes: DeviceLostError, and nothing stays pinned', async () => {
    const doomed = await requestDevice('doomed-during');
    const arena = deviceArena(doomed, 1024);
    const a = alloc(arena, 'float32', 4);
    const b = alloc(deviceArena(doomed, 1024), 'float32', 4);
    const pending = capture(doomed, () => {
      const encoder = doomed.createCommandEncoder();
      encoder.copyBufferToBuffer(a.buffer, a.offset, b.buffer, b.offset, 16);
      doomed.queue.submit([encoder.finish()]);
    });
    doomed.destroy();
    await expect(pending).rejects.toBeInstanceOf(DeviceLostError);
    expect(() => reset(arena)).not.toThrow();
  });

  test('a device lost by the GPU (device.lost resolves): graphs, uploads and slabs refuse with its reason', async () => {
    const flaky = await requestDevice('flaky');
    // Fault injection: a device.lost we resolve ourselves, installed before Pol first meets the device.
    let lose: (info: { reason: string; message: string }) => void = () => {};
    const lost = new Promise<{ reason: string; message: string }>((resolve) => {
      lose = resolve;
    });
    Object.defineProperty(flaky, 'lost', { value: lost, configurable: true });
    const a = alloc(deviceArena(flaky, 1024), 'float32', 4);
    const b = alloc(deviceArena(flaky, 1024), 'float32', 4);
    const graph = await capture(flaky, () => {
      const encoder = flaky.createCommandEncoder();
      encoder.copyBufferToBuffer(a.buffer, a.offset, b.buffer, b.offset, 16);
      flaky.queue.submit([encoder.finish()]);
    });
    lose({ reason: 'unknown', message: 'the GPU process crashed' });
    await lost;
    await Promise.resolve();
    expect(graph.invalidReason).toMatch(/was lost/);
    for (const f of [() => graph.replay(), () => upload(a, new Float32Array(4)), () => deviceSlab(flaky, 64)]) {
      let error: unknown;
      try {
        f();
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(DeviceLostError);
      expect((error as DeviceLostError).reason).toBe('unknown');
    }
    expect(() => upload(a, new Float32Array(4))).toThrow(/the GPU process crashed/);
    flaky.destroy();
  });

  test('a lost device: capture and replay throw DeviceLostError', async () => {
    const doomed = await requestDevice('doomed');
    const a = alloc(deviceArena(doomed, 1024), 'float32', 4);
    const b = alloc(deviceArena(doomed, 1024), 'float32', 4);
    const step = () => {
      const encoder = doomed.createCommandEncoder();
      encoder.copyBufferToBuffer(a.buffer, a.offset, b.buffer, b.offset, 16);
      doomed.queue.submit([encoder.finish()]);
    };
    const graph = await capture(doomed, step);
    doomed.destroy();
    expect(graph.valid).toBe(false);
    expect(() => graph.replay()).toThrow(DeviceLostError);
    expect(() => capture(doomed, step)).toThrow(DeviceLostError);
  });
});
