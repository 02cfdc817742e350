import { describe, expect, test } from 'vitest';
import { arrayBufferStorage } from './host.js';
import { alignUp, CarveSize, elementPadding, measureCarve } from './layout.js';
import type { AnyStorage } from './types.js';

describe('carve layout', () => {
  test('alignUp rounds up to a power of two, by mask below 2^30 and by % above', () => {
    expect([0, 1, 255, 256, 257].map((x) => alignUp(x, 256))).toEqual([0, 256, 256, 256, 512]);
    expect(alignUp(2 ** 40 + 1, 2 ** 31)).toBe(2 ** 40 + 2 ** 31);
    expect(alignUp(2 ** 30 + 3, 4)).toBe(2 ** 30 + 4);
    expect(alignUp(5, 2 ** 32)).toBe(2 ** 32);
  });

  test('elementPadding makes the absolute offset a multiple of the element size', () => {
    expect(elementPadding(0, 16, 8)).toBe(0);
    expect(elementPadding(3, 16, 8)).toBe(5);
    expect(elementPadding(1, 2 ** 31 + 2, 4)).toBe(1);
  });

  test('measureCarve measures once, from one dtype lookup per run of a dtype, and validates', () => {
    const storage = arrayBufferStorage as unknown as AnyStorage;
    const size = new CarveSize();
    measureCarve(storage, 'float64', [2, 3], size);
    expect(size).toMatchObject({ count: 6, bytes: 48, reserved: 48, elementAlignment: 8 });
    measureCarve(storage, 'float64', [0, 3], size);
    expect(size).toMatchObject({ count: 0, bytes: 0 });
    const reserving = { ...storage, reserve: (n: number) => Math.max(4, Math.ceil(n / 4) * 4) } as AnyStorage;
    expect(measureCarve(reserving, 'uint8', [3], size)).toMatchObject({ bytes: 3, reserved: 4, elementAlignment: 1 });
    expect(() => measureCarve(storage, 'float33' as 'float32', [1], size)).toThrow(/Unknown dtype/);
    expect(() => measureCarve(storage, 'float32', [-1], size)).toThrow(/non-negative integer/);
    expect(() => measureCarve(storage, 'float64', [2 ** 26, 2 ** 26], size)).toThrow(/MAX_SAFE_INTEGER bytes/);
  });
});
