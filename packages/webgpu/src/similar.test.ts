import { alloc, CaptureViolation, capturing, InvalidArgumentError, Similar, scratchspace, Undef } from '@pol/core';
import { commit, rollback, savepoint } from '@pol/core/backend';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  capture,
  DeviceLostError,
  deviceArena,
  download,
  GpuAllocationError,
  GpuLimitError,
  isGpuArray,
  upload,
} from './index.js';
import { countCalls, failing, GPUBufferUsage, nextTask, requestDevice, watchCreateBuffer } from './test-support/gpu.js';

let device: GPUDevice;
beforeAll(async () => {
  device = await requestDevice('similar');
});
afterAll(() => device.destroy());

function spyDestroy(buffers: GPUBuffer[]): { destroyed: GPUBuffer[] } {
  const destroyed: GPUBuffer[] = [];
  for (const buffer of buffers) {
    const original = buffer.destroy;
    buffer.destroy = () => {
      destroyed.push(buffer);
      original.call(buffer);
    };
  }
  return { destroyed };
}

describe('Similar(gpuArray)', () => {
  test('allocates a GPUBuffer of its own on the same device, with the same usage', async () => {
    const arena = deviceArena(device, 4096, { usage: GPUBufferUsage.INDIRECT });
    const x = alloc(arena, 'float32', 4);
    const calls = countCalls(device, ['createBuffer']);
    const y = alloc(Similar(x), 'int32', [2, 3]);
    calls.restore();
    expect(calls.counts.createBuffer).toBe(1);
    expect(isGpuArray(y)).toBe(true);
    expect(y.device).toBe(device);
    expect(y.buffer).not.toBe(x.buffer);
    expect([y.offset, y.size, y.dtype, y.dims]).toEqual([0, 24, 'int32', [2, 3]]);
    expect(y.buffer.usage).toBe(x.buffer.usage);
    expect(String(Similar(x))).toBe("Similar(float32[4] on device 'similar')");
    upload(y, Int32Array.of(1, 2, 3, 4, 5, 6));
    expect(Array.from((await download(y)).data)).toEqual([1, 2, 3, 4, 5, 6]);
    y.buffer.destroy();
  });

  test('a frame on it destroys its buffers at close, once submitted work is done', async () => {
    const x = alloc(deviceArena(device, 1024), 'float32', 4);
    let inside: GPUBuffer[] = [];
    let spy = { destroyed: [] as GPUBuffer[] };
    scratchspace(Similar(x), (frame) => {
      const a = alloc(frame, 'float32', 16);
      const b = alloc(frame, 'uint8', 3);
      inside = [a.buffer, b.buffer];
      spy = spyDestroy(inside);
      upload(a, new Float32Array(16));
    });
    expect(spy.destroyed).toEqual([]); // not before the queue is idle
    await device.queue.onSubmittedWorkDone();
    await nextTask();
    expect(spy.destroyed).toEqual(inside);
  });

  test('arrays of a closed frame are refused', () => {
    const x = alloc(deviceArena(device, 1024), 'float32', 4);
    const escaped = scratchspace(Similar(x), (frame) => alloc(frame, 'float32', 4));
    expect(() => upload(escaped, new Float32Array(4))).toThrow(/frame on Similar/);
    expect(() => download(escaped)).toThrow(InvalidArgumentError);
  });

  test('checks the device limits before creating anything', () => {
    const x = alloc(deviceArena(device, 1024), 'uint8', 4);
    const calls = countCalls(device, ['createBuffer']);
    try {
      expect(() => alloc(Similar(x), 'uint8', device.limits.maxBufferSize + 4)).toThrow(GpuLimitError);
      expect(() => alloc(Similar(x), 'uint8', device.limits.maxStorageBufferBindingSize + 4)).toThrow(
        /maxStorageBufferBindingSize/,
      );
      expect(calls.counts.createBuffer).toBe(0);
    } finally {
      calls.restore();
    }
  });

  test('a failing createBuffer is a GpuAllocationError', () => {
    const x = alloc(deviceArena(device, 1024), 'float32', 4);
    const restore = failing(device, 'createBuffer', new RangeError('out of memory'));
    try {
      expect(() => alloc(Similar(x), 'float32', 4)).toThrow(GpuAllocationError);
    } finally {
      restore();
    }
  });

  test('a spec in a frame on Similar that fails part-way destroys the buffers it made', async () => {
    const x = alloc(deviceArena(device, 1024), 'float32', 4);
    const watch = watchCreateBuffer(device, { failAt: 2 }); // the second of two outputs
    const { made } = watch;
    let spy = { destroyed: [] as GPUBuffer[] };
    try {
      scratchspace(Similar(x), (frame) => {
        expect(() => {
          alloc(frame, { a: Undef('float32', 4), b: Undef('float32', 4) });
        }).toThrow(GpuAllocationError);
        spy = spyDestroy(made);
      });
    } finally {
      watch.restore();
    }
    expect(made).toHaveLength(1);
    await device.queue.onSubmittedWorkDone();
    await nextTask();
    expect(spy.destroyed).toEqual(made);
  });

  test('an unframed spec on Similar that fails part-way destroys the buffers it made, and nothing else', async () => {
    const x = alloc(deviceArena(device, 1024), 'float32', 4);
    const kept = alloc(Similar(x), 'float32', 4); // made before, and committed: never released
    const watch = watchCreateBuffer(device, { failAt: 2 }); // the second of two outputs
    const { made } = watch;
    const spy = spyDestroy([kept.buffer]);
    let error: unknown;
    try {
      alloc(Similar(x), { a: Undef('float32', 4), b: Undef('float32', 4) });
    } catch (e) {
      error = e;
    } finally {
      watch.restore();
    }
    expect(error).toBeInstanceOf(GpuAllocationError);
    expect(made).toHaveLength(1);
    const [a] = made as [GPUBuffer];
    const aDestroyed = spyDestroy([a]);
    await device.queue.onSubmittedWorkDone();
    await nextTask();
    expect(aDestroyed.destroyed).toEqual([a]);
    expect(spy.destroyed).toEqual([]);
    upload(kept, Float32Array.of(1, 2, 3, 4)); // still alive
    kept.buffer.destroy();
  });

  test("a verb's savepoint on Similar (what @pol/verbs takes around its outputs): rollback destroys, commit keeps", async () => {
    const x = alloc(deviceArena(device, 1024), 'float32', 4);
    const space = Similar(x);
    const failed = savepoint(space);
    const out = alloc(space, 'float32', 4);
    const spy = spyDestroy([out.buffer]);
    rollback(space, failed, new Error('the kernel threw'));
    expect(() => upload(out, new Float32Array(4))).toThrow(/gone/);
    await device.queue.onSubmittedWorkDone();
    await nextTask();
    expect(spy.destroyed).toEqual([out.buffer]);
    const done = savepoint(space);
    const result = alloc(space, 'float32', 4);
    commit(space, done);
    rollback(space, done, new Error('too late: committed'));
    upload(result, Float32Array.of(1, 2, 3, 4));
    expect(Array.from((await download(result)).data)).toEqual([1, 2, 3, 4]);
    result.buffer.destroy();
  });

  test('is refused with CaptureViolation while the device records, and capturing(x) says so', async () => {
    const arena = deviceArena(device, 1024);
    const x = alloc(arena, 'float32', 4);
    expect(capturing(x)).toBe(false);
    let seen: boolean | undefined;
    let error: unknown;
    const calls = countCalls(device, ['createBuffer']);
    try {
      await capture(device, () => {
        seen = capturing(x);
        try {
          alloc(Similar(x), 'float32', 4);
        } catch (e) {
          error = e;
          throw e;
        }
      });
    } catch {
      // the step's error propagates
    } finally {
      calls.restore();
    }
    expect(seen).toBe(true);
    expect(error).toBeInstanceOf(CaptureViolation);
    expect((error as CaptureViolation).code).toBe('POL_CAPTURE_VIOLATION');
    expect((error as Error).message).toContain("Similar(float32[4] on device 'similar')");
    expect(calls.counts.createBuffer).toBe(0);
    expect(capturing(x)).toBe(false);
  });

  test('a lost device refuses it with DeviceLostError', async () => {
    const doomed = await requestDevice('doomed');
    const x = alloc(deviceArena(doomed, 1024), 'float32', 4);
    doomed.destroy();
    expect(() => alloc(Similar(x), 'float32', 4)).toThrow(DeviceLostError);
  });

  test('a frame closing on a lost device destroys at once', async () => {
    const doomed = await requestDevice('doomed-frame');
    const x = alloc(deviceArena(doomed, 1024), 'float32', 4);
    let spy = { destroyed: [] as GPUBuffer[] };
    scratchspace(Similar(x), (frame) => {
      spy = spyDestroy([alloc(frame, 'float32', 4).buffer]);
      doomed.destroy();
    });
    expect(spy.destroyed.length).toBe(1);
  });
});
