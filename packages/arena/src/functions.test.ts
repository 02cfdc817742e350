import { alloc, type PolError, Similar, scratchspace } from '@pol/core';
import { describe, expect, test } from 'vitest';
import {
  Arena,
  type ArenaEvent,
  ForeignMarkError,
  isArena,
  MarkAboveOffsetError,
  mark,
  NotAnArenaError,
  observe,
  reset,
  retract,
  StaleMarkError,
  tryAlloc,
  watermark,
} from './index.js';
import { expectRefused, snapshot } from './test-support/slabs.js';

const fresh = (bytes = 4096, alignment = 16) => new Arena(new ArrayBuffer(bytes), { alignment });

describe('mark', () => {
  test('snapshots offset and epoch and changes nothing', () => {
    const arena = fresh();
    arena.alloc('float32', [5]);
    const before = snapshot(arena);
    const m = mark(arena);
    expect(m.offset).toBe(20);
    expect(m.epoch).toBe(0);
    expect(String(m)).toBe('Mark(offset 20, epoch 0)');
    expect(snapshot(arena)).toEqual(before);
    expect(arena.mark().offset).toBe(20);
  });

  test('refuses what is not an arena', () => {
    for (const x of [{}, null, undefined, new ArrayBuffer(8), Similar(new Float32Array(1))]) {
      expect(() => mark(x as never)).toThrow(NotAnArenaError);
    }
    try {
      mark(42 as never);
    } catch (e) {
      expect((e as PolError).code).toBe('POL_NOT_AN_ARENA');
      expect((e as Error).message).toContain('new Arena(');
    }
  });

  test('a closed frame no longer stands for its arena', () => {
    const arena = fresh();
    const m = mark(arena);
    const closed = scratchspace(arena, (frame) => frame);
    expectRefused(arena, 'POL_FRAME_CLOSED', () => mark(closed));
    expectRefused(arena, 'POL_FRAME_CLOSED', () => retract(closed, m));
    expect(watermark(closed)).toBe(0);
  });

  test('a frame stands for its arena', () => {
    const arena = fresh();
    scratchspace(arena, (frame) => {
      alloc(frame, 'uint8', 3);
      const m = mark(frame);
      expect(m.offset).toBe(3);
      alloc(frame, 'uint8', 3);
      retract(frame, m);
      expect(arena.offset).toBe(3);
      expect(watermark(frame)).toBe(19);
    });
  });
});

describe('retract', () => {
  test('moves the offset back; everything since the mark is garbage', () => {
    const arena = fresh();
    arena.alloc('uint8', [10]);
    const m = mark(arena);
    arena.alloc('float64', [10]);
    arena.alloc('float64', [10]);
    retract(arena, m);
    expect(arena.offset).toBe(10);
    expect(arena.watermark).toBe(176);
    expect(arena.alloc('float64', [1]).data.byteOffset).toBe(16);
  });

  test('retracting twice to the same mark with nothing in between is a no-op', () => {
    const arena = fresh();
    const m = mark(arena);
    arena.alloc('uint8', [10]);
    retract(arena, m);
    const before = snapshot(arena);
    retract(arena, m);
    arena.retract(m);
    expect(snapshot(arena)).toEqual(before);
  });

  test('nested marks retract innermost first, and an outer mark after an inner one', () => {
    const arena = fresh();
    const outer = mark(arena);
    arena.alloc('uint8', [1]);
    const inner = mark(arena);
    arena.alloc('uint8', [1]);
    retract(arena, inner);
    expect(arena.offset).toBe(1);
    retract(arena, outer);
    expect(arena.offset).toBe(0);
  });

  test('refuses a mark taken before a reset (stale), changing nothing', () => {
    const arena = fresh();
    const m = mark(arena);
    reset(arena);
    arena.alloc('uint8', [64]);
    const e = expectRefused(arena, 'POL_STALE_MARK', () => retract(arena, m));
    expect(e).toBeInstanceOf(StaleMarkError);
    expect(e.message).toContain('epoch 0');
    expect(e.message).toContain('epoch 1');
  });

  test('refuses a mark whose bytes a lower retract released and a later carve reused', () => {
    const arena = fresh();
    const low = mark(arena);
    arena.alloc('uint8', [16]);
    const high = mark(arena); // offset 16
    retract(arena, low);
    arena.alloc('uint8', [64]); // live again over [0, 64): retracting to 16 would cut it
    const e = expectRefused(arena, 'POL_STALE_MARK', () => retract(arena, high));
    expect(e.message).toContain('retract below the mark');
    // A mark exactly at a later retract's target stays good.
    retract(arena, low);
    const again = mark(arena);
    arena.alloc('uint8', [8]);
    retract(arena, low);
    retract(arena, again);
    expect(arena.offset).toBe(0);
  });

  test('refuses a mark of another arena', () => {
    const a = fresh();
    const b = fresh();
    const e = expectRefused(b, 'POL_FOREIGN_MARK', () => retract(b, mark(a)));
    expect(e).toBeInstanceOf(ForeignMarkError);
  });

  test('refuses a mark above the current offset', () => {
    const arena = fresh();
    const low = mark(arena);
    arena.alloc('uint8', [16]);
    const high = mark(arena);
    retract(arena, low);
    const e = expectRefused(arena, 'POL_MARK_ABOVE_OFFSET', () => retract(arena, high));
    expect(e).toBeInstanceOf(MarkAboveOffsetError);
  });

  test('refuses a forged mark', () => {
    const arena = fresh();
    expectRefused(arena, 'POL_INVALID_ARGUMENT', () => retract(arena, { offset: 0, epoch: 0 } as never));
    expectRefused(arena, 'POL_INVALID_ARGUMENT', () => retract(arena, undefined as never));
  });

  test('refuses what is not an arena', () => {
    const arena = fresh();
    expect(() => retract({} as never, mark(arena))).toThrow(NotAnArenaError);
  });
});

describe('reset', () => {
  test('goes to offset 0, advances the epoch, keeps the watermark, which accumulates over passes', () => {
    const arena = fresh();
    arena.alloc('uint8', [100]);
    reset(arena);
    expect(arena.describe()).toMatchObject({ offset: 0, epoch: 1, watermark: 100 });
    arena.alloc('uint8', [40]);
    reset(arena);
    expect(watermark(arena)).toBe(100);
    arena.alloc('uint8', [10]);
    arena.alloc('uint8', [150]);
    arena.reset();
    expect(arena.describe()).toMatchObject({ offset: 0, epoch: 3, watermark: 166 });
  });

  test('refuses a frame or anything else that is not the arena itself', () => {
    const arena = fresh();
    scratchspace(arena, (frame) => {
      expect(() => reset(frame as never)).toThrow(/reset needs the arena itself/);
    });
    expect(() => reset({} as never)).toThrow(NotAnArenaError);
  });
});

describe('watermark', () => {
  test('is the peak offset, frames included', () => {
    const arena = fresh(4096, 1);
    scratchspace(arena, (frame) => {
      alloc(frame, 'uint8', 1000);
    });
    alloc(arena, 'uint8', 10);
    expect(watermark(arena)).toBe(1000);
    expect(() => watermark([] as never)).toThrow(NotAnArenaError);
  });
});

describe('isArena', () => {
  test('is true for arenas only', () => {
    const arena = fresh();
    expect(isArena(arena)).toBe(true);
    scratchspace(arena, (frame) => expect(isArena(frame)).toBe(false));
    expect(isArena(undefined)).toBe(false);
    expect(isArena(new ArrayBuffer(1))).toBe(false);
  });
});

describe('tryAlloc (the function)', () => {
  test('takes an arena or a frame, dims as an array or rest', () => {
    const arena = fresh(64, 1);
    expect(tryAlloc(arena, 'uint8', [2, 3])?.dims).toEqual([2, 3]);
    scratchspace(arena, (frame) => {
      expect(tryAlloc(frame, 'uint8', 2, 2)?.data.byteOffset).toBe(6);
      expect(tryAlloc(frame, 'uint8', 100)).toBeUndefined();
    });
    expect(tryAlloc(arena, 'float64', [])?.data.length).toBe(1);
  });
});

describe('observe', () => {
  test('tells listeners of every retract, frame close and reset, then unsubscribes', () => {
    const arena = fresh();
    const events: ArenaEvent[] = [];
    const stop = observe(arena, (event) => events.push(event));
    arena.alloc('uint8', [10]);
    const m = mark(arena);
    arena.alloc('uint8', [10]);
    retract(arena, m);
    retract(arena, m); // a no-op retract is still reported
    scratchspace(arena, (frame) => {
      alloc(frame, 'uint8', 5);
    });
    reset(arena);
    stop();
    stop();
    reset(arena);
    expect(events).toEqual([
      { kind: 'retract', offset: 10, epoch: 0 },
      { kind: 'retract', offset: 10, epoch: 0 },
      { kind: 'retract', offset: 10, epoch: 0 },
      { kind: 'reset', offset: 0, epoch: 1 },
    ]);
    expect(Object.isFrozen(events[0])).toBe(true);
  });

  test('reports a rolled-back spec allocation only when it released bytes', () => {
    const arena = fresh(256);
    const events: ArenaEvent[] = [];
    observe(arena, (event) => events.push(event));
    expect(() => alloc(arena, 'uint8', 1000)).toThrow();
    expect(events).toEqual([]);
  });

  test('a throwing listener does not stop the others; the release has happened', () => {
    const arena = fresh();
    const heard: string[] = [];
    observe(arena, () => {
      heard.push('first');
      throw new Error('listener failed');
    });
    const stopSecond = arena.observe(() => heard.push('second'));
    observe(arena, () => {
      heard.push('third');
      stopSecond(); // unsubscribing during a notification is fine
    });
    arena.alloc('uint8', [10]);
    expect(() => reset(arena)).toThrow('listener failed');
    expect(heard).toEqual(['first', 'second', 'third']);
    expect(arena.describe()).toMatchObject({ offset: 0, epoch: 1 });
    heard.length = 0;
    expect(() => reset(arena)).toThrow('listener failed');
    expect(heard).toEqual(['first', 'third']);
  });

  test('a frame whose close is observed by a throwing listener is closed all the same', () => {
    const arena = fresh();
    observe(arena, () => {
      throw new Error('boom');
    });
    const frame = scratchspace(arena);
    expect(() => frame.close()).toThrow('boom');
    expect(frame.isOpen).toBe(false);
    expect(arena.describe().openFrames).toBe(0);
  });

  test('refuses a listener that is not a function, and what is not an arena', () => {
    const arena = fresh();
    expect(() => observe(arena, 'listener' as never)).toThrow(/needs a function/);
    expect(() => arena.observe(5 as never)).toThrow(/needs a function/);
    expect(() => observe({} as never, () => {})).toThrow(NotAnArenaError);
  });
});
