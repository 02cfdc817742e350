import { Arena, mark, retract, StaleArrayError } from '@pol/arena';
import { alloc, capturing, InvalidArgumentError, scratchspace } from '@pol/core';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  bindGroup,
  CaptureFailedError,
  capture,
  deviceArena,
  deviceSlab,
  download,
  type GpuArray,
  GraphInvalidError,
  instrument,
  UsageConflictError,
  upload,
} from './index.js';
import { countCalls, GPUBufferUsage, GPUMapMode, GPUShaderStage, requestDevice } from './test-support/gpu.js';

// The prototypes of every WebGPU object Pol instruments, as Dawn made them, before Pol met any device.
let prototypes: Map<object, Map<string, unknown>>;
let device: GPUDevice;

function methodsOf(proto: object): Map<string, unknown> {
  const methods = new Map<string, unknown>();
  for (const name of Object.getOwnPropertyNames(proto)) {
    const d = Object.getOwnPropertyDescriptor(proto, name);
    if (typeof d?.value === 'function') methods.set(name, d.value);
  }
  return methods;
}

beforeAll(async () => {
  device = await requestDevice('instrumented');
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  const buffer = device.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  prototypes = new Map(
    [device, device.queue, encoder, pass, buffer].map((x) => {
      const proto = Object.getPrototypeOf(x) as object;
      return [proto, methodsOf(proto)] as const;
    }),
  );
  pass.end();
  buffer.destroy();
});
afterAll(() => device.destroy());

// y = 2x over `n` elements, x read-only or read_write as asked: third-party WGSL.
const doublerWgsl = (xAccess: 'read' | 'read_write') => /* wgsl */ `
  @group(0) @binding(0) var<storage, ${xAccess}> x: array<f32>;
  @group(0) @binding(1) var<storage, read_write> y: array<f32>;
  @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3u) {
    if (id.x < arrayLength(&y)) { y[id.x] = 2.0 * x[id.x]; }
  }`;

function compile(on: GPUDevice, xAccess: 'read' | 'read_write'): GPUComputePipeline {
  const module = on.createShaderModule({ code: doublerWgsl(xAccess) });
  return on.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
}

/** One step of `dispatches` dispatches, asking the pipeline for its layout at every one (as many samples do). */
function step(on: GPUDevice, pipeline: GPUComputePipeline, arrays: readonly GPUBufferBinding[], dispatches: number): void {
  const encoder = on.createCommandEncoder();
  const pass = encoder.beginComputePass();
  pass.setPipeline(pipeline);
  for (let d = 0; d < dispatches; d++) {
    pass.setBindGroup(0, bindGroup(on, pipeline.getBindGroupLayout(0), arrays));
    pass.dispatchWorkgroups(1);
  }
  pass.end();
  on.queue.submit([encoder.finish()]);
}

/** Two arrays of 64 floats from one new arena on `on`. */
function pair(on: GPUDevice, checked = false): [GpuArray<'float32'>, GpuArray<'float32'>] {
  const arena = deviceArena(on, 4096, { checked });
  return [alloc(arena, 'float32', [64]), alloc(arena, 'float32', [64])];
}

/** Run `f` on a device of its own, destroyed afterwards. */
async function onFreshDevice(label: string, f: (on: GPUDevice) => Promise<void> | void): Promise<void> {
  const fresh = await requestDevice(label);
  try {
    await f(fresh);
  } finally {
    fresh.destroy();
  }
}

async function validationError(on: GPUDevice, f: () => void): Promise<string | null> {
  on.pushErrorScope('validation');
  f();
  return (await on.popErrorScope())?.message ?? null;
}

describe('one instrumentation owner per device', () => {
  test('instrument(device) returns the device, is idempotent, and wraps each method once', () => {
    expect(instrument(device)).toBe(device);
    const own = new Map(
      Object.getOwnPropertyNames(device).map((name) => [name, Object.getOwnPropertyDescriptor(device, name)?.value]),
    );
    const queue = new Map(
      Object.getOwnPropertyNames(device.queue).map((name) => [name, Object.getOwnPropertyDescriptor(device.queue, name)?.value]),
    );
    expect(instrument(device)).toBe(device);
    deviceArena(device, 1024, { checked: true }); // the checked hook switches on: nothing is wrapped again
    alloc(deviceArena(device, 1024, { checked: true }), 'float32', 4);
    for (const [name, value] of own) expect(Object.getOwnPropertyDescriptor(device, name)?.value).toBe(value);
    for (const [name, value] of queue) expect(Object.getOwnPropertyDescriptor(device.queue, name)?.value).toBe(value);
  });

  test('refuses what is not a device', () => {
    expect(() => instrument({} as never)).toThrow(InvalidArgumentError);
    expect(() => instrument(undefined as never)).toThrow(/instrument\(device\) needs a GPUDevice, got undefined/);
  });

  test('a capture, checked mode and graphs leave every WebGPU prototype as Dawn made it', async () => {
    const arena = deviceArena(device, 4096, { checked: true });
    const pipeline = compile(device, 'read_write');
    const x = alloc(arena, 'float32', [64]);
    const y = alloc(arena, 'float32', [64]);
    const readback = device.createBuffer({ size: 256, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    let during: Map<object, Map<string, unknown>> | undefined;
    const graph = await capture(device, () => {
      step(device, pipeline, [x, y], 2);
      during = new Map([...prototypes.keys()].map((proto) => [proto, methodsOf(proto)]));
    });
    expect(during).toEqual(prototypes); // not even while the step runs
    graph.replay();
    await readback.mapAsync(GPUMapMode.READ);
    readback.unmap();
    for (const [proto, methods] of prototypes) expect(methodsOf(proto)).toEqual(methods);
    graph.dispose();
  });

  test("the reported bug: a checked arena's first carve inside a capture keeps the usage checks on for good", async () => {
    await onFreshDevice('first-carve-inside', async (fresh) => {
      const [x, y] = pair(fresh);
      const conflicting = compile(fresh, 'read');
      const fine = compile(fresh, 'read_write');
      const slab = deviceSlab(fresh, 4096); // checks are off: no checked arena yet
      const graph = await capture(fresh, () => {
        // The first checked arena on this device, and its first carve, inside the capture.
        const checked = new Arena(slab, { checked: true, alignment: fresh.limits.minStorageBufferOffsetAlignment });
        const scratch = alloc(checked, 'float32', [64]);
        step(fresh, fine, [x, scratch], 1);
      });
      graph.replay();
      // Before the owner, capture's restore took the checks off again here: now they stay.
      expect(() => step(fresh, conflicting, [x, y], 1)).toThrow(UsageConflictError);
      expect(() =>
        capture(fresh, () => {
          step(fresh, conflicting, [x, y], 1);
        }),
      ).toThrow(UsageConflictError);
      const graph2 = await capture(fresh, () => step(fresh, fine, [x, y], 1));
      graph2.replay();
    });
  });
});

describe('checking switches on while encoders are open', () => {
  /** Set the read-only/writable pipeline and bind `x` (read-only) and `y` (writable) of one slab: a usage conflict. */
  function conflictingDispatch(on: GPUDevice, pass: GPUComputePassEncoder, x: GpuArray, y: GpuArray): () => void {
    const conflicting = compile(on, 'read');
    pass.setPipeline(conflicting);
    pass.setBindGroup(0, bindGroup(on, conflicting.getBindGroupLayout(0), [x, y]));
    return () => pass.dispatchWorkgroups(1);
  }

  test("an encoder made before the device's first checked arena is checked from its next pass and copy on (the audit's repro)", async () => {
    await onFreshDevice('encoder-first', async (fresh) => {
      pair(fresh); // Pol meets the device: checks off
      fresh.pushErrorScope('validation');
      const encoder = fresh.createCommandEncoder();
      expect(Object.getOwnPropertyNames(encoder)).toEqual([]); // noted, not wrapped
      const [x, y] = pair(fresh, true); // the first checked arena and carve
      const pass = encoder.beginComputePass();
      expect(conflictingDispatch(fresh, pass, x, y)).toThrow(UsageConflictError);
      pass.end();
      expect(() => encoder.copyBufferToBuffer(x.buffer, x.offset, y.buffer, y.offset, 64)).toThrow(UsageConflictError);
      fresh.queue.submit([encoder.finish()]);
      expect(await fresh.popErrorScope()).toBeNull(); // refused before the device saw it
    });
  });

  test('a checked arena switches checks on as it is made: a pass begun before its first carve is checked', async () => {
    await onFreshDevice('arena-then-pass', async (fresh) => {
      const arena = deviceArena(fresh, 4096, { checked: true });
      const encoder = fresh.createCommandEncoder();
      const pass = encoder.beginComputePass();
      const [x, y] = [alloc(arena, 'float32', [64]), alloc(arena, 'float32', [64])];
      expect(conflictingDispatch(fresh, pass, x, y)).toThrow(UsageConflictError);
      pass.end();
      encoder.finish();
    });
  });

  test('the limit: a pass begun before checking switched on is not checked, and WebGPU reports its conflict later', async () => {
    await onFreshDevice('pass-first', async (fresh) => {
      pair(fresh);
      const encoder = fresh.createCommandEncoder();
      const pass = encoder.beginComputePass();
      const [x, y] = pair(fresh, true);
      const dispatch = conflictingDispatch(fresh, pass, x, y);
      const reported = await validationError(fresh, () => {
        dispatch();
        pass.end();
        fresh.queue.submit([encoder.finish()]);
      });
      expect(reported).not.toBeNull();
      // A pass begun on that encoder now is checked.
      const later = fresh.createCommandEncoder();
      expect(conflictingDispatch(fresh, later.beginComputePass(), x, y)).toThrow(UsageConflictError);
    });
  });

  test.each([
    [15, true],
    [16, false],
  ])(
    'the limit: with %i encoders made after it, an encoder made before checking switched on is checked: %s',
    async (after, checked) => {
      await onFreshDevice(`ring-${after}`, async (fresh) => {
        pair(fresh);
        const encoder = fresh.createCommandEncoder();
        for (let i = 0; i < after; i++) fresh.createCommandEncoder().finish();
        const [x, y] = pair(fresh, true);
        const pass = encoder.beginComputePass();
        const dispatch = conflictingDispatch(fresh, pass, x, y);
        if (checked) {
          expect(dispatch).toThrow(UsageConflictError);
          pass.end();
          encoder.finish();
        } else {
          const reported = await validationError(fresh, () => {
            dispatch();
            pass.end();
            fresh.queue.submit([encoder.finish()]);
          });
          expect(reported).not.toBeNull();
        }
      });
    },
  );
});

describe('hooks switch on and off behind wrappers that stay (a property over random sequences)', () => {
  type Op = 'instrument' | 'capture' | 'capture with a first checked arena' | 'checked carve' | 'replay' | 'conflict';
  const ops: readonly Op[] = [
    'instrument',
    'capture',
    'capture with a first checked arena',
    'checked carve',
    'replay',
    'conflict',
  ];

  test('any sequence: the wrappers never change after first contact, no prototype changes, and checking, once on, stays on', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom(...ops), { minLength: 1, maxLength: 8 }), async (sequence) => {
        await onFreshDevice('property', async (fresh) => {
          const [x, y] = pair(fresh); // first contact
          const fine = compile(fresh, 'read_write');
          const conflicting = compile(fresh, 'read');
          const wrappers = new Map(
            Object.getOwnPropertyNames(fresh).map((n) => [n, Object.getOwnPropertyDescriptor(fresh, n)?.value]),
          );
          const graphs: Awaited<ReturnType<typeof capture>>[] = [];
          let checkedOn = false; // the model
          for (const op of sequence) {
            if (op === 'instrument') expect(instrument(fresh)).toBe(fresh);
            else if (op === 'checked carve') {
              alloc(deviceArena(fresh, 1024, { checked: true }), 'float32', [4]);
              checkedOn = true;
            } else if (op === 'capture' || op === 'capture with a first checked arena') {
              // A checked arena made inside the capture, over a slab made before (a capture refuses createBuffer).
              const checked = op === 'capture' ? undefined : deviceSlab(fresh, 1024);
              const alignment = fresh.limits.minStorageBufferOffsetAlignment;
              graphs.push(
                await capture(fresh, () => {
                  if (checked !== undefined) alloc(new Arena(checked, { checked: true, alignment }), 'float32', [4]);
                  step(fresh, fine, [x, y], 1);
                }),
              );
              if (checked !== undefined) checkedOn = true;
              expect(capturing(x)).toBe(false);
            } else if (op === 'replay') graphs.at(-1)?.replay();
            else {
              // An unchecked device lets the conflict through to WebGPU, which reports it asynchronously.
              fresh.pushErrorScope('validation');
              let threw: unknown;
              try {
                step(fresh, conflicting, [x, y], 1);
              } catch (e) {
                threw = e;
              }
              const reported = await fresh.popErrorScope();
              expect(threw instanceof UsageConflictError).toBe(checkedOn);
              expect(reported !== null).toBe(!checkedOn);
            }
            for (const [name, value] of wrappers) expect(Object.getOwnPropertyDescriptor(fresh, name)?.value).toBe(value);
            for (const [proto, methods] of prototypes) expect(methodsOf(proto)).toEqual(methods);
          }
        });
      }),
      { numRuns: 12 },
    );
  });
});

describe('third-party WGSL: instrument first, or compile first', () => {
  const dispatches = 29;

  test('instrument(device) before compiling: a steady step creates no bind group, and checked mode sees every conflict', async () => {
    await onFreshDevice('instrument-first', (fresh) => {
      instrument(fresh);
      const conflicting = compile(fresh, 'read'); // third-party code compiles before any arena exists
      const pipeline = compile(fresh, 'read_write');
      const [x, y] = pair(fresh);
      step(fresh, pipeline, [x, y], dispatches);
      const calls = countCalls(fresh, ['createBindGroup']);
      try {
        for (let i = 0; i < 5; i++) step(fresh, pipeline, [x, y], dispatches);
        expect(calls.counts.createBindGroup).toBe(0);
      } finally {
        calls.restore();
      }
      expect(() => step(fresh, conflicting, pair(fresh, true), 1)).toThrow(/group 0 binding 0 as 'read-only-storage'/);
    });
  });

  test('compiled before Pol met the device: as the README says, a layout asked for at every dispatch misses the cache; a held one hits', async () => {
    await onFreshDevice('compile-first', (fresh) => {
      const pipeline = compile(fresh, 'read_write');
      const [x, y] = pair(fresh);
      step(fresh, pipeline, [x, y], dispatches);
      const calls = countCalls(fresh, ['createBindGroup']);
      try {
        step(fresh, pipeline, [x, y], dispatches);
        expect(calls.counts.createBindGroup).toBe(dispatches); // Dawn hands out a new layout object each time
        calls.counts.createBindGroup = 0;
        const layout = pipeline.getBindGroupLayout(0);
        for (let i = 0; i < 3; i++) bindGroup(fresh, layout, [x, y]);
        expect(calls.counts.createBindGroup).toBe(1);
      } finally {
        calls.restore();
      }
    });
  });

  test('compiled before Pol met the device: checked mode cannot read that pipeline, and WebGPU reports the conflict itself', async () => {
    await onFreshDevice('compile-first-checked', async (fresh) => {
      const conflicting = compile(fresh, 'read');
      const xy = pair(fresh, true);
      expect(await validationError(fresh, () => step(fresh, conflicting, xy, 1))).toMatch(/synchronization scope/);
    });
  });
});

describe('createBindGroup reads the entries before the device does', () => {
  let layout: GPUBindGroupLayout;
  beforeAll(() => {
    layout = device.createBindGroupLayout({
      entries: [0, 1].map((binding) => ({ binding, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'storage' as const } })),
    });
  });

  test('a released array of a checked arena is a StaleArrayError, not a process abort (the README pattern)', () => {
    const arena = deviceArena(device, 4096, { checked: true });
    const keep = alloc(arena, 'float32', 4);
    const stale = scratchspace(arena, (frame) => alloc(frame, 'float32', 4));
    const calls = countCalls(Object.getPrototypeOf(device) as object, ['createBindGroup']);
    try {
      expect(() =>
        device.createBindGroup({
          layout,
          entries: [
            { binding: 0, resource: keep },
            { binding: 1, resource: stale },
          ],
        }),
      ).toThrow(StaleArrayError);
      expect(calls.counts.createBindGroup).toBe(0); // Dawn never saw it
    } finally {
      calls.restore();
    }
    expect(() => bindGroup(device, layout, [keep, stale])).toThrow(StaleArrayError);
    // and the device goes on working
    device.createBindGroup({
      layout,
      entries: [keep, alloc(arena, 'float32', 4)].map((resource, binding) => ({ binding, resource })),
    });
  });

  test("one device's arrays bound on another device are refused synchronously, creating nothing", async () => {
    const other = await requestDevice('other');
    try {
      const mine = alloc(deviceArena(device, 1024, { label: 'mine' }), 'float32', 4);
      const theirs = alloc(deviceArena(other, 1024, { label: 'theirs' }), 'float32', 4);
      const calls = countCalls(Object.getPrototypeOf(device) as object, ['createBindGroup']);
      try {
        expect(() => bindGroup(device, layout, [mine, theirs])).toThrow(InvalidArgumentError);
        expect(() => bindGroup(device, layout, [mine, theirs])).toThrow(
          /bindings\[1\] is a GpuArray of device slab 'theirs', which belongs to device 'other', not to device 'instrumented'/,
        );
        const entries = [mine, theirs].map((resource, binding) => ({ binding, resource }));
        expect(() => device.createBindGroup({ layout, entries })).toThrow(
          /float32\[4\] of device slab 'theirs'.*belongs to device 'other'/,
        );
        expect(() => device.createBindGroup({ layout, entries: [{ binding: 0, resource: { buffer: theirs.buffer } }] })).toThrow(
          InvalidArgumentError,
        );
        expect(calls.counts.createBindGroup).toBe(0);
      } finally {
        calls.restore();
      }
    } finally {
      other.destroy();
    }
  });
});

describe('buffers of your own inside a captured step', () => {
  test('a readback target written by copyBufferToBuffer: destroying it invalidates the graph at once', async () => {
    const arena = deviceArena(device, 4096);
    const y = alloc(arena, 'float32', [4]);
    upload(y, Float32Array.of(1, 2, 3, 4));
    const readback = device.createBuffer({
      size: 16,
      usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
      label: 'readback',
    });
    const graph = await capture(device, () => {
      const encoder = device.createCommandEncoder();
      encoder.copyBufferToBuffer(y.buffer, y.offset, readback, 0, 16);
      device.queue.submit([encoder.finish()]);
    });
    graph.replay();
    await readback.mapAsync(GPUMapMode.READ);
    expect(Array.from(new Float32Array(readback.getMappedRange().slice(0)))).toEqual([1, 2, 3, 4]);
    readback.unmap();
    readback.destroy();
    expect(graph.valid).toBe(false);
    expect(graph.invalidReason).toMatch(/buffer 'readback'.*destroyed/);
    const calls = countCalls(device, ['createCommandEncoder']);
    try {
      expect(() => graph.replay()).toThrow(GraphInvalidError);
      expect(calls.counts.createCommandEncoder).toBe(0);
    } finally {
      calls.restore();
    }
  });

  test('a buffer made before Pol met the device cannot be watched: the capture fails, saying to instrument first', async () => {
    await onFreshDevice('made-before', async (fresh) => {
      const early = fresh.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST, label: 'early' });
      const y = alloc(deviceArena(fresh, 4096), 'float32', [4]);
      const arena = y; // keep the arena's array alive for the capture
      expect(() =>
        capture(fresh, () => {
          const encoder = fresh.createCommandEncoder();
          encoder.copyBufferToBuffer(arena.buffer, arena.offset, early, 0, 16);
          fresh.queue.submit([encoder.finish()]);
        }),
      ).toThrow(CaptureFailedError);
      expect(() =>
        capture(fresh, () => {
          const encoder = fresh.createCommandEncoder();
          encoder.copyBufferToBuffer(arena.buffer, arena.offset, early, 0, 16);
          fresh.queue.submit([encoder.finish()]);
        }),
      ).toThrow(/buffer 'early'.*created before Pol met device 'made-before'.*instrument\(device\)/s);
      // made after: the same step captures
      const later = fresh.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
      const graph = await capture(fresh, () => {
        const encoder = fresh.createCommandEncoder();
        encoder.copyBufferToBuffer(arena.buffer, arena.offset, later, 0, 16);
        fresh.queue.submit([encoder.finish()]);
      });
      expect(graph.valid).toBe(true);
    });
  });

  test("a slab's buffer destroyed directly is a destroyed slab: graphs invalid, carves and uploads refused", async () => {
    const arena = deviceArena(device, 4096, { label: 'direct' });
    const before = mark(arena);
    const x = alloc(arena, 'float32', [4]);
    const y = alloc(deviceArena(device, 1024), 'float32', [4]);
    const graph = await capture(device, () => {
      const encoder = device.createCommandEncoder();
      encoder.copyBufferToBuffer(x.buffer, x.offset, y.buffer, y.offset, 16);
      device.queue.submit([encoder.finish()]);
    });
    arena.slab.buffer.destroy();
    expect(arena.slab.destroyed).toBe(true);
    expect(graph.invalidReason).toMatch(/device slab 'direct'/);
    expect(() => upload(x, new Float32Array(4))).toThrow(/destroyed/);
    expect(() => download(x)).toThrow(/destroyed/);
    retract(arena, before);
    expect(() => alloc(arena, 'float32', [8])).toThrow(/destroyed/);
  });
});
