/// <reference types="node" />
import { runInNewContext } from 'node:vm';
import { alloc, type DType, dtypeInfo, InvalidArgumentError, type PolError, scratchspace, Undef } from '@pol/core';
import { makeHostArray } from '@pol/core/backend';
import { describe, expect, test } from 'vitest';
import { defineStorage, type SlabStorage } from './backend.js';
import { Arena, CarveRangeError, carve, InvalidAlignmentError, InvalidSlabError, MisalignedCarveError, reset } from './index.js';
import { expectRefused, makeSlab, slabNames, WasmMemoryClass } from './test-support/slabs.js';

describe('which storage serves a slab', () => {
  test('buffers of another realm (a vm context) are buffers: instanceof does not know them, their internal slot does', () => {
    const buffer = runInNewContext('new ArrayBuffer(64)') as ArrayBuffer;
    const shared = runInNewContext('new SharedArrayBuffer(64)') as SharedArrayBuffer;
    expect(buffer instanceof ArrayBuffer).toBe(false);
    expect(new Arena(buffer).storage.name).toBe('ArrayBuffer');
    expect(new Arena(shared).storage.name).toBe('SharedArrayBuffer');
    const a = carve(buffer, 0, 'float32', [4]);
    a.data[0] = 1;
    expect(new Float32Array(buffer)[0]).toBe(1);
    expect(carve(shared, 0, 'int32', [2]).data).toHaveLength(2);
  });

  test('this realm’s buffers, views and memories each go to their own storage; anything else is refused', () => {
    expect(new Arena(new ArrayBuffer(64)).storage.name).toBe('ArrayBuffer');
    expect(new Arena(new SharedArrayBuffer(64)).storage.name).toBe('SharedArrayBuffer');
    expect(new Arena(new Uint8Array(64)).storage.name).toBe('Uint8Array (or Node.js Buffer)');
    expect(new Arena(new WasmMemoryClass({ initial: 1 }), { byteOffset: 0 }).storage.name).toBe('WebAssembly.Memory');
    // Objects that look like buffers to a tag, or inherit a buffer's prototype, but hold no bytes.
    const spoofed = { [Symbol.toStringTag]: 'ArrayBuffer', byteLength: 64 };
    const inherited = Object.create(ArrayBuffer.prototype) as object;
    const inheritedShared = Object.create(SharedArrayBuffer.prototype) as object;
    for (const bad of [
      {},
      [],
      spoofed,
      inherited,
      inheritedShared,
      new Float32Array(4),
      new DataView(new ArrayBuffer(8)),
      'bytes',
      64,
      null,
    ]) {
      expect(() => new Arena(bad as never)).toThrow(InvalidSlabError);
    }
    // What the message names a buffer but holds none is told so, not only that buffers are accepted.
    for (const lookalike of [inherited, inheritedShared]) {
      expect(() => new Arena(lookalike as never)).toThrow(/It only looks like one: it holds no buffer/);
    }
    for (const other of [{}, spoofed]) {
      expect(() => new Arena(other as never)).toThrow(/got a plain object\. Accepted: ArrayBuffer, /);
      expect(() => new Arena(other as never)).not.toThrow(/only looks like/);
    }
  });
});

describe('carve', () => {
  test.each(slabNames)('views a %s slab without copying', (name) => {
    const { slab } = makeSlab(name, 256);
    const a = carve(slab, 16, 'float32', [2, 2]);
    const b = carve(slab, 16, 'uint8', [16]);
    a.data[0] = 1;
    expect(b.data[3]).toBe(63);
    expect(a.dims).toEqual([2, 2]);
    expect(Object.isFrozen(a.dims)).toBe(true);
    expect(carve(slab, 16, 'float32', [2, 2])).not.toBe(a); // no cache: a new object every call
  });

  test('ArrayBuffer and SharedArrayBuffer slabs give native views over the slab itself', () => {
    const ab = new ArrayBuffer(64);
    expect(carve(ab, 8, 'float64', [2]).data.buffer).toBe(ab);
    const sab = new SharedArrayBuffer(64);
    const view = carve(sab, 8, 'int32', [4]).data;
    expect(view.buffer).toBe(sab);
    Atomics.store(view, 0, 5);
    expect(new Int32Array(sab)[2]).toBe(5);
  });

  test('a Uint8Array or Buffer slab is viewed at its own byteOffset', () => {
    const buffer = new ArrayBuffer(64);
    const slab = new Uint8Array(buffer, 8, 32);
    const a = carve(slab, 4, 'int32', [2]);
    expect(a.data.buffer).toBe(buffer);
    expect(a.data.byteOffset).toBe(12);
    const node = Buffer.alloc(64);
    const b = carve(node, 8, 'uint16', [4]);
    expect(b.data.buffer).toBe(node.buffer);
    expect(b.data.byteOffset).toBe(node.byteOffset + 8);
  });

  test('refuses offsets outside the slab', () => {
    const slab = new ArrayBuffer(16);
    for (const offset of [-1, 0.5, Number.NaN, 8, 17, Number.POSITIVE_INFINITY]) {
      expect(() => carve(slab, offset, 'float32', [4])).toThrow(CarveRangeError);
    }
    expect(carve(slab, 16, 'float32', [0]).data.length).toBe(0);
    expect(() => carve(slab, 12, 'float32', [2])).toThrow(/has 16 bytes/);
  });

  test('refuses an absolute byte offset that is not a multiple of the element size', () => {
    expect(() => carve(new ArrayBuffer(16), 2, 'float32', [2])).toThrow(MisalignedCarveError);
    const odd = new Uint8Array(new ArrayBuffer(32), 3, 24);
    expect(() => carve(odd, 0, 'float32', [1])).toThrow(/byteOffset 3/);
    expect(carve(odd, 1, 'float32', [1]).data.byteOffset).toBe(4);
    expect(carve(odd, 0, 'uint8', [1]).data.byteOffset).toBe(3);
  });

  test('refuses a slab no storage accepts, and bad dtypes or dims', () => {
    expect(() => carve(new Float32Array(4) as never, 0, 'float32', [1])).toThrow(InvalidSlabError);
    expect(() => carve(new ArrayBuffer(8), 0, 'float80' as never, [1])).toThrow(/Unknown dtype/);
    expect(() => carve(new ArrayBuffer(8), 0, 'float32', [-1])).toThrow(/non-negative integer/);
  });
});

describe('slabs whose base is not aligned', () => {
  test.each([1, 3, 5, 6, 7])('a Uint8Array at byteOffset %s: each carve is absolutely aligned for its element', (base) => {
    const { slab } = makeSlab('Uint8Array', 1024, base);
    const arena = new Arena(slab, { alignment: 64 });
    for (const dtype of ['float64', 'uint8', 'int16', 'float32', 'int32', 'uint16'] as const) {
      const before = arena.offset;
      const a = arena.alloc(dtype, [3]);
      const size = dtypeInfo(dtype).byteSize;
      const relative = a.data.byteOffset - base;
      const arenaAligned = Math.ceil(before / 64) * 64;
      expect(a.data.byteOffset % size).toBe(0);
      // The element's absolute alignment wins over the arena's relative one, by less than one element.
      expect(relative).toBeGreaterThanOrEqual(arenaAligned);
      expect(relative).toBeLessThan(arenaAligned + size);
    }
  });

  test('a pooled Node.js Buffer works as a slab', () => {
    const slab = Buffer.allocUnsafe(4000);
    const arena = new Arena(slab, { alignment: 16 });
    const a = arena.alloc('float64', [10]);
    a.data.fill(1.5);
    expect(a.data.buffer).toBe(slab.buffer);
    expect(slab.readDoubleLE(a.data.byteOffset - slab.byteOffset)).toBe(1.5);
  });
});

describe('WebAssembly.Memory slabs', () => {
  test('arrays stay valid across memory.grow: data is re-derived from the new buffer', () => {
    const memory = new WasmMemoryClass({ initial: 1, maximum: 4 });
    const arena = new Arena(memory, { alignment: 64, byteOffset: 0 });
    expect(arena.capacity).toBe(65536);
    const a = arena.alloc('float32', [16]);
    a.data.fill(3);
    const oldView = a.data;
    memory.grow(1);
    expect(oldView.length).toBe(0); // the engine detached the old view
    expect(a.data.length).toBe(16);
    expect(a.data.buffer).toBe(memory.buffer);
    expect(Array.from(a.data)).toEqual(new Array(16).fill(3));
    const b = arena.alloc('int32', [4]); // carved after the grow
    expect(b.data.byteOffset).toBe(64);
    memory.grow(1);
    expect(b.data.length).toBe(4);
    expect(arena.capacity).toBe(65536); // the arena never grows
    // A cache hit after a grow hands out the same array, over the current buffer.
    reset(arena);
    const again = arena.alloc('float32', [16]);
    expect(again).toBe(a);
    expect(again.data.buffer).toBe(memory.buffer);
    expect(again.data[5]).toBe(3);
    expect(String(a)).toContain('WebAssembly.Memory');
  });

  test('a shared memory works too', () => {
    const memory = new WasmMemoryClass({ initial: 1, maximum: 2, shared: true });
    const arena = new Arena(memory, { byteOffset: 0 });
    const a = arena.alloc('int32', [4]);
    a.data[0] = 9;
    memory.grow(1);
    expect(a.data[0]).toBe(9);
    expect(a.data.buffer).toBe(memory.buffer);
  });
});

describe('defineStorage', () => {
  // A stand-in for a device buffer: bytes the arena reaches only through its storage.
  class FakeDeviceBuffer {
    readonly bytes: ArrayBuffer;
    constructor(readonly size: number) {
      this.bytes = new ArrayBuffer(size);
    }
  }
  // Its slab type is not declared in SlabTypes, so without a storage option the types need a cast;
  // at run time the registry finds the storage.
  const asSlab = (slab: FakeDeviceBuffer) => slab as unknown as ArrayBuffer;

  function fakeStorage(calls: string[]): SlabStorage<FakeDeviceBuffer, 'host'> {
    return {
      name: 'FakeDeviceBuffer',
      kind: 'host',
      residency: 'device',
      matches: (slab): slab is FakeDeviceBuffer => slab instanceof FakeDeviceBuffer,
      byteLength: (slab) => slab.size,
      checkAlignment(_slab, alignment) {
        if (alignment < 64) throw new InvalidAlignmentError(`FakeDeviceBuffer needs alignment >= 64, got ${alignment}`);
      },
      reserve: (bytes) => Math.max(4, Math.ceil(bytes / 4) * 4),
      carve<D extends DType>(slab: FakeDeviceBuffer, offset: number, dtype: D, dims: readonly number[]) {
        calls.push(`carve ${offset} ${dtype}`);
        const count = dims.reduce((a, b) => a * b, 1);
        return makeHostArray(dtype, dims, new (dtypeInfo(dtype).TypedArray)(slab.bytes, offset, count));
      },
      poison(_slab, offset, byteLength, dtype) {
        calls.push(`poison ${offset} ${byteLength}${dtype === undefined ? '' : ` ${dtype}`}`);
      },
    };
  }

  test('a registered storage carves its slabs, with its reserve, alignment check and poison', () => {
    const calls: string[] = [];
    const storage = fakeStorage(calls);
    defineStorage(storage);
    const slab = new FakeDeviceBuffer(1024);
    expect(() => new Arena(asSlab(slab), { alignment: 16 })).toThrow(InvalidAlignmentError);
    const arena = new Arena(asSlab(slab), { alignment: 64, checked: true });
    expect(arena.storage).toBe(storage);
    expect(arena.describe()).toMatchObject({ residency: 'device', storage: 'FakeDeviceBuffer' });
    scratchspace(arena, (frame) => {
      alloc(frame, 'uint8', 0); // reserved as 4 bytes
      alloc(frame, 'uint8', 5); // reserved as 8 bytes
      alloc(frame, 'float32', 3);
      expect(arena.offset).toBe(140);
    });
    // No carveChecked: checked mode still carves (never from a cache) and poisons.
    expect(calls).toEqual(['carve 0 uint8', 'carve 64 uint8', 'carve 128 float32', 'poison 0 140', 'poison 128 12 float32']);
    const c = carve(asSlab(slab), 8, 'int32', [2]);
    expect(c.data.byteOffset).toBe(8);
  });

  test('later definitions are tried first; defining again moves a storage to the front', () => {
    const first: string[] = [];
    const second: string[] = [];
    const a = fakeStorage(first);
    const b = { ...fakeStorage(second), name: 'Second' };
    defineStorage(a);
    defineStorage(b);
    expect(new Arena(asSlab(new FakeDeviceBuffer(128)), { alignment: 64 }).storage.name).toBe('Second');
    defineStorage(a);
    expect(new Arena(asSlab(new FakeDeviceBuffer(128)), { alignment: 64 }).storage).toBe(a);
  });

  test('an explicit storage option wins over the registry', () => {
    const calls: string[] = [];
    const storage = { ...fakeStorage(calls), name: 'Explicit' };
    const arena = new Arena(new FakeDeviceBuffer(256), { alignment: 64, storage });
    expect(arena.storage.name).toBe('Explicit');
  });

  test('the unmatched-slab error lists registered storages', () => {
    try {
      new Arena(Symbol('slab') as never);
    } catch (e) {
      expect((e as PolError).code).toBe('POL_INVALID_SLAB');
      expect((e as Error).message).toContain('FakeDeviceBuffer');
    }
  });

  test('refuses something that is not a storage', () => {
    for (const bad of [null, {}, { name: 'x', kind: 'host', residency: 'disk', matches() {}, byteLength() {}, carve() {} }]) {
      expect(() => defineStorage(bad as never)).toThrow(/A storage needs/);
    }
  });

  test('a storage reporting a nonsensical size is refused', () => {
    const storage = { ...fakeStorage([]), byteLength: () => -1 };
    expect(() => new Arena(new FakeDeviceBuffer(64), { alignment: 64, storage })).toThrow(InvalidSlabError);
  });
});

describe('a storage whose slab can die: attach and forget', () => {
  // A slab that can be destroyed, like a GPUBuffer: its storage refuses to carve a dead one.
  class DyingSlab {
    readonly bytes = new ArrayBuffer(1024);
    dead = false;
    /** Called by the next carve, before it looks at `dead`: the slab dies during a carve. */
    dying: (() => void) | undefined;
  }
  class DeadSlabError extends InvalidSlabError {}
  function dyingStorage(log: string[]) {
    const attached: { slab: DyingSlab; arena: unknown; forget: () => void }[] = [];
    const storage: SlabStorage<DyingSlab, 'host'> = {
      name: 'DyingSlab',
      kind: 'host',
      residency: 'device',
      matches: (slab): slab is DyingSlab => slab instanceof DyingSlab,
      byteLength: (slab) => slab.bytes.byteLength,
      checkAlignment(_slab, alignment) {
        if (alignment < 16) throw new InvalidAlignmentError(`DyingSlab needs alignment >= 16, got ${alignment}`);
      },
      carve<D extends DType>(slab: DyingSlab, offset: number, dtype: D, dims: readonly number[]) {
        const dying = slab.dying;
        slab.dying = undefined;
        dying?.();
        if (slab.dead) throw new DeadSlabError('the slab was destroyed: make a new one');
        log.push(`carve ${offset}`);
        const count = dims.reduce((a, b) => a * b, 1);
        return makeHostArray(dtype, dims, new (dtypeInfo(dtype).TypedArray)(slab.bytes, offset, count));
      },
      attach(slab, arena, forget) {
        attached.push({ slab, arena, forget });
      },
    };
    // Destroying the slab makes every arena over it forget, as @pol/webgpu does.
    const destroy = (slab: DyingSlab) => {
      slab.dead = true;
      for (const a of attached) if (a.slab === slab) a.forget();
    };
    return { storage, attached, destroy };
  }

  test('attach is called once by new Arena, after its checks, with the slab, the arena and forget', () => {
    const { storage, attached } = dyingStorage([]);
    const slab = new DyingSlab();
    expect(() => new Arena(slab, { storage, alignment: 8 })).toThrow(InvalidAlignmentError);
    expect(attached).toEqual([]);
    const arena = new Arena(slab, { storage, alignment: 16 });
    expect(attached).toHaveLength(1);
    expect(attached[0]?.slab).toBe(slab);
    expect(attached[0]?.arena).toBe(arena);
    expect(typeof attached[0]?.forget).toBe('function');
    arena.alloc('float32', [4]);
    expect(attached).toHaveLength(1);
  });

  test('cached carves never ask the storage; after forget, the next carve at each offset does', () => {
    const log: string[] = [];
    const { storage, attached } = dyingStorage(log);
    const arena = new Arena(new DyingSlab(), { storage, alignment: 16 });
    const a = arena.alloc('float32', [4]);
    const b = arena.alloc('int32', [2]);
    arena.reset();
    expect(arena.alloc('float32', [4])).toBe(a);
    expect(arena.alloc('int32', [2])).toBe(b);
    expect(log).toEqual(['carve 0', 'carve 16']);
    arena.reset();
    attached[0]?.forget();
    attached[0]?.forget(); // again: nothing more
    const a2 = arena.alloc('float32', [4]);
    expect(a2).not.toBe(a);
    expect(log).toEqual(['carve 0', 'carve 16', 'carve 0']);
    expect(arena.describe().arraysCreated).toBe(3);
    arena.reset();
    expect(arena.alloc('float32', [4])).toBe(a2); // cached again from then on
  });

  test('after the slab dies, alloc at a cached offset is refused with the storage’s typed error, changing nothing', () => {
    const { storage, destroy } = dyingStorage([]);
    const slab = new DyingSlab();
    const arena = new Arena(slab, { storage, alignment: 16 });
    const other = new Arena(slab, { storage, alignment: 16 }); // a second arena over the same slab
    arena.alloc('float32', [4]);
    other.alloc('float32', [4]);
    arena.reset();
    other.reset();
    destroy(slab);
    expectRefused(arena, 'POL_INVALID_SLAB', () => arena.alloc('float32', [4]));
    expect(() => other.alloc('float32', [4])).toThrow(DeadSlabError);
    expect(() => alloc(arena, { a: Undef('float32', 4) })).toThrow(DeadSlabError);
    expect(arena.offset).toBe(0);
    // Inside a frame too, and the frame still closes.
    scratchspace(arena, (frame) => {
      expect(() => alloc(frame, 'float32', 4)).toThrow(DeadSlabError);
    });
    expect(arena.describe().openFrames).toBe(0);
  });

  test('the slab dying in the middle of a spec: refused with the typed error, and the arena is as it was', () => {
    const { storage, destroy } = dyingStorage([]);
    const slab = new DyingSlab();
    const arena = new Arena(slab, { storage, alignment: 16 });
    alloc(arena, { a: Undef('float32', 4) });
    arena.reset();
    const before = arena.describe();
    // `a` hits the cache; `b` is new, so the storage carves it, and the slab dies right then: its
    // arenas forget (inside the spec's savepoint), and the carve is refused.
    slab.dying = () => destroy(slab);
    expect(() => alloc(arena, { a: Undef('float32', 4), b: Undef('int32', 8) })).toThrow(DeadSlabError);
    expect(arena.describe()).toEqual(before);
    expectRefused(arena, 'POL_INVALID_SLAB', () => arena.alloc('float32', [4]));
  });

  test('a checked arena is attached too; it caches nothing, so every carve asks the storage anyway', () => {
    const log: string[] = [];
    const { storage, attached, destroy } = dyingStorage(log);
    const slab = new DyingSlab();
    const arena = new Arena(slab, { storage, alignment: 16, checked: true });
    expect(attached).toHaveLength(1);
    arena.alloc('float32', [4]);
    arena.reset();
    arena.alloc('float32', [4]);
    expect(log).toEqual(['carve 0', 'carve 0']);
    arena.reset();
    destroy(slab);
    expectRefused(arena, 'POL_INVALID_SLAB', () => arena.alloc('float32', [4]));
  });

  test('a storage whose attach (or another optional member) is not a function is refused, registering nothing', () => {
    const { storage } = dyingStorage([]);
    for (const member of ['attach', 'reserve', 'checkSlab', 'carveChecked', 'poison', 'byteOffset', 'checkAlignment']) {
      const bad = { ...storage, [member]: 42 };
      expect(() => defineStorage(bad as never)).toThrow(new RegExp(`its ${member} must be a function, got 42\\.`));
      expect(() => new Arena(new DyingSlab(), { storage: bad as never, alignment: 16 })).toThrow(InvalidArgumentError);
    }
    expect(() => new Arena(new DyingSlab() as never)).toThrow(InvalidSlabError);
  });
});

describe('refused allocations change nothing on every slab', () => {
  test.each(slabNames)('%s', (name) => {
    const { slab } = makeSlab(name, 512, 3);
    const arena = name === 'WebAssembly.Memory' ? new Arena(slab, { byteOffset: 0, byteLength: 512 }) : new Arena(slab);
    arena.alloc('float32', [4]);
    expectRefused(arena, 'POL_ARENA_FULL', () => arena.alloc('float32', [128]));
    expectRefused(arena, 'POL_INVALID_SHAPE', () => arena.alloc('float32', [0.5]));
  });
});
