import { Arena, mark, retract } from '@pol/arena';
import { alloc, InvalidArgumentError, scratchspace, Undef } from '@pol/core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type DeviceState, knownState, markLost } from './device.js';
import { DeviceLostError, deviceArena, deviceSlab, download, upload } from './index.js';
import { countCalls, requestDevice, thrownBy } from './test-support/gpu.js';

let device: GPUDevice;
beforeAll(async () => {
  device = await requestDevice('slab arenas');
});
afterAll(() => device.destroy());

/** What `f` throws (it must throw), and that the arena is as it was. */
function refusal(arena: Arena<'gpu'>, f: () => unknown): Error {
  const before = arena.describe();
  const thrown = thrownBy(f);
  expect(thrown).toBeInstanceOf(Error);
  expect(arena.describe()).toEqual(before);
  return thrown as Error;
}

/** An arena over `slab` that has carved float32[4] at offset 0 (cached), and is back at 0. */
function warmArena(slab: ReturnType<typeof deviceSlab>): Arena<'gpu'> {
  const arena = new Arena(slab);
  const m = mark(arena);
  const a = alloc(arena, 'float32', 4);
  retract(arena, m);
  expect(alloc(arena, 'float32', 4)).toBe(a); // the cache hands it out again
  retract(arena, m);
  return arena;
}

describe('a dead slab is refused at alloc, cached offsets included', () => {
  test('slab.destroy(): a cached carve is refused with the error a first carve gives, changing nothing', () => {
    const slab = deviceSlab(device, 4096, { label: 'doomed' });
    const warm = warmArena(slab);
    const cold = new Arena(slab); // never carved: the uncached path
    slab.destroy();
    const first = refusal(cold, () => alloc(cold, 'float32', 4));
    const cached = refusal(warm, () => alloc(warm, 'float32', 4));
    expect(first).toBeInstanceOf(InvalidArgumentError);
    expect(cached).toBeInstanceOf(InvalidArgumentError);
    expect(cached.message).toBe(first.message);
    expect(cached.message).toBe(
      "Cannot carve float32[4] from device slab 'doomed': it was destroyed. Make a new slab and arena.",
    );
    // Through a spec, a frame, and tryAlloc's caller: every path is refused, and nothing changes.
    refusal(warm, () => alloc(warm, { a: Undef('float32', 4) }));
    scratchspace(warm, (frame) => {
      expect(() => alloc(frame, 'float32', 4)).toThrow(InvalidArgumentError);
    });
    expect(warm.describe().openFrames).toBe(0);
    expect(warm.offset).toBe(0);
  });

  test('the buffer destroyed directly (slab.buffer.destroy()) is the same', () => {
    const slab = deviceSlab(device, 4096);
    const arena = warmArena(slab);
    slab.buffer.destroy();
    expect(slab.destroyed).toBe(true);
    expect(refusal(arena, () => alloc(arena, 'float32', 4)).message).toMatch(
      /^Cannot carve float32\[4\] from .*: it was destroyed\./,
    );
  });

  test("a frame's carve cached past a live array is refused too, both ways of dying, changing nothing", () => {
    for (const kill of ['slab.destroy()', 'slab.buffer.destroy()'] as const) {
      const slab = deviceSlab(device, 4096);
      const arena = new Arena(slab);
      alloc(arena, 'float32', 8); // live at offset 0
      const inner = scratchspace(arena, (frame) => alloc(frame, 'int32', 4)); // cached at 256, through a frame
      expect(inner.offset).toBe(256);
      if (kill === 'slab.destroy()') slab.destroy();
      else slab.buffer.destroy();
      const before = arena.describe();
      const error = thrownBy(() => scratchspace(arena, (frame) => alloc(frame, 'int32', 4)));
      expect(error, kill).toBeInstanceOf(InvalidArgumentError);
      expect((error as Error).message, kill).toMatch(/^Cannot carve int32\[4\] from device slab .*: it was destroyed\./);
      expect(arena.describe(), kill).toEqual(before);
    }
  });

  test('every arena over the slab forgets, checked and deviceArena ones too; other slabs keep their caches', () => {
    const slab = deviceSlab(device, 4096);
    const a = warmArena(slab);
    const b = warmArena(slab);
    const checked = new Arena(slab, { checked: true });
    const other = deviceArena(device, 4096);
    const kept = alloc(other, 'float32', 4);
    other.reset();
    slab.destroy();
    for (const arena of [a, b, checked]) refusal(arena, () => alloc(arena, 'float32', 4));
    expect(alloc(other, 'float32', 4)).toBe(kept);
    other.slab.destroy();
  });

  test('an array handed out before the slab died stays refused by uploads and downloads', async () => {
    const slab = deviceSlab(device, 4096);
    const arena = new Arena(slab);
    const x = alloc(arena, 'float32', 4);
    upload(x, Float32Array.of(1, 2, 3, 4));
    expect(Array.from((await download(x)).data)).toEqual([1, 2, 3, 4]);
    slab.destroy();
    expect(() => upload(x, new Float32Array(4))).toThrow(/destroyed|gone/);
  });

  test('no cost before the slab dies: a steady carve makes no GPU call and hands out the same array', () => {
    const slab = deviceSlab(device, 4096);
    const arena = warmArena(slab);
    const a = alloc(arena, 'float32', 4);
    arena.reset();
    const calls = countCalls(device, ['createBuffer']);
    try {
      for (let i = 0; i < 100; i++) {
        expect(alloc(arena, 'float32', 4)).toBe(a);
        arena.reset();
      }
      expect(calls.counts.createBuffer).toBe(0);
    } finally {
      calls.restore();
    }
    slab.destroy();
  });
});

describe('a lost device is refused at alloc, cached offsets included', () => {
  test('device.destroy(): a cached carve is refused with DeviceLostError, as a first carve is, changing nothing', async () => {
    const doomed = await requestDevice('doomed device');
    const slab = deviceSlab(doomed, 4096);
    const warm = warmArena(slab);
    const placed = deviceArena(doomed, 4096);
    alloc(placed, 'int32', 8);
    placed.reset();
    const cold = new Arena(slab);
    doomed.destroy();
    const first = refusal(cold, () => alloc(cold, 'float32', 4));
    const cached = refusal(warm, () => alloc(warm, 'float32', 4));
    expect(first).toBeInstanceOf(DeviceLostError);
    expect(cached).toBeInstanceOf(DeviceLostError);
    expect((cached as DeviceLostError).reason).toBe('destroyed');
    expect(cached.message).toBe(first.message);
    expect(refusal(placed, () => alloc(placed, 'int32', 8))).toBeInstanceOf(DeviceLostError);
    // Destroying the slab afterwards: still the uncached path's answer (now that it was destroyed).
    slab.destroy();
    const again = refusal(cold, () => alloc(cold, 'float32', 4));
    expect(again).toBeInstanceOf(InvalidArgumentError);
    expect(refusal(warm, () => alloc(warm, 'float32', 4)).message).toBe(again.message);
  });

  test('a device lost for another reason (its lost promise): the same, through the loss Pol hears of', async () => {
    const doomed = await requestDevice('lost device');
    const arena = deviceArena(doomed, 4096);
    alloc(arena, 'float32', 4);
    arena.reset();
    // The fault injected: what the device's lost promise resolving does (a driver reset, say).
    markLost(knownState(doomed) as DeviceState, 'unknown', 'the GPU process crashed');
    const error = refusal(arena, () => alloc(arena, 'float32', 4));
    expect(error).toBeInstanceOf(DeviceLostError);
    expect(error.message).toMatch(/was lost \(the GPU process crashed\)/);
    doomed.destroy();
  });
});
