import { alloc, type DType, dtypeInfo, InvalidArgumentError, PolError, Similar, scratchspace } from '@pol/core';
import { makeHostArray } from '@pol/core/backend';
import { describe, expect, test } from 'vitest';
import type { SlabStorage } from './backend.js';
import {
  Arena,
  DisposedArenaError,
  ForeignMemoryError,
  FrameOrderError,
  InvalidRegionError,
  InvalidSlabError,
  MissingRegionError,
  mark,
  pointer,
  RegionOverlapError,
  retract,
  StaleArrayError,
} from './index.js';
import { expectRefused, WasmMemoryClass } from './test-support/slabs.js';
import { thrown } from './test-support/thrown.js';

const memoryOf = (pages = 1, maximum = pages + 4) => new WasmMemoryClass({ initial: pages, maximum });

describe('an arena over a region of a slab', () => {
  test('carves from the region only, counting offsets from its first byte', () => {
    const buffer = new ArrayBuffer(4096);
    const arena = new Arena(buffer, { byteOffset: 1024, byteLength: 2048, alignment: 64 });
    expect(arena.byteOffset).toBe(1024);
    expect(arena.capacity).toBe(2048);
    const a = arena.alloc('float32', [4]);
    expect(a.data.buffer).toBe(buffer);
    expect(a.data.byteOffset).toBe(1024);
    const b = arena.alloc('uint8', [3]);
    expect(b.data.byteOffset).toBe(1024 + 64);
    expect(arena.offset).toBe(67);
    expect(arena.describe()).toMatchObject({ capacity: 2048, byteOffset: 1024, offset: 67, disposed: false });
    expect(String(arena)).toBe('Arena(host, 2.0 KiB at byte 1024, offset 67, watermark 67, 0 open frames)');
    expect(() => arena.alloc('uint8', [2048])).toThrow(/full/);
  });

  test('over a SharedArrayBuffer, a Uint8Array and a Node.js Buffer', () => {
    const shared = new SharedArrayBuffer(1024);
    expect(new Arena(shared, { byteOffset: 512 }).alloc('int32', [2]).data.byteOffset).toBe(512);
    // A Uint8Array's region counts from the Uint8Array's own first byte.
    const bytes = new Uint8Array(new ArrayBuffer(1024), 16, 512);
    const arena = new Arena(bytes, { byteOffset: 64, byteLength: 128 });
    expect(arena.capacity).toBe(128);
    expect(arena.alloc('float64', [1]).data.byteOffset).toBe(16 + 64);
    const buffer = Buffer.alloc(256);
    expect(new Arena(buffer, { byteOffset: 8, byteLength: 8 }).alloc('uint8', [8]).data.byteOffset).toBe(buffer.byteOffset + 8);
  });

  test('byteLength alone starts the region at 0; byteOffset alone runs it to the end', () => {
    const a = new Arena(new ArrayBuffer(1024), { byteLength: 100 });
    expect([a.byteOffset, a.capacity]).toEqual([0, 100]);
    const b = new Arena(new ArrayBuffer(1024), { byteOffset: 1000 });
    expect([b.byteOffset, b.capacity]).toEqual([1000, 24]);
  });

  test('the same allocation sequence gives the same offsets in every region', () => {
    const buffer = new ArrayBuffer(1 << 14);
    const layout = (arena: Arena<'host'>) =>
      [arena.alloc('uint8', [3]), arena.alloc('float64', [5]), arena.alloc('int16', [7])].map(
        (x) => x.data.byteOffset - arena.byteOffset,
      );
    const first = new Arena(buffer, { byteOffset: 8, byteLength: 4096, alignment: 16 });
    const second = new Arena(buffer, { byteOffset: 8192, byteLength: 4096, alignment: 16 });
    expect(layout(first)).toEqual(layout(second));
    expect(layout(new Arena(new ArrayBuffer(4096), { alignment: 16 }))).toEqual([0, 16, 64]);
  });

  test('checked mode poisons inside the region only', () => {
    const buffer = new ArrayBuffer(1024);
    const outside = new Uint8Array(buffer);
    outside.fill(7);
    const arena = new Arena(buffer, { byteOffset: 256, byteLength: 256, checked: true });
    const kept = scratchspace(arena, (frame) => alloc(frame, 'float32', 8).data);
    expect(Number.isNaN(kept[0])).toBe(true);
    arena.alloc('uint8', [16]);
    arena.reset();
    expect(outside.subarray(0, 256).every((v) => v === 7)).toBe(true);
    expect(outside.subarray(512).every((v) => v === 7)).toBe(true);
  });
});

describe('bad regions are refused with InvalidRegionError, and no arena is made', () => {
  const buffer = new ArrayBuffer(1024);
  const bad: [string, object, RegExp][] = [
    ['a negative byteOffset', { byteOffset: -8 }, /byteOffset must be a non-negative integer/],
    ['a fractional byteOffset', { byteOffset: 8.5 }, /byteOffset must be a non-negative integer/],
    ['a NaN byteOffset', { byteOffset: Number.NaN }, /byteOffset must be a non-negative integer/],
    ['a string byteOffset', { byteOffset: '8' }, /byteOffset must be a non-negative integer/],
    ['a negative byteLength', { byteLength: -1 }, /byteLength must be a non-negative integer/],
    ['an infinite byteLength', { byteLength: Number.POSITIVE_INFINITY }, /byteLength must be a non-negative integer/],
    ['a zero byteLength', { byteOffset: 8, byteLength: 0 }, /0 bytes long/],
    ['a byteOffset at the end', { byteOffset: 1024 }, /0 bytes long/],
    [
      'a byteOffset past the end',
      { byteOffset: 2048 },
      /byteOffset 2048 is past the end of the slab \(an ArrayBuffer, 1024 bytes\)\. Pass a byteOffset from 0 to 1023/,
    ],
    ['a region running past the end', { byteOffset: 512, byteLength: 1024 }, /runs past the end .* at most 512/],
    ['a start off a multiple of 8', { byteOffset: 4, byteLength: 16 }, /multiple of 8 bytes, .* Round it up to 8/],
  ];
  test.each(bad)('%s', (_, options, message) => {
    const error = thrown(() => new Arena(buffer, options as never));
    expect(error).toBeInstanceOf(InvalidRegionError);
    expect(error).toBeInstanceOf(PolError);
    expect((error as PolError).code).toBe('POL_INVALID_REGION');
    expect((error as Error).message).toMatch(message);
    // Nothing was held: the same bytes make an arena at once.
    expect(new Arena(buffer, { byteOffset: 0, byteLength: 1024 }).dispose()).toBeUndefined();
  });

  test('the start alignment is the smaller of 8 and the arena alignment, in absolute terms', () => {
    expect(new Arena(new ArrayBuffer(64), { byteOffset: 4, byteLength: 16, alignment: 4 }).byteOffset).toBe(4);
    expect(new Arena(new ArrayBuffer(64), { byteOffset: 3, byteLength: 16, alignment: 1 }).byteOffset).toBe(3);
    // A Uint8Array at byte 3 of its buffer: byteOffset 5 is byte 8 there.
    const bytes = new Uint8Array(new ArrayBuffer(64), 3, 48);
    expect(new Arena(bytes, { byteOffset: 5, byteLength: 8 }).byteOffset).toBe(5);
    expect(() => new Arena(bytes, { byteOffset: 8, byteLength: 8 })).toThrow(
      /byte 11 of the memory its views index.*Round it up to 13/,
    );
  });

  test('a storage of device memory has no regions', () => {
    class Device {
      readonly bytes = new ArrayBuffer(1024);
    }
    const storage: SlabStorage<Device, 'host'> = {
      name: 'Device',
      kind: 'host',
      residency: 'device',
      matches: (slab): slab is Device => slab instanceof Device,
      byteLength: (slab) => slab.bytes.byteLength,
      carve: <D extends DType>(slab: Device, offset: number, dtype: D, dims: readonly number[]) =>
        makeHostArray(
          dtype,
          dims,
          new (dtypeInfo(dtype).TypedArray)(
            slab.bytes,
            offset,
            dims.reduce((a, b) => a * b, 1),
          ),
        ),
    };
    expect(() => new Arena(new Device(), { storage, byteOffset: 256 })).toThrow(InvalidRegionError);
    expect(new Arena(new Device(), { storage }).capacity).toBe(1024);
  });
});

describe('a WebAssembly memory', () => {
  test('needs its region said outright: new Arena(memory) is refused with MissingRegionError', () => {
    const memory = memoryOf();
    new Uint8Array(memory.buffer)[0] = 42; // the module's byte
    for (const options of [undefined, {}, { byteLength: 1024 }, { alignment: 16 }]) {
      const error = thrown(() => new Arena(memory, options as never));
      expect(error).toBeInstanceOf(MissingRegionError);
      expect((error as PolError).code).toBe('POL_MISSING_REGION');
      expect((error as Error).message).toMatch(/module's own heap.*_malloc\(n\).*byteOffset: 0/);
    }
    expect(new Uint8Array(memory.buffer)[0]).toBe(42);
    // Asked for outright, the whole memory (at its size now).
    const whole = new Arena(memory, { byteOffset: 0 });
    expect(whole.capacity).toBe(65536);
  });

  test('a region never touches the module bytes around it, and follows grows', () => {
    const memory = memoryOf(1, 3);
    const heap = new Uint8Array(memory.buffer);
    heap.fill(0xee);
    const arena = new Arena(memory, { byteOffset: 4096, byteLength: 1024, alignment: 16 });
    const x = arena.alloc('float32', [16]);
    x.data.fill(1.5);
    expect(pointer(x, memory)).toBe(4096);
    memory.grow(1);
    expect(x.data.length).toBe(16);
    expect(x.data[15]).toBe(1.5);
    expect(pointer(x, memory)).toBe(4096);
    const y = arena.alloc('float64', [4]);
    expect(pointer(y, memory)).toBe(4096 + 64);
    const after = new Uint8Array(memory.buffer);
    expect(after.subarray(0, 4096).every((v) => v === 0xee)).toBe(true);
    expect(after.subarray(4096 + 1024, 65536).every((v) => v === 0xee)).toBe(true);
  });

  test('a grow in the middle of a frame: arrays carved before and after it stay right, and the frame closes', () => {
    const memory = memoryOf(1, 3);
    const arena = new Arena(memory, { byteOffset: 1024, byteLength: 8192 });
    const out = arena.alloc('float32', [8]);
    scratchspace(arena, (frame) => {
      const before = alloc(frame, 'float32', 8);
      before.data.fill(2);
      const stale = before.data;
      memory.grow(1); // as a module's malloc would, from inside a kernel
      expect(stale.length).toBe(0); // a TypedArray taken before the grow is detached
      const afterGrow = alloc(frame, 'float32', 8);
      afterGrow.data.fill(3);
      for (let i = 0; i < 8; i++) out.data[i] = (before.data[i] ?? 0) + (afterGrow.data[i] ?? 0);
    });
    expect(Array.from(out.data)).toEqual(new Array(8).fill(5));
    expect(arena.offset).toBe(32);
  });

  test('a checked region over a memory: arrays die at release, across grows', () => {
    const memory = memoryOf(1, 2);
    const arena = new Arena(memory, { byteOffset: 2048, byteLength: 2048, checked: true });
    const m = mark(arena);
    const dead = arena.alloc('float32', [4]);
    retract(arena, m);
    memory.grow(1);
    expect(() => dead.data).toThrow(StaleArrayError);
    expect(Number.isNaN(new Float32Array(memory.buffer, 2048, 1)[0])).toBe(true);
  });

  test('a Uint8Array over a memory buffer that has since grown is refused with InvalidSlabError, not a bare TypeError', () => {
    const memory = memoryOf(1, 2);
    const arena = new Arena(new Uint8Array(memory.buffer, 1024, 4096));
    arena.alloc('float32', [4]);
    memory.grow(1);
    const error = thrown(() => arena.alloc('float32', [4]));
    expect(error).toBeInstanceOf(InvalidSlabError);
    expect((error as Error).message).toMatch(/detached .* new Arena\(memory, \{ byteOffset, byteLength \}\)/);
    expect(arena.offset).toBe(16);
  });
});

describe('holds: one thread, one arena per byte', () => {
  test('an overlapping region is refused with RegionOverlapError naming the holder; the holder is untouched', () => {
    const buffer = new ArrayBuffer(4096);
    const holder = new Arena(buffer, { byteOffset: 1024, byteLength: 1024 });
    const a = holder.alloc('int32', [4]);
    a.data[0] = 7;
    const before = holder.describe();
    for (const [byteOffset, byteLength] of [
      [1024, 1024],
      [0, 1032],
      [2040, 8],
      [1536, 2048],
      [0, 4096],
    ] as const) {
      const error = thrown(() => new Arena(buffer, { byteOffset, byteLength }));
      expect(error, `${byteOffset}+${byteLength}`).toBeInstanceOf(RegionOverlapError);
      expect((error as PolError).code).toBe('POL_REGION_OVERLAP');
      expect((error as Error).message).toMatch(/overlaps bytes \[1024, 2048\) .* Arena\(host, 1.0 KiB at byte 1024.*dispose\(\)/);
    }
    expect(holder.describe()).toEqual(before);
    expect(a.data[0]).toBe(7);
    // Regions side by side are fine.
    new Arena(buffer, { byteOffset: 0, byteLength: 1024 });
    new Arena(buffer, { byteOffset: 2048, byteLength: 2048 });
  });

  test('holds are of the bytes, whatever views a slab: a Uint8Array over the buffer, a memory', () => {
    const buffer = new ArrayBuffer(4096);
    new Arena(buffer, { byteOffset: 1024, byteLength: 1024 });
    expect(() => new Arena(new Uint8Array(buffer, 512, 1024), { byteOffset: 512, byteLength: 8 })).toThrow(RegionOverlapError);
    expect(new Arena(new Uint8Array(buffer, 512, 1024), { byteOffset: 0, byteLength: 512 }).capacity).toBe(512);
    const memory = memoryOf(1, 2);
    new Arena(memory, { byteOffset: 0, byteLength: 4096 });
    memory.grow(1); // the memory's buffer changes; its holds do not
    expect(() => new Arena(memory, { byteOffset: 4088, byteLength: 64 })).toThrow(RegionOverlapError);
    expect(new Arena(memory, { byteOffset: 4096, byteLength: 64 }).capacity).toBe(64);
  });

  test('dispose gives the region back; a disposed arena refuses every carve, cache hits included', () => {
    const buffer = new ArrayBuffer(2048);
    const first = new Arena(buffer, { byteOffset: 0, byteLength: 1024 });
    const x = first.alloc('float32', [4]);
    first.reset();
    expect(first.alloc('float32', [4])).toBe(x); // steady: a cache hit
    first.reset();
    first.dispose();
    expect(first.disposed).toBe(true);
    expect(String(first)).toContain(', disposed)');
    expect(first.describe().disposed).toBe(true);
    const error = expectRefused(first, 'POL_DISPOSED_ARENA', () => first.alloc('float32', [4]));
    expect(error).toBeInstanceOf(DisposedArenaError);
    expect(error.message).toMatch(/was disposed, and its region may belong to another arena/);
    expectRefused(first, 'POL_DISPOSED_ARENA', () => first.tryAlloc('float32', [4]));
    expectRefused(first, 'POL_DISPOSED_ARENA', () => scratchspace(first, (frame) => alloc(frame, 'uint8', 1)));
    first.dispose(); // again: nothing more
    const second = new Arena(buffer, { byteOffset: 512, byteLength: 1024 });
    expect(second.alloc('float32', [4]).data.byteOffset).toBe(512);
  });

  test('Symbol.dispose disposes, for using', () => {
    const buffer = new ArrayBuffer(256);
    const arena = new Arena(buffer, { byteOffset: 0 });
    arena[Symbol.dispose]();
    expect(arena.disposed).toBe(true);
    expect(new Arena(buffer, { byteOffset: 0 }).disposed).toBe(false);
  });

  test('dispose is refused while a frame is open, changing nothing', () => {
    const buffer = new ArrayBuffer(256);
    const arena = new Arena(buffer, { byteOffset: 0 });
    scratchspace(arena, () => {
      expect(expectRefused(arena, 'POL_FRAME_ORDER', () => arena.dispose())).toBeInstanceOf(FrameOrderError);
    });
    expect(() => new Arena(buffer, { byteOffset: 0 })).toThrow(RegionOverlapError);
    arena.dispose();
    expect(new Arena(buffer, { byteOffset: 0 }).capacity).toBe(256);
  });

  test('a checked arena kills its arrays when disposed', () => {
    const arena = new Arena(new ArrayBuffer(256), { byteOffset: 0, checked: true });
    const a = arena.alloc('float32', [2]);
    arena.dispose();
    expect(() => a.data).toThrow(/was disposed, giving its region back/);
  });

  test('arenas over a whole slab, made without region options, take no hold', () => {
    // The slab is declared the arena's own; a new arena over it, one after another, is common.
    const buffer = new ArrayBuffer(256);
    new Arena(buffer);
    new Arena(buffer);
    expect(new Arena(buffer, { byteOffset: 0 }).capacity).toBe(256);
  });
});

describe('pointer(array, memory)', () => {
  test('is the absolute byte offset, for every dtype, in checked mode too', () => {
    const memory = memoryOf();
    const arena = new Arena(memory, { byteOffset: 8192, byteLength: 4096, alignment: 8, checked: true });
    const a = arena.alloc('uint8', [3]);
    const b = arena.alloc('float64', [2]);
    expect(pointer(a, memory)).toBe(8192);
    expect(pointer(b, memory)).toBe(8200);
    expect(b.data.byteOffset).toBe(8200);
  });

  test('refuses an array outside the memory with ForeignMemoryError', () => {
    const memory = memoryOf();
    const other = memoryOf();
    const x = new Arena(other, { byteOffset: 0 }).alloc('float32', [4]);
    for (const array of [x, alloc(Similar(x), 'float32', 4), new Arena(new ArrayBuffer(64)).alloc('float32', [4])]) {
      const error = thrown(() => pointer(array, memory));
      expect(error).toBeInstanceOf(ForeignMemoryError);
      expect((error as PolError).code).toBe('POL_FOREIGN_MEMORY');
      expect((error as Error).message).toMatch(/not in this memory.*new Arena\(memory, \{ byteOffset, byteLength \}\)/);
    }
    expect(() => pointer(x, {} as never)).toThrow(/no WebAssembly memory/);
  });

  test('refuses what is not a host array with InvalidArgumentError', () => {
    const memory = memoryOf();
    for (const bad of [undefined, null, 42, {}, { data: [1, 2] }, new Float32Array(4)]) {
      expect(() => pointer(bad as never, memory)).toThrow(InvalidArgumentError);
    }
  });
});
