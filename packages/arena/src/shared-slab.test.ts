// Shared slabs in one thread: layout, claims, releases and their refusals. The races between
// threads are in shared-slab.threads.test.ts.
import { InvalidArgumentError, type PolError, scratchspace } from '@pol/core';
import { describe, expect, test } from 'vitest';
import {
  Arena,
  ContendedError,
  claimRegion,
  createSharedSlab,
  describeSharedSlab,
  freeRegion,
  InvalidRegionError,
  InvalidSlabError,
  StaleArrayError,
} from './index.js';
import { thrown } from './test-support/thrown.js';

describe('createSharedSlab', () => {
  test('lays out a header, then regions on 256-byte boundaries', () => {
    const slab = createSharedSlab({ regions: 3, regionByteLength: 1000 });
    expect(slab).toBeInstanceOf(SharedArrayBuffer);
    const d = describeSharedSlab(slab);
    expect(d).toEqual({
      regions: 3,
      regionByteLength: 1000,
      byteOffsets: [256, 1280, 2304],
      claimed: [false, false, false],
      generations: [0, 0, 0],
    });
    expect(slab.byteLength).toBe(256 + 3 * 1024);
  });

  test('a header larger than 256 bytes pushes the first region further', () => {
    const d = describeSharedSlab(createSharedSlab({ regions: 100, regionByteLength: 256 }));
    expect(d.byteOffsets[0]).toBe(1024); // 4 * (8 + 200) = 832 bytes of header
    expect(d.byteOffsets[1]).toBe(1280);
  });

  const badLayouts: [string, unknown, RegExp][] = [
    ['no layout', undefined, /regions must be a whole number/],
    ['zero regions', { regions: 0, regionByteLength: 64 }, /regions must be a whole number from 1/],
    ['fractional regions', { regions: 1.5, regionByteLength: 64 }, /regions must be a whole number/],
    ['too many regions', { regions: 1e6, regionByteLength: 64 }, /from 1 to 8000/],
    ['zero bytes', { regions: 1, regionByteLength: 0 }, /regionByteLength must be a whole number of bytes from 1/],
    ['2^31 bytes', { regions: 1, regionByteLength: 2 ** 31 }, /to 2\^31 - 1/],
    ['a string', { regions: 1, regionByteLength: '64' }, /regionByteLength/],
    ['a misspelt option', { regions: 1, regionBytes: 64 }, /no option 'regionBytes'/],
  ];
  test.each(badLayouts)('refuses %s with InvalidArgumentError', (_, layout, message) => {
    const error = thrown(() => createSharedSlab(layout as never));
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as Error).message).toMatch(message);
  });
});

describe('claimRegion', () => {
  test('an arena over its region: offsets from the region, carves inside it only', () => {
    const slab = createSharedSlab({ regions: 2, regionByteLength: 1024 });
    const bytes = new Uint8Array(slab);
    const arena = claimRegion(slab, { region: 1, alignment: 64 });
    const header = bytes.slice(0, 256);
    expect(arena.slab).toBe(slab);
    expect(arena.byteOffset).toBe(256 + 1024);
    expect(arena.capacity).toBe(1024);
    expect(arena.epoch).toBe(1);
    const a = arena.alloc('uint8', [1024]);
    a.data.fill(9);
    expect(() => arena.alloc('uint8', [1])).toThrow(/full/);
    expect(bytes.subarray(0, 256)).toEqual(header);
    expect(bytes.subarray(256, 1280).every((b) => b === 0)).toBe(true);
    expect(bytes.subarray(1280, 2304).every((b) => b === 9)).toBe(true);
    expect(describeSharedSlab(slab).claimed).toEqual([false, true]);
  });

  test('without a region, the first free one; with every region claimed, ContendedError', () => {
    const slab = createSharedSlab({ regions: 2, regionByteLength: 256 });
    const first = claimRegion(slab);
    const second = claimRegion(slab);
    expect([first.byteOffset, second.byteOffset]).toEqual([256, 512]);
    const error = thrown(() => claimRegion(slab));
    expect(error).toBeInstanceOf(ContendedError);
    expect((error as Error).message).toMatch(/all 2 regions of this shared slab are claimed/);
    first.dispose();
    expect(claimRegion(slab).byteOffset).toBe(256);
  });

  test('a claimed region is refused with ContendedError, and its holder is untouched', () => {
    const slab = createSharedSlab({ regions: 1, regionByteLength: 256 });
    const holder = claimRegion(slab, { region: 0, alignment: 16 });
    const x = holder.alloc('int32', [4]);
    x.data[0] = 42;
    const before = holder.describe();
    const error = thrown(() => claimRegion(slab, { region: 0 }));
    expect(error).toBeInstanceOf(ContendedError);
    expect((error as PolError).code).toBe('POL_CONTENDED');
    expect((error as Error).message).toMatch(/region 0 of 1 of this shared slab is claimed by another holder/);
    expect(holder.describe()).toEqual(before);
    expect(x.data[0]).toBe(42);
    expect(holder.alloc('int32', [4]).data.byteOffset).toBe(256 + 16);
  });

  test('dispose releases the claim; the next claim starts at a new epoch', () => {
    const slab = createSharedSlab({ regions: 1, regionByteLength: 256 });
    const first = claimRegion(slab);
    expect(first.epoch).toBe(1);
    first.reset();
    expect(first.epoch).toBe(2);
    first.dispose();
    expect(describeSharedSlab(slab).claimed).toEqual([false]);
    first.dispose(); // again: nothing
    const second = claimRegion(slab);
    expect(second.epoch).toBe(2);
    expect(describeSharedSlab(slab).generations).toEqual([2]);
  });

  test("a checked holder's arrays die with its claim: a view kept past it refuses reads", () => {
    const slab = createSharedSlab({ regions: 1, regionByteLength: 256 });
    const first = claimRegion(slab, { checked: true });
    const kept = first.alloc('float32', [4]);
    kept.data.fill(1);
    first.dispose();
    const next = claimRegion(slab, { checked: true });
    next.alloc('float32', [4]).data.fill(2);
    const error = thrown(() => kept.data);
    expect(error).toBeInstanceOf(StaleArrayError);
    expect((error as Error).message).toMatch(/was disposed, giving its region back/);
  });

  test('a bad option gives the claim back, changing nothing', () => {
    const slab = createSharedSlab({ regions: 1, regionByteLength: 256 });
    expect(() => claimRegion(slab, { alignment: 3 })).toThrow(/power of two/);
    expect(() => claimRegion(slab, { checked: 'yes' as never })).toThrow(InvalidArgumentError);
    expect(() => claimRegion(slab, { Region: 0 } as never)).toThrow(/did you mean 'region'/);
    expect(describeSharedSlab(slab).claimed).toEqual([false]);
    expect(claimRegion(slab).capacity).toBe(256);
  });

  test('bad region indices are refused with InvalidRegionError, and the header is as it was', () => {
    const slab = createSharedSlab({ regions: 2, regionByteLength: 256 });
    const header = new Uint8Array(slab, 0, 256).slice();
    for (const region of [-1, 2, 0.5, Number.NaN, '0']) {
      const error = thrown(() => claimRegion(slab, { region: region as never }));
      expect(error, String(region)).toBeInstanceOf(InvalidRegionError);
      expect((error as Error).message).toMatch(/region must be a whole number from 0 to 1/);
    }
    expect(describeSharedSlab(slab).claimed).toEqual([false, false]);
    expect(new Uint8Array(slab, 0, 256)).toEqual(header); // no claim token was taken either
  });

  test('anything but a shared slab is refused with InvalidSlabError', () => {
    for (const slab of [new SharedArrayBuffer(1024), new ArrayBuffer(1024), new Uint8Array(64), undefined, {}]) {
      const error = thrown(() => claimRegion(slab as never));
      expect(error).toBeInstanceOf(InvalidSlabError);
      expect((error as Error).message).toMatch(/needs a shared slab made by createSharedSlab/);
    }
    expect(() => describeSharedSlab(new SharedArrayBuffer(64))).toThrow(/without its header/);
    expect(() => freeRegion(new SharedArrayBuffer(16), 0)).toThrow(InvalidSlabError);
  });

  test('frames and dispose: refused while a frame is open, the claim kept', () => {
    const slab = createSharedSlab({ regions: 1, regionByteLength: 256 });
    const arena = claimRegion(slab);
    scratchspace(arena, () => {
      expect(() => arena.dispose()).toThrow(/Cannot dispose/);
    });
    expect(describeSharedSlab(slab).claimed).toEqual([true]);
    arena.dispose();
    expect(describeSharedSlab(slab).claimed).toEqual([false]);
  });

  test('in one thread, a plain region arena over a claimed region is refused too (the hold)', () => {
    const slab = createSharedSlab({ regions: 1, regionByteLength: 256 });
    claimRegion(slab);
    expect(() => new Arena(slab, { byteOffset: 256, byteLength: 256 })).toThrow(/overlaps bytes \[256, 512\)/);
  });
});

describe('freeRegion', () => {
  test('frees a region whose holder is gone; the dead holder cannot free it again', () => {
    const slab = createSharedSlab({ regions: 1, regionByteLength: 256 });
    const lost = claimRegion(slab); // say, in a worker that exited (shared-slab.threads.test.ts has the real one)
    expect(freeRegion(slab, 0)).toBe(true);
    expect(describeSharedSlab(slab).claimed).toEqual([false]);
    // In this thread the holder is alive, and still holds the region's bytes: a claim made now is
    // refused by that hold, and gives its claim back.
    expect(() => claimRegion(slab)).toThrow(/overlaps bytes \[256, 512\)/);
    expect(describeSharedSlab(slab)).toMatchObject({ claimed: [false], generations: [1] });
    lost.dispose(); // its release finds no claim of its own there, and changes nothing
    const next = claimRegion(slab);
    expect(next.epoch).toBe(2);
    lost.dispose();
    expect(describeSharedSlab(slab).claimed).toEqual([true]); // the new holder's claim stays
    expect(freeRegion(slab, 0)).toBe(true);
    expect(freeRegion(slab, 0)).toBe(false);
  });

  test('refuses a bad index with InvalidRegionError', () => {
    const slab = createSharedSlab({ regions: 1, regionByteLength: 256 });
    expect(() => freeRegion(slab, 1)).toThrow(InvalidRegionError);
  });
});
