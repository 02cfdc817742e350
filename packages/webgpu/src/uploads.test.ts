/**
 * Batched uploads on a real device: a flush leaves every array exactly as one `upload` each would,
 * with one `writeBuffer` per run of neighbours; arrays outside the batch are never touched; bad
 * input is refused with a typed error before anything is written.
 */
import { Arena, mark, retract, StaleArrayError } from '@pol/arena';
import { alloc, CaptureViolation, type DType, InvalidArgumentError, InvalidShapeError, scratchspace } from '@pol/core';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  bindGroup,
  capture,
  DeviceLostError,
  deviceArena,
  deviceSlab,
  download,
  type GpuArray,
  upload,
  uploadAll,
  uploadBatch,
} from './index.js';
import { countCalls, GPUBufferUsage, GPUMapMode, requestDevice } from './test-support/gpu.js';

let device: GPUDevice;
beforeAll(async () => {
  device = await requestDevice('uploads');
});
afterAll(() => device.destroy());

/** Every byte of a slab. */
async function slabBytes(arena: Arena<'gpu'>): Promise<Uint8Array> {
  const size = arena.slab.byteLength;
  const staging = device.createBuffer({ size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const encoder = device.createCommandEncoder();
  encoder.copyBufferToBuffer(arena.slab.buffer, 0, staging, 0, size);
  device.queue.submit([encoder.finish()]);
  await staging.mapAsync(GPUMapMode.READ);
  const bytes = new Uint8Array(staging.getMappedRange().slice(0));
  staging.destroy();
  return bytes;
}

/** The bytes of each array (its byteLength, from its offset): what its users can read. */
function arrayBytes(all: Uint8Array, arrays: readonly GpuArray[]): number[][] {
  return arrays.map((a) => Array.from(all.subarray(a.offset, a.offset + a.byteLength)));
}

const dtypes: readonly DType[] = ['float32', 'int32', 'uint8', 'uint16', 'float64'];

function fill(dtype: DType, n: number, seed: number): ArrayBufferView {
  const size = ({ float32: 4, int32: 4, uint8: 1, uint16: 2, float64: 8 } as Record<string, number>)[dtype] ?? 1;
  const bytes = new Uint8Array(n * size);
  for (let i = 0; i < bytes.length; i++) bytes[i] = (seed * 131 + i * 17) & 0xff;
  const T = { float32: Float32Array, int32: Int32Array, uint8: Uint8Array, uint16: Uint16Array, float64: Float64Array }[
    dtype as 'float32'
  ];
  return new T(bytes.buffer);
}

describe('uploadBatch', () => {
  test('neighbours share one writeBuffer, and read back what was set', async () => {
    const uniforms = deviceArena(device, 1 << 14, { usage: GPUBufferUsage.UNIFORM });
    const params = Array.from({ length: 12 }, () => alloc(uniforms, 'float32', [4]));
    const batch = uploadBatch(params);
    expect([batch.writes, batch.bytes]).toEqual([1, 11 * 256 + 16]);
    params.forEach((u, i) => {
      batch.data(u).fill(i);
    });
    const calls = countCalls(device.queue, ['writeBuffer']);
    try {
      batch.flush();
      expect(calls.counts.writeBuffer).toBe(1);
    } finally {
      calls.restore();
    }
    for (let i = 0; i < params.length; i++)
      expect(Array.from((await download(params[i] as GpuArray<'float32'>)).data)).toEqual([i, i, i, i]);
    expect(batch.data(3)).toBe(batch.data(params[3] as GpuArray<'float32'>)); // by index too, the same view
    expect(String(batch)).toMatch(/UploadBatch\(12 arrays in 1 writes of 2832 bytes/);
  });

  test('an array between two members splits the run, and keeps its bytes', async () => {
    const arena = deviceArena(device, 4096);
    const a = alloc(arena, 'float32', [4]);
    const between = alloc(arena, 'float32', [4]);
    const b = alloc(arena, 'float32', [4]);
    upload(between, Float32Array.of(7, 7, 7, 7));
    const batch = uploadBatch([b, a]); // any order
    expect(batch.writes).toBe(2);
    batch.set(a, Float32Array.of(1, 2, 3, 4));
    batch.set(b, Float32Array.of(5, 6, 7, 8));
    batch.flush();
    expect(Array.from((await download(between)).data)).toEqual([7, 7, 7, 7]);
    expect(Array.from((await download(a)).data)).toEqual([1, 2, 3, 4]);
    expect(Array.from((await download(b)).data)).toEqual([5, 6, 7, 8]);
  });

  test('arrays of several slabs and Similar buffers: a run per buffer', () => {
    const one = deviceArena(device, 4096);
    const two = deviceArena(device, 4096);
    const batch = uploadBatch([alloc(one, 'int32', 2), alloc(two, 'int32', 2), alloc(one, 'int32', 2)]);
    expect(batch.writes).toBe(2);
  });

  test('property: a flush leaves every array as one upload each would, members and others alike', async () => {
    const layouts = fc.array(
      fc.record({ dtype: fc.constantFrom(...dtypes), n: fc.integer({ min: 0, max: 80 }), member: fc.boolean() }),
      {
        minLength: 1,
        maxLength: 10,
      },
    );
    await fc.assert(
      fc.asyncProperty(layouts, fc.integer({ min: 1, max: 1000 }), async (specs, seed) => {
        if (!specs.some((s) => s.member)) return;
        // Twin arenas with the same layout and the same data in every array.
        const twins = [deviceArena(device, 1 << 15), deviceArena(device, 1 << 15)];
        const [batched, separate] = twins.map((arena) => specs.map((s) => alloc(arena, s.dtype, [s.n]) as GpuArray)) as [
          GpuArray[],
          GpuArray[],
        ];
        for (const arrays of [batched, separate]) {
          arrays.forEach((a, i) => {
            upload(a, fill(a.dtype, a.length, seed + i) as never);
          });
        }
        const members = specs.map((s, i) => (s.member ? i : -1)).filter((i) => i >= 0);
        const batch = uploadBatch(members.map((i) => batched[i] as GpuArray));
        members.forEach((i, k) => {
          const spec = specs[i] as { dtype: DType; n: number };
          const data = fill(spec.dtype, spec.n, seed * 7 + i);
          batch.set(k, data as never);
          upload(separate[i] as GpuArray, data as never);
        });
        batch.flush();
        expect(batch.writes).toBeLessThanOrEqual(members.length);
        const [got, want] = await Promise.all(twins.map(slabBytes));
        expect(arrayBytes(got as Uint8Array, batched)).toEqual(arrayBytes(want as Uint8Array, separate));
        for (const arena of twins) arena.slab.destroy();
      }),
      { numRuns: 25 },
    );
  });

  test('feeds a replay: flush, then replay, as upload then replay', async () => {
    const module = device.createShaderModule({
      code: `@group(0) @binding(0) var<uniform> u: vec4f;
      @group(0) @binding(1) var<storage, read_write> y: array<f32>;
      @compute @workgroup_size(4) fn main(@builtin(global_invocation_id) id: vec3u) { y[id.x] = y[id.x] * u.x + u.y; }`,
    });
    const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
    const run = (uniforms: Arena<'gpu'>, arena: Arena<'gpu'>) => {
      const u = alloc(uniforms, 'float32', [4]);
      const y = alloc(arena, 'float32', [4]);
      upload(y, Float32Array.of(1, 2, 3, 4));
      const step = () => {
        const encoder = device.createCommandEncoder();
        const pass = encoder.beginComputePass();
        pass.setPipeline(pipeline);
        pass.setBindGroup(0, bindGroup(device, pipeline.getBindGroupLayout(0), [u, y]));
        pass.dispatchWorkgroups(1);
        pass.end();
        device.queue.submit([encoder.finish()]);
      };
      return { u, y, step };
    };
    const a = run(deviceArena(device, 1024, { usage: GPUBufferUsage.UNIFORM }), deviceArena(device, 1024));
    const b = run(deviceArena(device, 1024, { usage: GPUBufferUsage.UNIFORM }), deviceArena(device, 1024));
    const batch = uploadBatch([a.u]);
    batch.set(a.u, Float32Array.of(2, 1, 0, 0));
    batch.flush();
    upload(b.u, Float32Array.of(2, 1, 0, 0));
    const [ga, gb] = [await capture(device, a.step), await capture(device, b.step)];
    batch.data(a.u).set([3, -1, 0, 0]);
    batch.flush();
    ga.replay();
    upload(b.u, Float32Array.of(3, -1, 0, 0));
    gb.replay();
    expect(Array.from((await download(a.y)).data)).toEqual(Array.from((await download(b.y)).data));
    expect(Array.from((await download(a.y)).data)).toEqual([8, 14, 20, 26]);
  });

  test('an empty array is kept, and written by no run', async () => {
    const arena = deviceArena(device, 4096);
    const empty = alloc(arena, 'float32', [0]);
    const x = alloc(arena, 'float32', [2]);
    const batch = uploadBatch([empty, x]);
    expect(batch.data(empty).length).toBe(0);
    batch.set(x, Float32Array.of(1, 2));
    batch.flush();
    expect(Array.from((await download(x)).data)).toEqual([1, 2]);
  });

  describe('refuses bad input with a typed error, writing nothing', () => {
    const none = () => countCalls(device.queue, ['writeBuffer']);
    test.each<[string, () => unknown, RegExp]>([
      [
        'not an array',
        () => uploadBatch(alloc(deviceArena(device, 1024), 'float32', 2) as never),
        /needs an array of GpuArrays, got a GpuArray/,
      ],
      ['no array', () => uploadBatch([]), /at least one array/],
      ['a TypedArray', () => uploadBatch([new Float32Array(2)] as never), /arrays\[0\] needs a GpuArray/],
      [
        'the same array twice',
        () => {
          const x = alloc(deviceArena(device, 1024), 'float32', 2);
          return uploadBatch([x, x]);
        },
        /overlaps/,
      ],
      [
        'a destroyed slab’s array',
        () => {
          const slab = deviceSlab(device, 1024);
          const x = alloc(new Arena(slab), 'float32', 2);
          slab.destroy();
          return uploadBatch([x]);
        },
        /destroyed/,
      ],
    ])('%s', (_name, f, message) => {
      const calls = none();
      try {
        expect(f).toThrow(InvalidArgumentError);
        expect(f).toThrow(message);
        expect(calls.counts.writeBuffer).toBe(0);
      } finally {
        calls.restore();
      }
    });

    test('arrays of two devices', async () => {
      const other = await requestDevice('uploads other');
      try {
        const x = alloc(deviceArena(device, 1024), 'float32', 2);
        const y = alloc(deviceArena(other, 1024), 'float32', 2);
        expect(() => uploadBatch([x, y])).toThrow(/arrays\[1\].*is on device 'uploads other'.*a batch per device/s);
      } finally {
        other.destroy();
      }
    });

    test('data and set of a stranger, the wrong dtype or the wrong length; and the host copy unchanged', () => {
      const arena = deviceArena(device, 1024);
      const x = alloc(arena, 'float32', [2]);
      const stranger = alloc(arena, 'float32', [2]);
      const batch = uploadBatch([x]);
      batch.set(x, Float32Array.of(1, 2));
      expect(() => batch.data(stranger)).toThrow(/not one of the batch's 1 arrays/);
      expect(() => batch.data(1)).toThrow(InvalidArgumentError);
      expect(() => batch.set(stranger, Float32Array.of(3, 4))).toThrow(InvalidArgumentError);
      expect(() => batch.set(x, Int32Array.of(3, 4) as never)).toThrow(/batch\.set\(array, data\) into .* got int32 data/);
      expect(() => batch.set(x, Float32Array.of(3))).toThrow(InvalidShapeError);
      expect(Array.from(batch.data(x))).toEqual([1, 2]);
    });

    test('uploadAll: pairs that are not pairs', () => {
      const x = alloc(deviceArena(device, 1024), 'float32', [2]);
      expect(() => uploadAll([x] as never)).toThrow(/\[array, data\] pairs/);
      const calls = none();
      try {
        expect(() => uploadAll([[x, Int32Array.of(1, 2)]])).toThrow(InvalidArgumentError);
        expect(calls.counts.writeBuffer).toBe(0);
      } finally {
        calls.restore();
      }
    });
  });

  describe('flush refuses, writing nothing', () => {
    test('once a slab of the batch is destroyed', () => {
      const slab = deviceSlab(device, 1024);
      const batch = uploadBatch([alloc(new Arena(slab), 'float32', 2)]);
      slab.destroy();
      expect(() => batch.flush()).toThrow(/batched upload into .*destroyed/);
    });

    test('once an array of a checked arena is released', () => {
      const arena = deviceArena(device, 4096, { checked: true });
      const keep = alloc(arena, 'float32', 2);
      const m = mark(arena);
      const gone = alloc(arena, 'float32', 2);
      const batch = uploadBatch([keep, gone]);
      retract(arena, m);
      const calls = countCalls(device.queue, ['writeBuffer']);
      try {
        expect(() => batch.flush()).toThrow(StaleArrayError);
        expect(calls.counts.writeBuffer).toBe(0);
      } finally {
        calls.restore();
      }
    });

    test('while the device records a capture', async () => {
      const arena = deviceArena(device, 4096);
      const x = alloc(arena, 'float32', 4);
      const batch = uploadBatch([x]);
      let error: unknown;
      await capture(device, () => {
        try {
          batch.flush();
        } catch (e) {
          error = e;
        }
        const encoder = device.createCommandEncoder();
        encoder.clearBuffer(x.buffer, x.offset, x.size);
        device.queue.submit([encoder.finish()]);
      });
      expect(error).toBeInstanceOf(CaptureViolation);
      expect(String(error)).toMatch(/before each replay/);
    });

    test('on a lost device', async () => {
      const gone = await requestDevice('uploads lost');
      const batch = uploadBatch([alloc(deviceArena(gone, 1024), 'float32', 2)]);
      gone.destroy();
      expect(() => batch.flush()).toThrow(DeviceLostError);
    });
  });
});

describe('uploadAll', () => {
  test('writes each pair as upload would, neighbours in one write', async () => {
    const arena = deviceArena(device, 4096);
    const x = alloc(arena, 'float32', [3]);
    const labels = alloc(arena, 'int32', [2]);
    const calls = countCalls(device.queue, ['writeBuffer']);
    try {
      uploadAll([
        [x, Float32Array.of(0.5, 1.5, 2.5)],
        [labels, Int32Array.of(1, 0)],
      ]);
      expect(calls.counts.writeBuffer).toBe(1);
    } finally {
      calls.restore();
    }
    expect(Array.from((await download(x)).data)).toEqual([0.5, 1.5, 2.5]);
    expect(Array.from((await download(labels)).data)).toEqual([1, 0]);
  });

  test('inside a frame, the arrays of the frame too', async () => {
    const arena = deviceArena(device, 4096);
    await scratchspace(arena, async (frame) => {
      const t = alloc(frame, 'uint8', [3]);
      uploadAll([[t, Uint8Array.of(1, 2, 3)]]);
      expect(Array.from((await download(t)).data)).toEqual([1, 2, 3]);
    });
  });
});
