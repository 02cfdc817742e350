/// <reference types="node" />
import { alloc, dtypeInfo, hostArray, isSpace, PolError, scratchspace, Undef } from '@pol/core';
import { allocLengthKey, internDims, spaceKey } from '@pol/core/backend';
import { describe, expect, test } from 'vitest';
import type { SlabStorage } from './backend.js';
import {
  Arena,
  ArenaFullError,
  type ArenaStorageOptions,
  InvalidAlignmentError,
  InvalidSlabError,
  isArena,
  reset,
  tryAlloc,
} from './index.js';
import { expectRefused, makeSlab, slabNames, snapshot } from './test-support/slabs.js';

describe('new Arena(slab, options)', () => {
  test.each(slabNames)('accepts a %s slab as a host arena', (name) => {
    const { slab, capacity } = makeSlab(name, 4096);
    const arena = name === 'WebAssembly.Memory' ? new Arena(slab, { byteOffset: 0 }) : new Arena(slab);
    expect(isSpace(arena)).toBe(true);
    expect(isArena(arena)).toBe(true);
    expect(arena[spaceKey]).toBe('host');
    expect(arena.capacity).toBe(capacity);
    expect(arena.alignment).toBe(256);
    expect(arena.checked).toBe(false);
    expect(arena.slab).toBe(slab);
    expect(arena.describe()).toMatchObject({ kind: 'host', residency: 'host', offset: 0, watermark: 0, epoch: 0, openFrames: 0 });
    expect(arena.storage.kind).toBe('host');
  });

  const notSlabs: [string, unknown][] = [
    ['a plain array', [1, 2, 3]],
    ['a number', 1024],
    ['a string', 'bytes'],
    ['null', null],
    ['undefined', undefined],
    ['a plain object', { byteLength: 16 }],
    ['a DataView', new DataView(new ArrayBuffer(16))],
    ['a Float32Array', new Float32Array(16)],
    ['an Int8Array', new Int8Array(16)],
    ['a Uint8ClampedArray', new Uint8ClampedArray(16)],
  ];
  test.each(notSlabs)('refuses %s with InvalidSlabError naming what is accepted', (_, slab) => {
    const error = (() => {
      try {
        new Arena(slab as ArrayBuffer);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(InvalidSlabError);
    expect(error).toBeInstanceOf(PolError);
    expect((error as PolError).code).toBe('POL_INVALID_SLAB');
    const message = (error as Error).message;
    expect(message).toContain('ArrayBuffer');
    expect(message).toContain('SharedArrayBuffer');
    expect(message).toContain('Uint8Array');
    expect(message).toContain('WebAssembly.Memory');
    if (ArrayBuffer.isView(slab)) expect(message).toContain('new Uint8Array(x.buffer, x.byteOffset, x.byteLength)');
  });

  test('refuses a resizable ArrayBuffer, and a Uint8Array over one', () => {
    const resizable = new (ArrayBuffer as unknown as new (n: number, o: { maxByteLength: number }) => ArrayBuffer)(64, {
      maxByteLength: 128,
    });
    expect(() => new Arena(resizable)).toThrow(InvalidSlabError);
    expect(() => new Arena(new Uint8Array(resizable))).toThrow(/resizable/);
  });

  test('refuses a detached ArrayBuffer', () => {
    const buffer = new ArrayBuffer(64);
    structuredClone(buffer, { transfer: [buffer] });
    expect(() => new Arena(buffer)).toThrow(/detached/);
  });

  test('accepts an empty slab, on which only nothing fits', () => {
    const arena = new Arena(new ArrayBuffer(0));
    expect(arena.alloc('float32', [0]).data.length).toBe(0);
    expectRefused(arena, 'POL_ARENA_FULL', () => arena.alloc('uint8', [1]));
  });

  test.each([0, 3, 6, 0.5, -4, -256, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31 + 1])(
    'refuses alignment %s with InvalidAlignmentError',
    (alignment) => {
      expect(() => new Arena(new ArrayBuffer(64), { alignment })).toThrow(InvalidAlignmentError);
      try {
        new Arena(new ArrayBuffer(64), { alignment });
      } catch (e) {
        expect((e as PolError).code).toBe('POL_INVALID_ALIGNMENT');
        expect((e as Error).message).toMatch(/power of two/);
      }
    },
  );

  test('refuses a non-number alignment', () => {
    expect(() => new Arena(new ArrayBuffer(64), { alignment: '256' as unknown as number })).toThrow(InvalidAlignmentError);
  });

  test.each([1, 2, 4, 64, 4096, 2 ** 31, 2 ** 40])('accepts alignment %s', (alignment) => {
    expect(new Arena(new ArrayBuffer(64), { alignment }).alignment).toBe(alignment);
  });

  test('refuses bad options with InvalidArgumentError', () => {
    const slab = new ArrayBuffer(64);
    for (const options of [null, 5, 'checked', { align: 64 }, { checked: 1 }, { storage: {} }]) {
      try {
        new Arena(slab, options as never);
        expect.unreachable();
      } catch (e) {
        expect((e as PolError).code).toBe('POL_INVALID_ARGUMENT');
      }
    }
  });

  test('refuses a storage option that does not match the slab', () => {
    const arena = new Arena(new ArrayBuffer(64));
    const options = { storage: arena.storage } as unknown as ArenaStorageOptions<unknown, 'host'>;
    expect(() => new Arena(new Uint8Array(8), options)).toThrow(/does not accept/);
  });
});

describe('alloc', () => {
  test('carves at the alignment, advancing offset and watermark', () => {
    const slab = new ArrayBuffer(4096);
    const arena = new Arena(slab);
    const a = arena.alloc('float32', [2, 3]);
    expect(a.dtype).toBe('float32');
    expect(a.dims).toEqual([2, 3]);
    expect(Object.isFrozen(a.dims)).toBe(true);
    expect(a.data).toBeInstanceOf(Float32Array);
    expect(a.data.buffer).toBe(slab);
    expect(a.data.byteOffset).toBe(0);
    expect(a.data.length).toBe(6);
    expect(arena.offset).toBe(24);
    const b = arena.alloc('int16', [5]);
    expect(b.data.byteOffset).toBe(256);
    expect(arena.offset).toBe(266);
    expect(arena.watermark).toBe(266);
  });

  test('never starts below the element alignment', () => {
    const arena = new Arena(new ArrayBuffer(256), { alignment: 1 });
    arena.alloc('uint8', [3]);
    const d = arena.alloc('float64', [1]);
    expect(d.data.byteOffset).toBe(8);
    arena.alloc('int8', [1]);
    expect(arena.alloc('int16', [1]).data.byteOffset).toBe(18);
  });

  test('carves zero-element arrays and scalars', () => {
    const arena = new Arena(new ArrayBuffer(1024), { alignment: 16 });
    const empty = arena.alloc('float64', [0]);
    expect(empty.data.length).toBe(0);
    expect(arena.alloc('int32', [4, 0]).dims).toEqual([4, 0]);
    const scalar = arena.alloc('float32', []);
    expect(scalar.data.length).toBe(1);
    expect(arena.offset).toBe(4);
  });

  test('the dims array may be reused by the caller', () => {
    const arena = new Arena(new ArrayBuffer(1024));
    const dims = [2, 2];
    const a = arena.alloc('float32', dims);
    dims[0] = 7;
    expect(a.dims).toEqual([2, 2]);
  });

  test('fills the slab exactly, then refuses past the end, changing nothing', () => {
    const arena = new Arena(new ArrayBuffer(1024));
    arena.alloc('float32', [64]);
    arena.alloc('float32', [192]); // 256 + 768 = 1024
    expect(arena.offset).toBe(1024);
    const e = expectRefused(arena, 'POL_ARENA_FULL', () => arena.alloc('uint8', [1]));
    expect(e).toBeInstanceOf(ArenaFullError);
  });

  test('the full error says how many bytes were asked, how many are left, and the watermark', () => {
    const arena = new Arena(new ArrayBuffer(1000));
    arena.alloc('uint8', [300]);
    reset(arena);
    arena.alloc('uint8', [10]);
    const e = expectRefused(arena, 'POL_ARENA_FULL', () => arena.alloc('float64', [100])) as ArenaFullError;
    expect(e.requested).toBe(800 + 246);
    expect(e.available).toBe(990);
    expect(e.watermark).toBe(300);
    expect(e.message).toContain('float64[100] needs 800 bytes');
    expect(e.message).toContain('plus 246 bytes of padding');
    expect(e.message).toContain('only 990 of 1000 bytes are left');
    expect(e.message).toContain('watermark 300');
    expect(e.message).toContain('tryAlloc');
    expect(e.message).toContain('Arena(host');
  });

  test('alignment padding alone can overflow, even for zero elements', () => {
    const arena = new Arena(new ArrayBuffer(200));
    arena.alloc('uint8', [1]);
    expectRefused(arena, 'POL_ARENA_FULL', () => arena.alloc('float32', [0]));
  });

  test('tryAlloc answers undefined instead of throwing when full, changing nothing', () => {
    const arena = new Arena(new ArrayBuffer(300));
    expect(arena.tryAlloc('float32', [64])?.data.length).toBe(64);
    const before = snapshot(arena);
    expect(arena.tryAlloc('float32', [64])).toBeUndefined();
    expect(tryAlloc(arena, 'float32', [64])).toBeUndefined();
    expect(tryAlloc(arena, 'float32', 8, 8)).toBeUndefined();
    expect(snapshot(arena)).toEqual(before);
    expect(tryAlloc(arena, 'float32', 2, 2)?.dims).toEqual([2, 2]);
    expect(arena.offset).toBe(272);
  });

  test('tryAlloc still throws for mistakes other than a full arena', () => {
    const arena = new Arena(new ArrayBuffer(512));
    expectRefused(arena, 'POL_UNKNOWN_DTYPE', () => arena.tryAlloc('complex64' as never, [1]));
    expectRefused(arena, 'POL_INVALID_SHAPE', () => tryAlloc(arena, 'float32', [-1]));
    expectRefused(arena, 'POL_NOT_AN_ARENA', () => tryAlloc({} as never, 'float32', [1]));
  });

  test.each([
    ['an unknown dtype', 'POL_UNKNOWN_DTYPE', 'float128', [1]],
    ['a negative dim', 'POL_INVALID_SHAPE', 'float32', [-1]],
    ['a fractional dim', 'POL_INVALID_SHAPE', 'float32', [1.5]],
    ['a NaN dim', 'POL_INVALID_SHAPE', 'float32', [Number.NaN]],
    ['a byte size past MAX_SAFE_INTEGER', 'POL_INVALID_SHAPE', 'float64', [2 ** 26, 2 ** 26, 2 ** 2]],
    ['dims that are not an array', 'POL_INVALID_SHAPE', 'float32', 4],
  ])('refuses %s, changing nothing', (_, code, dtype, dims) => {
    const arena = new Arena(new ArrayBuffer(1024));
    arena.alloc('uint8', [3]);
    expectRefused(arena, code, () => arena.alloc(dtype as 'float32', dims as number[]));
  });

  test.each([
    ['null', null],
    ['undefined', undefined],
    ['a number', 4],
    ['a string', '4'],
    ['an array-like object', { length: 2, 0: 2, 1: 2 }],
    ['an array-like object of one dim', { length: 1, 0: 4 }],
    ['a NaN dim', [Number.NaN]],
    ['a fractional dim', [3.5]],
  ])('refuses %s as dims where arrays are cached, changing nothing', (_, dims) => {
    const arena = new Arena(new ArrayBuffer(1024));
    for (const shape of [[4], [2, 2], [3], [5]]) {
      arena.alloc('float32', shape);
      reset(arena);
    }
    expectRefused(arena, 'POL_INVALID_SHAPE', () => arena.alloc('float32', dims as number[]));
  });

  test('works through the alloc verb: dtype and dims, rest dims, an Undef, a spec', () => {
    const arena = new Arena(new ArrayBuffer(4096), { alignment: 64 });
    expect(alloc(arena, 'float32', 2, 3).dims).toEqual([2, 3]);
    expect(alloc(arena, 'int32', [4]).data.byteOffset).toBe(64);
    expect(alloc(arena, Undef('uint8', 5)).data.byteOffset).toBe(128);
    const mine = new Float32Array(2);
    const { w, nested, kept } = alloc(arena, {
      w: Undef('float64', 2, 2),
      nested: { b: Undef('float32', 3) },
      kept: mine,
    });
    expect(w.data.byteOffset).toBe(192);
    expect(nested.b.data.byteOffset).toBe(256);
    expect(kept).toBe(mine);
  });

  test('a spec that fails part-way changes nothing: offset, watermark, epoch, frames, cache', () => {
    const arena = new Arena(new ArrayBuffer(2048), { alignment: 256 });
    const first = alloc(arena, 'float32', 4);
    reset(arena);
    const before = snapshot(arena);
    expect(() => alloc(arena, { a: Undef('float32', 4), b: Undef('float32', 8), c: Undef('float32', 10_000) })).toThrow(
      ArenaFullError,
    );
    const after = snapshot(arena);
    // Two arrays were made and dropped (the counter is honest about it); nothing else moved.
    expect({ ...after, arraysCreated: 0 }).toEqual({ ...before, arraysCreated: 0 });
    expect(after.arraysCreated).toBe(before.arraysCreated + 1);
    expect(alloc(arena, 'float32', 4)).toBe(first);
  });

  test('a failed spec leaves every shape cached at an offset as it was', () => {
    const arena = new Arena(new ArrayBuffer(1024), { alignment: 16 });
    const shapes = [1, 2, 3, 4, 5, 6, 7, 8];
    const originals = shapes.map((n) => {
      const a = alloc(arena, 'uint8', n);
      reset(arena);
      return a;
    });
    // A ninth shape at offset 0 joins the eight; the spec then fails and rolls back.
    expect(() => alloc(arena, { a: Undef('uint8', 9), b: Undef('uint8', 5000) })).toThrow(ArenaFullError);
    shapes.forEach((n, i) => {
      expect(alloc(arena, 'uint8', n)).toBe(originals[i]);
      reset(arena);
    });
  });
});

describe('identical sequences, identical offsets; a steady loop allocates once', () => {
  test('a steady carve finds its array whatever holds the dims: the interned dims it was carved with, a literal, a frozen copy', () => {
    const arena = new Arena(new ArrayBuffer(4096));
    for (const shape of [[6], [2, 3]]) {
      reset(arena);
      const first = arena.alloc('float32', shape);
      for (const dims of [first.dims, internDims([...shape]), [...shape], Object.freeze([...shape])]) {
        reset(arena);
        expect(arena.alloc('float32', dims)).toBe(first);
      }
      // The very dims object, but another dtype, or other dims: another array.
      reset(arena);
      expect(arena.alloc('int32', first.dims)).not.toBe(first);
      reset(arena);
      expect(arena.alloc('float32', [...shape].reverse().concat(1))).not.toBe(first);
    }
  });

  test('alloc(arena, dtype, n) carves by length (allocLengthKey): the same array as the dims form, either way round', () => {
    const arena = new Arena(new ArrayBuffer(4096), { alignment: 16 });
    const byDims = arena.alloc('float32', [6]);
    const byDims2 = arena.alloc('int8', [0]);
    reset(arena);
    expect(alloc(arena, 'float32', 6)).toBe(byDims);
    expect(alloc(arena, 'int8', 0)).toBe(byDims2);
    reset(arena);
    const byLength = alloc(arena, 'float64', 5);
    expect(byLength.dims).toEqual([5]);
    expect(byLength.data).toHaveLength(5);
    expect(Object.isFrozen(byLength.dims)).toBe(true);
    reset(arena);
    expect(arena.alloc('float64', [5])).toBe(byLength);
    // Another dtype or length at that place: another array; the place keeps both.
    reset(arena);
    const other = alloc(arena, 'float64', 4);
    expect(other).not.toBe(byLength);
    reset(arena);
    expect(alloc(arena, 'float64', 5)).toBe(byLength);
    reset(arena);
    expect(alloc(arena, 'float64', 4)).toBe(other);
  });

  test('a carve by length refuses what is no length, even where a carve of another rank lies (its first dim reads -1)', () => {
    const arena = new Arena(new ArrayBuffer(4096));
    const square = arena.alloc('float32', [2, 2]);
    const scalar = arena.alloc('float32', []);
    reset(arena);
    const byLength = arena as unknown as { [allocLengthKey]: (dtype: string, length: number) => unknown };
    for (const bad of [-1, 1.5, Number.NaN, 2 ** 53]) {
      expectRefused(arena, 'POL_INVALID_SHAPE', () => byLength[allocLengthKey]('float32', bad));
    }
    expect(arena.alloc('float32', [2, 2])).toBe(square);
    expect(arena.alloc('float32', [])).toBe(scalar);
  });

  test('a carve by length refuses an unknown dtype, a size past the safe range and a full arena, changing nothing', () => {
    const arena = new Arena(new ArrayBuffer(1024));
    arena.alloc('float32', [4]);
    expectRefused(arena, 'POL_UNKNOWN_DTYPE', () => alloc(arena, 'float33' as never, 4));
    expectRefused(arena, 'POL_INVALID_SHAPE', () => alloc(arena, 'float64', 2 ** 51));
    expectRefused(arena, 'POL_ARENA_FULL', () => alloc(arena, 'float32', 1024));
    const f = scratchspace(arena);
    expectRefused(arena, 'POL_UNKNOWN_DTYPE', () => alloc(f, 'float33' as never, 4));
    expectRefused(arena, 'POL_ARENA_FULL', () => alloc(f, 'float32', 1024));
    f.close();
  });

  test('a carve by length keeps the order of frames: the same refusals as the dims form, with the same messages', () => {
    const arena = new Arena(new ArrayBuffer(4096));
    const outer = scratchspace(arena);
    const inner = scratchspace(outer);
    for (const space of [arena, outer]) {
      const byLength = expectRefused(arena, 'POL_FRAME_ORDER', () => alloc(space, 'float32', 3));
      const byDims = expectRefused(arena, 'POL_FRAME_ORDER', () => alloc(space, 'float32', [3]));
      expect(byLength.message).toBe(byDims.message);
    }
    expect(alloc(inner, 'float32', 3).dims).toEqual([3]);
    inner.close();
    const closed = expectRefused(arena, 'POL_FRAME_CLOSED', () => alloc(inner, 'float32', 3));
    expect(closed.message).toBe(expectRefused(arena, 'POL_FRAME_CLOSED', () => alloc(inner, 'float32', [3])).message);
    outer.close();
  });

  test('a checked arena carves by length as by dims: a fresh checked array each time', () => {
    const arena = new Arena(new ArrayBuffer(4096), { checked: true });
    const a = alloc(arena, 'float32', 8);
    reset(arena);
    const b = alloc(arena, 'float32', 8);
    expect(b).not.toBe(a);
    expect(() => a.data).toThrow(PolError);
    expect(b.data).toHaveLength(8);
  });

  function step(arena: Arena<'host'>): number[] {
    const offsets: number[] = [];
    const out = alloc(arena, { y: Undef('float32', 64), state: Undef('float64', 8) });
    offsets.push(out.y.data.byteOffset, out.state.data.byteOffset);
    scratchspace(arena, (frame) => {
      offsets.push(alloc(frame, 'int32', 10).data.byteOffset);
      scratchspace(frame, (inner) => {
        offsets.push(alloc(inner, 'uint8', 3, 3).data.byteOffset, alloc(inner, 'float32', 0).data.byteOffset);
      });
      offsets.push(alloc(frame, 'float64', 2, 2).data.byteOffset);
    });
    offsets.push(alloc(arena, 'int16', 7).data.byteOffset);
    return offsets;
  }

  test.each([1, 16, 256])('alignment %s: the same sequence yields the same offsets every pass', (alignment) => {
    const arena = new Arena(new ArrayBuffer(1 << 16), { alignment });
    const first = step(arena);
    for (let pass = 0; pass < 5; pass++) {
      reset(arena);
      expect(step(arena)).toEqual(first);
    }
    const other = new Arena(new ArrayBuffer(1 << 16), { alignment });
    expect(step(other)).toEqual(first);
  });

  test('after the first pass, every carve returns the array object of the last pass: no new objects', () => {
    const host = new Arena(new ArrayBuffer(1 << 16));
    let carves = 0;
    const counting: SlabStorage<ArrayBuffer, 'host'> = {
      ...(host.storage as SlabStorage<ArrayBuffer, 'host'>),
      carve(slab, offset, dtype, dims) {
        carves++;
        return (host.storage as SlabStorage<ArrayBuffer, 'host'>).carve(slab, offset, dtype, dims);
      },
    };
    const arena = new Arena(new ArrayBuffer(1 << 16), { storage: counting });
    const seen = (): unknown[] => {
      const arrays: unknown[] = [];
      const out = alloc(arena, { y: Undef('float32', 64) });
      arrays.push(out.y);
      scratchspace(arena, (frame) => {
        arrays.push(alloc(frame, 'int32', 10));
        scratchspace(frame, (inner) => arrays.push(alloc(inner, 'uint8', 3, 3)));
        arrays.push(alloc(frame, 'float64', 2, 2));
      });
      // A second frame reusing the same bytes with other shapes: both shapes stay cached.
      scratchspace(arena, (frame) => arrays.push(alloc(frame, 'float32', 10)));
      return arrays;
    };
    const first = seen();
    const made = carves;
    expect(made).toBe(first.length);
    expect(arena.describe().arraysCreated).toBe(made);
    for (let pass = 0; pass < 100; pass++) {
      reset(arena);
      const again = seen();
      for (const [i, a] of again.entries()) expect(a).toBe(first[i]);
    }
    expect(carves).toBe(made);
    expect(arena.describe().arraysCreated).toBe(made);
  });

  test('a cache hit needs the same dtype and the same dims element-wise', () => {
    const arena = new Arena(new ArrayBuffer(1024));
    const a = arena.alloc('float32', [2, 3]);
    reset(arena);
    expect(arena.alloc('float32', [2, 3])).toBe(a);
    reset(arena);
    expect(arena.alloc('float32', [3, 2])).not.toBe(a);
    reset(arena);
    expect(arena.alloc('int32', [2, 3])).not.toBe(a);
    reset(arena);
    expect(arena.alloc('float32', [6])).not.toBe(a);
    reset(arena);
    expect(arena.alloc('float32', [2, 3])).toBe(a);
  });

  test('each offset keeps every shape carved there: nine, or a hundred, taking turns are all reused', () => {
    const arena = new Arena(new ArrayBuffer(1024));
    const sizes = Array.from({ length: 100 }, (_, k) => k + 1);
    const arrays = sizes.map((n) => {
      const a = arena.alloc('uint8', [n]);
      reset(arena);
      return a;
    });
    for (let round = 0; round < 3; round++) {
      sizes.forEach((n, i) => {
        expect(arena.alloc('uint8', [n])).toBe(arrays[i]);
        reset(arena);
      });
    }
    expect(arena.describe().arraysCreated).toBe(100);
  });

  test('a loop over more arrays than the cache first holds (4,096) ends up allocating nothing', () => {
    const arena = new Arena(new ArrayBuffer(1 << 16), { alignment: 16 });
    // 40 offsets × 300 shapes: 12,000 arrays, each carved once per round.
    const round = () => {
      for (let k = 0; k < 300; k++) {
        for (let i = 0; i < 40; i++) arena.alloc('uint8', [k + 1]);
        reset(arena);
      }
    };
    let made = 0;
    for (let r = 0; r < 8; r++) {
      const before = arena.describe().arraysCreated;
      round();
      made = arena.describe().arraysCreated - before;
    }
    expect(made).toBe(0);
  });

  test('a program that keeps making new shapes is served right, and a steady loop after it still allocates nothing', () => {
    const arena = new Arena(new ArrayBuffer(1 << 16), { alignment: 16 });
    for (let k = 1; k <= 10_000; k++) {
      const a = arena.alloc('uint8', [k]);
      expect(a.data.byteOffset).toBe(0);
      expect(a.data.length).toBe(k);
      reset(arena);
    }
    expect(arena.describe().arraysCreated).toBe(10_000);
    const loop = () => [arena.alloc('float32', [3]), arena.alloc('int32', [5, 2]), arena.alloc('uint8', [7])];
    const first = loop();
    for (let r = 0; r < 3; r++) {
      reset(arena);
      loop().forEach((a, i) => {
        expect(a).toBe(first[i]);
      });
    }
    expect(arena.describe().arraysCreated).toBe(10_003);
  });

  test('carves of every spacing, windows remade as they go: every array is still reused', () => {
    // Alignment 1 over 64 KiB: 65,537 offsets, with gaps of every size between carves, so the
    // cache's first level grows and its windows widen to the carves' spacing as the pass goes.
    const arena = new Arena(new ArrayBuffer(1 << 16), { alignment: 1 });
    const sizes = Array.from({ length: 3000 }, (_, k) => 1 + ((k * 7) % 29));
    const pass = () => sizes.map((n) => arena.alloc('uint8', [n]));
    const first = pass();
    for (let r = 0; r < 3; r++) {
      reset(arena);
      const again = pass();
      again.forEach((a, i) => {
        expect(a).toBe(first[i]);
      });
    }
    expect(arena.describe().arraysCreated).toBe(sizes.length);
  });

  test('offsets past 2^32 are cached like any other', () => {
    class Huge {}
    const carved: { offset: number; dims: readonly number[] }[] = [];
    const huge: SlabStorage<Huge, 'host'> = {
      name: 'Huge',
      kind: 'host',
      residency: 'host',
      matches: (slab): slab is Huge => slab instanceof Huge,
      byteLength: () => 2 ** 40,
      carve: (_slab, offset, dtype, dims) => {
        carved.push({ offset, dims });
        return hostArray(new (dtypeInfo(dtype).TypedArray)(0), [0]) as never;
      },
    };
    const arena = new Arena(new Huge(), { storage: huge });
    const step = () => {
      arena.alloc('uint8', [2 ** 33]);
      return [arena.alloc('float32', [4]), arena.alloc('float32', [2, 2]), arena.alloc('int8', [4])];
    };
    const first = step();
    for (let r = 0; r < 3; r++) {
      reset(arena);
      step().forEach((a, i) => {
        expect(a).toBe(first[i]);
      });
    }
    expect(carved.map((c) => c.offset)).toEqual([0, 2 ** 33, 2 ** 33 + 256, 2 ** 33 + 512]);
  });

  test('unchecked arrays hold their data in a plain property (no per-access check)', () => {
    const a = new Arena(new ArrayBuffer(64)).alloc('float32', [2]);
    const descriptor = Object.getOwnPropertyDescriptor(a, 'data');
    expect(descriptor?.value).toBeInstanceOf(Float32Array);
    expect(descriptor?.get).toBeUndefined();
  });
});

describe('describe and toString', () => {
  test('describe reports residency, capacity, offset, watermark, alignment, frames, checked', () => {
    const arena = new Arena(new ArrayBuffer(1 << 20), { alignment: 4096 });
    arena.alloc('uint8', [8192]);
    reset(arena);
    arena.alloc('uint8', [10]);
    scratchspace(arena, (frame) => {
      alloc(frame, 'uint8', 1);
      scratchspace(frame, () => {
        expect(arena.describe()).toEqual({
          kind: 'host',
          storage: 'ArrayBuffer',
          residency: 'host',
          capacity: 1 << 20,
          byteOffset: 0,
          disposed: false,
          offset: 4097,
          watermark: 8192,
          alignment: 4096,
          epoch: 1,
          checked: false,
          openFrames: 2,
          frameMarks: [10, 4097],
          arraysCreated: 3,
        });
        expect(String(arena)).toBe('Arena(host, 1.0 MiB, offset 4097, watermark 8192, 2 open frames)');
      });
    });
    expect(arena.toString()).toBe('Arena(host, 1.0 MiB, offset 10, watermark 8192, 0 open frames)');
  });

  test('toString names the single open frame, the size unit and checked mode', () => {
    const arena = new Arena(new ArrayBuffer(1 << 20));
    arena.alloc('uint8', [4096]);
    arena.alloc('uint8', [4096]);
    arena.reset();
    arena.alloc('uint8', [4096]);
    scratchspace(arena, () => {
      expect(String(arena)).toBe('Arena(host, 1.0 MiB, offset 4096, watermark 8192, 1 open frame)');
    });
    expect(String(new Arena(new ArrayBuffer(512)))).toBe('Arena(host, 512 B, offset 0, watermark 0, 0 open frames)');
    expect(String(new Arena(new ArrayBuffer(1536), { checked: true }))).toBe(
      'Arena(host, 1.5 KiB, offset 0, watermark 0, 0 open frames, checked)',
    );
  });

  test('large capacities print in GiB', () => {
    class Huge {}
    const huge: SlabStorage<Huge, 'host'> = {
      name: 'Huge',
      kind: 'host',
      residency: 'device',
      matches: (slab): slab is Huge => slab instanceof Huge,
      byteLength: () => 3 * 2 ** 30,
      carve: () => {
        throw new Error('not carved in this test');
      },
    };
    const arena = new Arena(new Huge(), { storage: huge });
    expect(String(arena)).toBe('Arena(device, 3.0 GiB, offset 0, watermark 0, 0 open frames)');
    expect(arena.describe().residency).toBe('device');
  });
});
