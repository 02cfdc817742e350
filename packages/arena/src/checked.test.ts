import { alloc, type DType, type HostArray, isArray, Similar, scratchspace, Undef } from '@pol/core';
import { hostFamily } from '@pol/core/backend';
import { describe, expect, test } from 'vitest';
import { POISON_BYTE } from './backend.js';
import { Arena, mark, reset, retract, StaleArrayError } from './index.js';
import { makeSlab, slabNames, WasmMemoryClass } from './test-support/slabs.js';

const checked = () => new Arena(new ArrayBuffer(1 << 14), { alignment: 16, checked: true });

function staleError(f: () => unknown): StaleArrayError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(StaleArrayError);
    expect((e as StaleArrayError).code).toBe('POL_STALE_ARRAY');
    return e as StaleArrayError;
  }
  throw new Error('expected a StaleArrayError');
}

describe('checked mode: poison', () => {
  const poisons: [DType, unknown][] = [
    ['float32', Number.NaN],
    ['float64', Number.NaN],
    ['int8', -91],
    ['uint8', 0xa5],
    ['int16', -23131],
    ['uint16', 0xa5a5],
    ['int32', -1515870811],
    ['uint32', 0xa5a5a5a5],
    ['int64', -6510615555426900571n],
    ['uint64', 0xa5a5a5a5a5a5a5a5n],
  ];
  test.each(poisons)('a released %s array reads as %s through an old TypedArray', (dtype, poison) => {
    const arena = checked();
    const data = scratchspace(arena, (frame) => {
      const a = alloc(frame, dtype, 5);
      (a.data as { fill(v: unknown): unknown }).fill(typeof poison === 'bigint' ? 1n : 1);
      return a.data; // the TypedArray itself is not revoked; its bytes are poisoned
    });
    for (const v of Array.from(data as ArrayLike<unknown>)) expect(v).toEqual(poison);
  });

  test('the poison byte is 0xA5, and padding between arrays is poisoned too', () => {
    expect(POISON_BYTE).toBe(0xa5);
    const arena = checked();
    const bytes = new Uint8Array(arena.slab as ArrayBuffer);
    const m = mark(arena);
    arena.alloc('float32', [1]).data[0] = 1;
    arena.alloc('uint8', [1]).data[0] = 1;
    retract(arena, m);
    expect(Array.from(bytes.subarray(4, 17))).toEqual(new Array(13).fill(0xa5));
    expect(new Float32Array(arena.slab as ArrayBuffer, 0, 1)[0]).toBeNaN();
  });

  test('reset poisons everything up to the offset; bytes never carved stay as they were', () => {
    const arena = checked();
    arena.alloc('int32', [4]).data.fill(1);
    reset(arena);
    const ints = new Int32Array(arena.slab as ArrayBuffer, 0, 8);
    expect(Array.from(ints.subarray(0, 4))).toEqual(new Array(4).fill(-1515870811));
    expect(Array.from(ints.subarray(4))).toEqual([0, 0, 0, 0]);
  });
});

describe('checked mode: stale arrays', () => {
  test('an array refuses data after its frame closed, naming the array and the release', () => {
    const arena = checked();
    alloc(arena, 'uint8', 3);
    const escaped = scratchspace(arena, (frame) => {
      const a = alloc(frame, 'float32', 2, 3);
      a.data.fill(1);
      return a;
    });
    const e = staleError(() => escaped.data);
    expect(e.message).toContain('float32[2, 3]');
    expect(e.message).toContain('carved at offset 16');
    expect(e.message).toContain('its frame closed');
    expect(e.message).toContain('offset 3 in epoch 0');
    // dtype and dims stay readable; only memory access is refused.
    expect(escaped.dtype).toBe('float32');
    expect(escaped.dims).toEqual([2, 3]);
    expect(String(escaped)).toContain('dead');
  });

  test('after a reset, every array of the epoch is stale', () => {
    const arena = checked();
    const a = arena.alloc('int32', [4]);
    expect(a.data.length).toBe(4);
    reset(arena);
    const e = staleError(() => a.data);
    expect(e.message).toContain('reset(arena) released it, ending epoch 0');
  });

  test('after a retract, exactly the arrays carved since the mark are stale', () => {
    const arena = checked();
    const kept = arena.alloc('float64', [2]);
    const zeroBefore = arena.alloc('float32', [0]);
    const m = mark(arena);
    const zeroAfter = arena.alloc('float32', [0]); // at the mark's very offset, but carved after it
    const dropped = arena.alloc('float64', [2]);
    retract(arena, m);
    expect(kept.data.length).toBe(2);
    expect(zeroBefore.data.length).toBe(0);
    staleError(() => zeroAfter.data);
    expect(staleError(() => dropped.data).message).toContain('retract(arena, mark) released it');
  });

  test('arrays of outer frames stay live while inner ones die', () => {
    const arena = checked();
    scratchspace(arena, (outer) => {
      const a = alloc(outer, 'float32', 4);
      a.data.fill(5);
      const inner = scratchspace(outer, (frame) => alloc(frame, 'float32', 4));
      staleError(() => inner.data);
      expect(Array.from(a.data)).toEqual([5, 5, 5, 5]);
    });
  });

  test('a spec that fails part-way kills the arrays it had carved', () => {
    const arena = checked();
    expect(() => alloc(arena, { a: Undef('float32', 4), b: Undef('float32', 1 << 20) })).toThrow(/is full/);
    expect(arena.offset).toBe(0);
  });

  test('array objects are never reused: a dead array stays dead', () => {
    const arena = checked();
    const first = arena.alloc('float32', [4]);
    reset(arena);
    const second = arena.alloc('float32', [4]);
    expect(second).not.toBe(first);
    expect(second.data.length).toBe(4);
    staleError(() => first.data);
    expect(arena.describe().arraysCreated).toBe(2);
  });

  test('checked arrays are host arrays to the rest of Pol', () => {
    const arena = checked();
    const a = arena.alloc('float32', [3]);
    expect(isArray(a)).toBe(true);
    const fromSimilar: HostArray<'float32'> = alloc(Similar(a), 'float32', 3);
    expect(fromSimilar.data).toBeInstanceOf(Float32Array);
    expect((a as unknown as Record<symbol, unknown>)[Symbol.for('@pol/core/family')]).toBe(hostFamily);
  });

  test.each(slabNames)('works over a %s slab', (name) => {
    const { slab } = makeSlab(name, 1024, 1);
    const arena = new Arena(slab, { alignment: 8, checked: true, ...(name === 'WebAssembly.Memory' ? { byteOffset: 0 } : {}) });
    const escaped = scratchspace(arena, (frame) => {
      const a = alloc(frame, 'float32', 4);
      a.data.fill(2);
      return { a, data: a.data };
    });
    staleError(() => escaped.a.data);
    if (name !== 'WebAssembly.Memory') expect(Number.isNaN(escaped.data[0])).toBe(true);
  });

  test('a WebAssembly memory grow does not resurrect or break checked arrays', () => {
    const memory = new WasmMemoryClass({ initial: 1, maximum: 2 });
    const arena = new Arena(memory, { checked: true, byteOffset: 0 });
    const live = arena.alloc('int32', [2]);
    const m = mark(arena);
    const dead = arena.alloc('int32', [2]);
    retract(arena, m);
    memory.grow(1);
    expect(live.data.length).toBe(2);
    staleError(() => dead.data);
  });
});
