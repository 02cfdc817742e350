import { StaleArrayError } from '@pol/arena';
import { alloc, type Frame, InvalidArgumentError, Similar, type Space, scratchspace, Undef, zeroArray, zeroed } from '@pol/core';
import { describeValue, familyOf } from '@pol/core/backend';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { capture, DeviceLostError, deviceArena, download, placedArena, planPlacement, upload, uploadBatch } from './index.js';
import { countCalls, requestDevice } from './test-support/gpu.js';

let device: GPUDevice;
beforeAll(async () => {
  device = await requestDevice('arrays');
});
afterAll(() => device.destroy());

describe('messages name what the user holds', () => {
  test('a GpuArray, a DeviceSlab and a Graph are called so, never by an internal class', async () => {
    const arena = deviceArena(device, 4096);
    const x = alloc(arena, 'float32', [4]);
    const checked = alloc(deviceArena(device, 4096, { checked: true }), 'float32', [4]);
    expect(describeValue(x)).toBe('a GpuArray');
    expect(describeValue(checked)).toBe('a GpuArray');
    expect(describeValue(arena.slab)).toBe('a DeviceSlab');
    const graph = await capture(device, () => {
      const encoder = device.createCommandEncoder();
      encoder.clearBuffer(x.buffer, x.offset, x.size);
      device.queue.submit([encoder.finish()]);
    });
    expect(describeValue(graph)).toBe('a Graph');
    const messages: string[] = [];
    for (const f of [
      () => upload(x, x as never),
      () => capture(device, () => {}, { arenas: [x as never] }),
      () => deviceArena(device, arena.slab as never),
      () => capture(device, graph as never),
    ]) {
      try {
        f();
      } catch (e) {
        messages.push((e as Error).message);
      }
    }
    expect(messages).toHaveLength(4);
    for (const m of messages) expect(m).not.toMatch(/Impl\b/);
    expect(messages[0]).toContain('got a GpuArray');
    expect(messages[2]).toContain('got a DeviceSlab');
    expect(messages[3]).toContain('got a Graph');
  });

  test('a planning space, a placement, a placed arena, their frames and an upload batch are called so too', async () => {
    let planning: Space<'gpu'> | undefined;
    let planningFrame: Frame<'gpu'> | undefined;
    const placement = await planPlacement(device, (space) => {
      planning = space;
      scratchspace(space, (frame) => {
        planningFrame = frame;
        alloc(frame, 'float32', [4]);
      });
    });
    const placed = placedArena(device, placement);
    try {
      const placedFrame = scratchspace(placed, (frame) => frame);
      const batch = uploadBatch([alloc(deviceArena(device, 4096), 'float32', [4])]);
      const named = [planning, planningFrame, placement, placed, placedFrame, batch].map(describeValue);
      expect(named).toEqual(['a planning space', 'a Frame', 'a Placement', 'a PlacedArena', 'a Frame', 'an UploadBatch']);
      const x = alloc(deviceArena(device, 4096), 'float32', [4]);
      const messages = [planning, planningFrame, placement, placed, placedFrame, batch].map((held) => {
        try {
          upload(x, held as never);
        } catch (e) {
          return (e as Error).message;
        }
        return 'accepted';
      });
      for (const [i, m] of messages.entries()) expect(m).toContain(`got ${named[i]}`);
      for (const m of messages) expect(m).not.toMatch(/Impl\b|PlanningSpace|MarkingFrame|PositionedSpace/);
    } finally {
      placed.destroy();
    }
  });
});

describe('zeroArray(gpuArray): the zeroing protocol, with clearBuffer', () => {
  test('clears the array and nothing around it, a byte length that is not a multiple of 4 included', async () => {
    const arena = deviceArena(device, 4096);
    const before = alloc(arena, 'uint8', [4]);
    const x = alloc(arena, 'uint8', [3]); // binding size 4: clearBuffer wants multiples of 4
    const after = alloc(arena, 'float32', [4]);
    upload(before, Uint8Array.of(7, 7, 7, 7));
    upload(x, Uint8Array.of(1, 2, 3));
    upload(after, Float32Array.of(1, 2, 3, 4));
    const calls = countCalls(device.queue, ['submit', 'writeBuffer']);
    try {
      expect(zeroArray(x)).toBe(x);
      // No submit of its own, and no write through the queue's wrapped method: a small array's zeros
      // go through the queue's own writeBuffer (clears.test.ts counts them).
      expect(calls.counts).toEqual({ submit: 0, writeBuffer: 0 });
    } finally {
      calls.restore();
    }
    expect(Array.from((await download(x)).data)).toEqual([0, 0, 0]);
    expect(Array.from((await download(before)).data)).toEqual([7, 7, 7, 7]);
    expect(Array.from((await download(after)).data)).toEqual([1, 2, 3, 4]);
  });

  test('zeroes Similar arrays, bigint dtypes and empty arrays alike', async () => {
    const x = alloc(deviceArena(device, 4096), 'float32', [2]);
    const s = alloc(Similar(x), 'int64', [3]);
    upload(s, BigInt64Array.of(5n, -6n, 7n));
    zeroArray(s);
    expect(Array.from((await download(s)).data)).toEqual([0n, 0n, 0n]);
    const empty = alloc(deviceArena(device, 1024), 'float32', [0]);
    zeroArray(empty);
    expect((await download(empty)).data.length).toBe(0);
    s.buffer.destroy();
  });

  test('zeroed descriptions materialize zeroed on a device arena', async () => {
    const arena = deviceArena(device, 4096);
    const dirty = scratchspace(arena, (frame) => {
      const t = alloc(frame, 'float32', [4]);
      upload(t, Float32Array.of(9, 9, 9, 9));
      return t.offset;
    });
    const { g } = alloc(arena, { g: zeroed(Undef('float32', [4])) });
    expect(g.offset).toBe(dirty); // the same bytes the frame left dirty
    expect(Array.from((await download(g)).data)).toEqual([0, 0, 0, 0]);
  });

  test('inside a captured step the clear is recorded, so every replay zeroes again', async () => {
    const arena = deviceArena(device, 4096);
    const g = alloc(arena, 'float32', [4]);
    upload(g, Float32Array.of(1, 2, 3, 4));
    const graph = await capture(device, () => {
      zeroArray(g);
    });
    expect(graph.stats).toEqual({ submits: 1, passes: 0, dispatches: 0, copies: 1 });
    expect(Array.from((await download(g)).data)).toEqual([0, 0, 0, 0]);
    upload(g, Float32Array.of(5, 6, 7, 8));
    graph.replay();
    expect(Array.from((await download(g)).data)).toEqual([0, 0, 0, 0]);
  });

  test('refuses a released array of a checked arena, an array whose slab is gone, and a lost device, changing nothing', async () => {
    const arena = deviceArena(device, 4096, { checked: true });
    const stale = scratchspace(arena, (frame) => alloc(frame, 'float32', [4]));
    const calls = countCalls(device.queue, ['submit']);
    try {
      expect(() => zeroArray(stale)).toThrow(StaleArrayError);
      const gone = deviceArena(device, 1024);
      const y = alloc(gone, 'float32', [4]);
      gone.slab.destroy();
      expect(() => zeroArray(y)).toThrow(InvalidArgumentError);
      expect(() => zeroArray(y)).toThrow(/destroyed/);
      expect(calls.counts.submit).toBe(0);
    } finally {
      calls.restore();
    }
    const doomed = await requestDevice('doomed');
    const z = alloc(deviceArena(doomed, 1024), 'float32', [4]);
    doomed.destroy();
    expect(() => zeroArray(z)).toThrow(DeviceLostError);
  });

  test("the family's checkZero refuses what zero would refuse, and writes nothing either way (zeroShadows checks first)", async () => {
    const arena = deviceArena(device, 4096, { checked: true });
    const live = alloc(arena, 'float32', [4]);
    upload(live, Float32Array.of(1, 2, 3, 4));
    const stale = scratchspace(arena, (frame) => alloc(frame, 'float32', [4]));
    const gone = deviceArena(device, 1024);
    const y = alloc(gone, 'float32', [4]);
    gone.slab.destroy();
    const doomed = await requestDevice('doomed too');
    const z = alloc(deviceArena(doomed, 1024), 'float32', [4]);
    doomed.destroy();
    const checkZero = familyOf(live)?.checkZero;
    expect(checkZero).toBeTypeOf('function');
    const calls = countCalls(device.queue, ['submit', 'writeBuffer']);
    try {
      checkZero?.(live);
      expect(() => checkZero?.(stale)).toThrow(StaleArrayError);
      expect(() => checkZero?.(y)).toThrow(/destroyed/);
      expect(() => checkZero?.(z)).toThrow(DeviceLostError);
      expect(calls.counts).toEqual({ submit: 0, writeBuffer: 0 });
    } finally {
      calls.restore();
    }
    expect(Array.from((await download(live)).data)).toEqual([1, 2, 3, 4]);
  });
});
