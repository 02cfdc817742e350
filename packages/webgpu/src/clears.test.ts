import { StaleArrayError } from '@pol/arena';
import { alloc, InvalidArgumentError, Similar, scratchspace, zeroArray } from '@pol/core';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { WRITE_ZEROS_MAX } from './clears.js';
import { type DeviceState, knownState, markLost } from './device.js';
import {
  bindGroup,
  capture,
  DeviceLostError,
  deviceArena,
  download,
  type GpuArray,
  instrument,
  upload,
  uploadAll,
} from './index.js';
import { GPUBufferUsage, GPUMapMode, requestDevice, thrownBy, validationOf } from './test-support/gpu.js';

// y = x + 1, element-wise: a user's dispatch that reads what zeroArray cleared.
const addOne = /* wgsl */ `
@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3u) {
  if (id.x < arrayLength(&y)) { y[id.x] = x[id.x] + 1.0; }
}`;

/**
 * A fresh device whose queue's `submit` and `writeBuffer` and device's `createCommandEncoder` are
 * counted (and logged) before Pol first touches it, so that the counts include the calls Pol makes
 * through the methods it keeps from before its wrappers (its zeros and its flushes among them).
 */
async function countedDevice(label: string) {
  const device = await requestDevice(label);
  const counts = { submit: 0, writeBuffer: 0, createCommandEncoder: 0, clearBuffer: 0 };
  const log: string[] = [];
  const submit = device.queue.submit;
  Object.defineProperty(device.queue, 'submit', {
    configurable: true,
    writable: true,
    value(this: GPUQueue, buffers: GPUCommandBuffer[]) {
      counts.submit++;
      log.push(`submit ${buffers.map((b) => b.label).join(',')}`);
      return submit.call(this, buffers);
    },
  });
  const writeBuffer = device.queue.writeBuffer;
  Object.defineProperty(device.queue, 'writeBuffer', {
    configurable: true,
    writable: true,
    value(this: GPUQueue, ...args: Parameters<GPUQueue['writeBuffer']>) {
      counts.writeBuffer++;
      log.push('write');
      return writeBuffer.apply(this, args);
    },
  });
  const createCommandEncoder = device.createCommandEncoder;
  Object.defineProperty(device, 'createCommandEncoder', {
    configurable: true,
    writable: true,
    value(this: GPUDevice, descriptor?: GPUCommandEncoderDescriptor) {
      counts.createCommandEncoder++;
      const encoder = createCommandEncoder.call(this, descriptor);
      const clear = encoder.clearBuffer;
      Object.defineProperty(encoder, 'clearBuffer', {
        configurable: true,
        writable: true,
        value(this: GPUCommandEncoder, ...args: Parameters<GPUCommandEncoder['clearBuffer']>) {
          counts.clearBuffer++;
          return clear.apply(this, args);
        },
      });
      return encoder;
    },
  });
  instrument(device); // before anything is compiled
  const module = device.createShaderModule({ code: addOne });
  const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
  const layout = pipeline.getBindGroupLayout(0);
  /** Encode y = x + 1 (not yet submitted). */
  const encodeAddOne = (x: GpuArray<'float32'>, y: GpuArray<'float32'>) => {
    const encoder = device.createCommandEncoder({ label: 'user' });
    const pass = encoder.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bindGroup(device, layout, [x, y]));
    pass.dispatchWorkgroups(Math.ceil(y.length / 64));
    pass.end();
    return encoder.finish({ label: 'user' });
  };
  const reset = () => {
    counts.submit = 0;
    counts.writeBuffer = 0;
    counts.createCommandEncoder = 0;
    counts.clearBuffer = 0;
    log.length = 0;
  };
  return { device, counts, log, reset, encodeAddOne };
}

type Counted = Awaited<ReturnType<typeof countedDevice>>;

/** Float32 lengths on either side of the write-or-clear line: zeros written, or cleared. */
const SMALL = 64;
const LARGE = WRITE_ZEROS_MAX / 4 + 64;
const sizes = [
  ['small (zeros written)', SMALL],
  ['large (a clear noted)', LARGE],
] as const;
/** What the counted device logs for a zeroArray of `n` floats: its write or its clears' submit, at the flush. */
const zeroLog = (n: number) => (n * 4 <= WRITE_ZEROS_MAX ? 'write' : 'submit pol zero');
const ARENA = 1 << 20;

const values = async (x: GpuArray) => Array.from((await download(x)).data as Float32Array);
const filled = (n: number, v: number) => new Float32Array(n).fill(v);

/** Two arrays of `n` floats, `x` filled with `v` and then zeroed, `y` the output. */
function zeroedPair(n: number, v: number) {
  const arena = deviceArena(d.device, ARENA);
  const x = alloc(arena, 'float32', [n]);
  const y = alloc(arena, 'float32', [n]);
  upload(x, filled(n, v));
  zeroArray(x);
  return { x, y };
}

let d: Counted;
beforeAll(async () => {
  d = await countedDevice('clears');
});
afterAll(() => d.device.destroy());

describe('eager zeroArray: how many calls it makes', () => {
  test("four small neighbours (a model's gradients): noted at the call, one write of zeros at the next submit, before it", async () => {
    const arena = deviceArena(d.device, ARENA);
    const grads = [0, 1, 2, 3].map(() => alloc(arena, 'float32', [16]));
    for (const g of grads) upload(g, filled(16, 3));
    d.reset();
    for (const g of grads) zeroArray(g);
    expect(d.counts).toEqual({ submit: 0, writeBuffer: 0, createCommandEncoder: 0, clearBuffer: 0 }); // noted only
    d.device.queue.submit([]);
    expect(d.counts).toEqual({ submit: 1, writeBuffer: 1, createCommandEncoder: 0, clearBuffer: 0 }); // the user's submit only
    expect(d.log).toEqual(['write', 'submit ']);
    for (const g of grads) expect(await values(g)).toEqual(Array.from(filled(16, 0)));
  });

  test('small arrays that are not neighbours get a write each, and the live array between them keeps its bytes', async () => {
    const arena = deviceArena(d.device, ARENA);
    const [a, b, c] = [0, 1, 2].map(() => alloc(arena, 'float32', [16])) as [
      GpuArray<'float32'>,
      GpuArray<'float32'>,
      GpuArray<'float32'>,
    ];
    const other = alloc(deviceArena(d.device, ARENA), 'float32', [16]); // another buffer
    for (const x of [a, b, c, other]) upload(x, filled(16, 5));
    d.reset();
    zeroArray(a);
    zeroArray(c); // b lies between them
    zeroArray(other);
    zeroArray(a); // again: the last write noted is other's, of another buffer, so a write of its own
    await d.device.queue.onSubmittedWorkDone();
    // a, c, other, a: four writes, none across b.
    expect(d.counts.writeBuffer).toBe(4);
    expect(await values(b)).toEqual(Array.from(filled(16, 5)));
    for (const x of [a, c, other]) expect(await values(x)).toEqual(Array.from(filled(16, 0)));
  });

  test('neighbours join up to the write-or-clear size, and the same array twice is one write', async () => {
    const arena = deviceArena(d.device, 4 * ARENA);
    // Each quarter of the largest write (256-byte aligned, so exact neighbours): four fill one write, the fifth starts another.
    const n = WRITE_ZEROS_MAX / 4 / 4;
    const parts = [0, 1, 2, 3, 4].map(() => alloc(arena, 'float32', [n]));
    for (const x of parts) upload(x, filled(n, 2));
    d.reset();
    for (const x of parts) zeroArray(x);
    zeroArray(parts[4] as GpuArray<'float32'>);
    d.device.queue.submit([]);
    expect(d.counts).toEqual({ submit: 1, writeBuffer: 2, createCommandEncoder: 0, clearBuffer: 0 });
    for (const x of parts) expect(await values(x)).toEqual(Array.from(filled(n, 0)));
  });

  test('four large arrays then a submit: one encoder and one submit more, not four of each', async () => {
    const arena = deviceArena(d.device, 8 * ARENA);
    const grads = [0, 1, 2, 3].map(() => alloc(arena, 'float32', [LARGE]));
    const x = alloc(arena, 'float32', [16]);
    const y = alloc(arena, 'float32', [16]);
    for (const g of grads) upload(g, filled(LARGE, 3));
    const user = d.encodeAddOne(x, y);
    d.reset();
    for (const g of grads) zeroArray(g);
    expect(d.counts).toEqual({ submit: 0, writeBuffer: 0, createCommandEncoder: 0, clearBuffer: 0 }); // noted only
    d.device.queue.submit([user]);
    expect(d.counts).toEqual({ submit: 2, writeBuffer: 0, createCommandEncoder: 1, clearBuffer: 4 });
    expect(d.log).toEqual(['submit pol zero', 'submit user']); // the clears first, in their own submit
    d.device.queue.submit([]);
    expect(d.counts.submit).toBe(3); // nothing noted, nothing added
    for (const g of grads) expect(await values(g)).toEqual(Array.from(filled(LARGE, 0)));
  });
});

describe.each(sizes)('eager zeroArray of a %s array: as if submitted at the call', (_, n) => {
  test('zeroArray then writeBuffer of the same range: the written data wins, as in submission order', async () => {
    const x = alloc(deviceArena(d.device, ARENA), 'float32', [n]);
    upload(x, filled(n, 1));
    zeroArray(x);
    upload(x, filled(n, 5));
    expect(await values(x)).toEqual(Array.from(filled(n, 5)));
    // Part of the range, through the queue's method: the rest stays cleared.
    zeroArray(x);
    d.device.queue.writeBuffer(x.buffer, x.offset + 4, Float32Array.of(9));
    const expected = filled(n, 0);
    expected[1] = 9;
    expect(await values(x)).toEqual(Array.from(expected));
    // uploadAll's batched write, too.
    zeroArray(x);
    uploadAll([[x, filled(n, 1)]]);
    expect(await values(x)).toEqual(Array.from(filled(n, 1)));
  });

  test("a user's dispatch that reads the array sees zeros, encoded after the call or before it", async () => {
    const { x, y } = zeroedPair(n, 41);
    d.device.queue.submit([d.encodeAddOne(x, y)]);
    expect(await values(y)).toEqual(Array.from(filled(n, 1)));
    // Encoded before zeroArray, submitted after it: the zeros went first, so it still reads them.
    upload(x, filled(n, 41));
    const early = d.encodeAddOne(x, y);
    zeroArray(x);
    d.device.queue.submit([early]);
    expect(await values(y)).toEqual(Array.from(filled(n, 1)));
  });

  test("readbacks see zeros: download, and a user's copy to a MAP_READ buffer and mapAsync", async () => {
    const x = alloc(deviceArena(d.device, ARENA), 'float32', [n]);
    upload(x, filled(n, 2));
    zeroArray(x);
    expect(await values(x)).toEqual(Array.from(filled(n, 0)));
    upload(x, filled(n, 2));
    zeroArray(x);
    const staging = d.device.createBuffer({ size: n * 4, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    const encoder = d.device.createCommandEncoder();
    encoder.copyBufferToBuffer(x.buffer, x.offset, staging, 0, n * 4);
    d.device.queue.submit([encoder.finish()]);
    await staging.mapAsync(GPUMapMode.READ);
    expect(Array.from(new Float32Array(staging.getMappedRange().slice(0)))).toEqual(Array.from(filled(n, 0)));
    staging.destroy();
  });

  test('onSubmittedWorkDone covers the zeros: written or submitted before the wait starts', async () => {
    const x = alloc(deviceArena(d.device, ARENA), 'float32', [n]);
    d.reset();
    zeroArray(x);
    await d.device.queue.onSubmittedWorkDone();
    expect(d.log).toEqual([zeroLog(n)]);
  });

  test("a user's invalid command buffer in the next submit does not take the zeros with it", async () => {
    const x = alloc(deviceArena(d.device, ARENA), 'float32', [n]);
    upload(x, filled(n, 3));
    zeroArray(x);
    const { error } = await validationOf(d.device, () => {
      const encoder = d.device.createCommandEncoder({ label: 'bad' });
      encoder.clearBuffer(x.buffer, 2, 4); // offsets must be multiples of 4: an invalid command buffer
      d.device.queue.submit([encoder.finish()]);
    });
    expect(error).not.toBeNull(); // the user's submit was dropped by WebGPU...
    expect(await values(x)).toEqual(Array.from(filled(n, 0))); // ...and the zeros, on their own, landed
  });

  test('a buffer destroyed after a zeroArray gets its zeros first: buffer.destroy(), slab.destroy(), a slab buffer destroyed', async () => {
    for (const how of ['Similar buffer.destroy()', 'slab.destroy()', 'slab.buffer.destroy()'] as const) {
      const arena = deviceArena(d.device, ARENA);
      const x =
        how === 'Similar buffer.destroy()'
          ? alloc(Similar(alloc(arena, 'float32', [4])), 'float32', [n])
          : alloc(arena, 'float32', [n]);
      d.reset();
      const { error } = await validationOf(d.device, () => {
        zeroArray(x);
        if (how === 'slab.destroy()') arena.slab.destroy();
        else if (how === 'slab.buffer.destroy()') arena.slab.buffer.destroy();
        else x.buffer.destroy();
        d.device.queue.submit([]); // a clear still noted here would reach a destroyed buffer: a validation error
      });
      await d.device.queue.onSubmittedWorkDone();
      expect(error, how).toBeNull();
      expect(d.log[0], how).toBe(zeroLog(n)); // before the user's submit
      expect(d.counts.clearBuffer + d.counts.writeBuffer, how).toBe(1);
    }
  });

  test('a checked frame poisons what zeroArray cleared in it: the poison lands after the zeros, as it would have', async () => {
    // What the released bytes hold after the frame, with and without a zeroArray in it.
    const leftBehind = async (zero: boolean) => {
      const arena = deviceArena(d.device, ARENA, { checked: true });
      const offset = scratchspace(arena, (frame) => {
        const t = alloc(frame, 'float32', [n]);
        upload(t, filled(n, 1));
        if (zero) zeroArray(t);
        return t.offset;
      });
      const raw = alloc(deviceArena(d.device, ARENA), 'uint32', [n]);
      const encoder = d.device.createCommandEncoder();
      encoder.copyBufferToBuffer(arena.slab.buffer, offset, raw.buffer, raw.offset, n * 4);
      d.device.queue.submit([encoder.finish()]);
      return Array.from((await download(raw)).data);
    };
    const poison = await leftBehind(false);
    expect(poison).not.toContain(0);
    expect(await leftBehind(true)).toEqual(poison);
  });

  test('zeroArray just before a capture: the step reads zeros, and the graph does not clear', async () => {
    const { x: g, y } = zeroedPair(n, 5);
    const graph = await capture(d.device, () => {
      d.device.queue.submit([d.encodeAddOne(g, y)]);
    });
    expect(graph.stats).toEqual({ submits: 1, passes: 1, dispatches: 1, copies: 0 });
    expect(await values(y)).toEqual(Array.from(filled(n, 1))); // the eager run read the zeroed g
    upload(g, filled(n, 5));
    graph.replay();
    expect(await values(y)).toEqual(Array.from(filled(n, 6)));
    expect(await values(g)).toEqual(Array.from(filled(n, 5))); // the replay does not clear g
  });
});

describe('eager zeroArray on a lost device', () => {
  test('a device lost with clears noted drops them without throwing', async () => {
    for (const how of ['device.destroy()', 'its lost promise'] as const) {
      const doomed = await countedDevice(`doomed clears (${how})`);
      const x = alloc(deviceArena(doomed.device, ARENA), 'float32', [LARGE]);
      zeroArray(x);
      doomed.reset();
      if (how === 'device.destroy()') doomed.device.destroy();
      // The fault injected: what the device's lost promise resolving does (a driver reset, say).
      else markLost(knownState(doomed.device) as DeviceState, 'unknown', 'the GPU process crashed');
      expect(() => doomed.device.queue.submit([])).not.toThrow();
      expect(doomed.log, how).toEqual(['submit ']); // the user's only: the clear was dropped
      expect(() => zeroArray(x), how).toThrow(DeviceLostError);
      if (how !== 'device.destroy()') doomed.device.destroy();
    }
  });
});

describe('bad input to an eager zeroArray: a typed error at the call, and nothing written or noted', () => {
  test.each(sizes)(
    '%s: a released checked array, an array of a destroyed slab, a destroyed Similar buffer, a lost device',
    async (_, n) => {
      const checked = deviceArena(d.device, ARENA, { checked: true });
      const stale = scratchspace(checked, (frame) => alloc(frame, 'float32', [n]));
      const dead = deviceArena(d.device, ARENA);
      const onDead = alloc(dead, 'float32', [n]);
      dead.slab.destroy();
      const similar = alloc(Similar(alloc(deviceArena(d.device, ARENA), 'float32', [4])), 'float32', [n]);
      similar.buffer.destroy();
      await d.device.queue.onSubmittedWorkDone();
      d.reset();
      expect(thrownBy(() => zeroArray(stale))).toBeInstanceOf(StaleArrayError);
      for (const gone of [onDead, similar]) {
        const error = thrownBy(() => zeroArray(gone));
        expect(error).toBeInstanceOf(InvalidArgumentError);
        expect((error as Error).message).toMatch(/Cannot zero .* is gone: .*destroyed/);
      }
      expect(d.log).toEqual([]); // nothing written
      d.device.queue.submit([]);
      expect(d.log).toEqual(['submit ']); // nothing noted: no flush before the user's submit
      const doomed = await countedDevice('doomed bad input');
      const z = alloc(deviceArena(doomed.device, ARENA), 'float32', [n]);
      doomed.device.destroy();
      doomed.reset();
      expect(thrownBy(() => zeroArray(z))).toBeInstanceOf(DeviceLostError);
      doomed.device.queue.submit([]);
      expect(doomed.log).toEqual(['submit ']);
    },
  );
});

describe('property: any sequence of zero, write, dispatch and readback keeps submission order', () => {
  const op = fc.oneof(
    fc.record({ kind: fc.constant('zero' as const), a: fc.nat(2) }),
    fc.record({ kind: fc.constant('write' as const), a: fc.nat(2), v: fc.integer({ min: 1, max: 9 }) }),
    fc.record({ kind: fc.constant('dispatch' as const), a: fc.nat(2), b: fc.nat(2) }),
    // Encoded now, submitted after the next operation: a command buffer that outlives a zeroArray.
    fc.record({ kind: fc.constant('late dispatch' as const), a: fc.nat(2), b: fc.nat(2) }),
    fc.record({ kind: fc.constant('readback' as const), a: fc.nat(2) }),
  );

  test('the device ends, and every readback sees, what a host model that runs each call at once computes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(SMALL, SMALL - 4, LARGE),
        fc.array(op, { minLength: 1, maxLength: 12 }),
        async (n, ops) => {
          const arena = deviceArena(d.device, ARENA);
          const arrays = [0, 1, 2].map(() => alloc(arena, 'float32', [n]));
          const hosts = arrays.map(() => new Float32Array(n).fill(7));
          for (const a of arrays) upload(a, filled(n, 7));
          const gpu = (i: number) => arrays[i] as GpuArray<'float32'>;
          const host = (i: number) => hosts[i] as Float32Array;
          const addOneHost = (a: number, b: number) => host(b).set(host(a).map((v) => v + 1));
          let pending: { buffer: GPUCommandBuffer; apply(): void } | undefined;
          const submitPending = () => {
            if (pending === undefined) return;
            d.device.queue.submit([pending.buffer]);
            pending.apply();
            pending = undefined;
          };
          for (const o of ops) {
            const held = pending;
            if (o.kind === 'zero') {
              zeroArray(gpu(o.a));
              host(o.a).fill(0);
            } else if (o.kind === 'write') {
              upload(gpu(o.a), filled(n, o.v));
              host(o.a).fill(o.v);
            } else if (o.kind === 'dispatch' && o.a !== o.b) {
              d.device.queue.submit([d.encodeAddOne(gpu(o.a), gpu(o.b))]);
              addOneHost(o.a, o.b);
            } else if (o.kind === 'late dispatch' && o.a !== o.b && pending === undefined) {
              const { a, b } = o;
              pending = {
                buffer: d.encodeAddOne(gpu(a), gpu(b)),
                apply: () => addOneHost(a, b),
              };
              continue;
            } else if (o.kind === 'readback') {
              expect(await values(gpu(o.a))).toEqual(Array.from(host(o.a)));
            }
            if (held !== undefined) submitPending();
          }
          submitPending();
          for (let i = 0; i < 3; i++) expect(await values(gpu(i))).toEqual(Array.from(host(i)));
          arena.slab.destroy();
        },
      ),
      { numRuns: 40 },
    );
  });
});
