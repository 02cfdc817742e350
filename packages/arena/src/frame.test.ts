import { alloc, ambientspace, FrameClosedError, isFrame, isSpace, Similar, scratchspace, Undef, withspace } from '@pol/core';
import { openFrameKey, spaceKey } from '@pol/core/backend';
import { describe, expect, test } from 'vitest';
import type { FrameOwner } from './frame.js';
import { Arena, type ArenaFrame, ContendedError, FrameOrderError, mark, reset, retract } from './index.js';
import { expectRefused, snapshot } from './test-support/slabs.js';

const fresh = () => new Arena(new ArrayBuffer(1 << 16), { alignment: 16 });
const tick = () => new Promise<void>((resolve) => setTimeout(resolve, 1));

describe('scratchspace on an arena', () => {
  test('marks on open, retracts on close, returns what f returns', () => {
    const arena = fresh();
    alloc(arena, 'uint8', 5);
    const result = scratchspace(arena, (frame) => {
      expect(isFrame(frame)).toBe(true);
      expect(isSpace(frame)).toBe(true);
      expect(frame[spaceKey]).toBe('host');
      expect(frame.isOpen).toBe(true);
      expect(frame.parent).toBe(arena);
      expect((frame as ArenaFrame<'host'>).arena).toBe(arena);
      expect((frame as ArenaFrame<'host'>).start).toBe(5);
      expect(String(frame)).toMatch(/^Frame\(start 5, open, on Arena\(host/);
      const tmp = alloc(frame, 'float32', 8);
      expect(tmp.data.byteOffset).toBe(16);
      expect(arena.offset).toBe(48);
      return 'done';
    });
    expect(result).toBe('done');
    expect(arena.describe()).toMatchObject({ offset: 5, watermark: 48, openFrames: 0 });
  });

  test('retracts when f throws, and the error propagates', () => {
    const arena = fresh();
    let seen: ArenaFrame | undefined;
    expect(() =>
      scratchspace(arena, (frame) => {
        seen = frame as ArenaFrame;
        alloc(frame, 'float64', 100);
        throw new Error('kernel failed');
      }),
    ).toThrow('kernel failed');
    expect(arena.describe()).toMatchObject({ offset: 0, openFrames: 0, watermark: 800 });
    expect(seen?.isOpen).toBe(false);
  });

  test('nests; the ambient space is the innermost open frame', () => {
    const arena = fresh();
    scratchspace(arena, (outer) => {
      expect(ambientspace()).toBe(outer);
      alloc('uint8', 3); // ambient: the outer frame
      scratchspace((inner) => {
        expect(inner.parent).toBe(outer);
        expect(ambientspace()).toBe(inner);
        alloc('uint8', 3);
        expect(arena.describe().frameMarks).toEqual([0, 3]);
        // scratchspace(arena, ...) from inside the innermost block nests too.
        scratchspace(arena, (third) => {
          expect(third.parent).toBe(arena);
          expect(arena.describe().openFrames).toBe(3);
        });
      });
      expect(arena.offset).toBe(3);
    });
    expect(arena.offset).toBe(0);
  });

  test('using frame = scratchspace(arena) closes at the end of the block', () => {
    const arena = fresh();
    {
      using frame = scratchspace(arena);
      alloc(frame, 'float32', 4);
      {
        using inner = scratchspace(frame);
        alloc(inner, 'float32', 4);
        expect(arena.describe().openFrames).toBe(2);
      }
      expect(arena.offset).toBe(16);
    }
    expect(arena.describe()).toMatchObject({ offset: 0, openFrames: 0 });
  });

  test('a spec through a frame is all or nothing', () => {
    const arena = fresh();
    scratchspace(arena, (frame) => {
      alloc(frame, 'uint8', 1);
      const before = snapshot(arena);
      expect(() => alloc(frame, { a: Undef('float32', 4), b: Undef('float32', 1 << 20) })).toThrow(/is full/);
      expect({ ...snapshot(arena), arraysCreated: 0 }).toEqual({ ...before, arraysCreated: 0 });
      const { a } = alloc(frame, { a: Undef('float32', 4) });
      expect(a.data.byteOffset).toBe(16);
    });
  });

  test('frame.tryAlloc answers undefined when full', () => {
    const arena = new Arena(new ArrayBuffer(64));
    scratchspace(arena, (frame) => {
      const f = frame as ArenaFrame<'host'>;
      expect(f.tryAlloc('uint8', [64])?.data.length).toBe(64);
      expect(f.tryAlloc('uint8', [1])).toBeUndefined();
    });
  });
});

describe('frame order', () => {
  test('allocating from the bare arena while a frame is open is refused', () => {
    const arena = fresh();
    scratchspace(arena, (frame) => {
      alloc(frame, 'uint8', 1);
      const e = expectRefused(arena, 'POL_FRAME_ORDER', () => alloc(arena, 'float32', 4));
      expect(e).toBeInstanceOf(FrameOrderError);
      expect(e.message).toContain('innermost open frame');
      expectRefused(arena, 'POL_FRAME_ORDER', () => arena.tryAlloc('float32', [4]));
    });
  });

  test('allocating from an outer frame while an inner one is open is refused', () => {
    const arena = fresh();
    scratchspace(arena, (outer) => {
      scratchspace(outer, (inner) => {
        alloc(inner, 'uint8', 2);
        expectRefused(arena, 'POL_FRAME_ORDER', () => alloc(outer, 'float32', 4));
        expectRefused(arena, 'POL_FRAME_ORDER', () => (outer as ArenaFrame).tryAlloc('float32', [4]));
      });
      expect(alloc(outer, 'float32', 4).data.byteOffset).toBe(0);
    });
  });

  test('a closed frame refuses to allocate or nest', () => {
    const arena = fresh();
    const escaped = scratchspace(arena, (frame) => frame);
    expect(escaped.isOpen).toBe(false);
    const e = expectRefused(arena, 'POL_FRAME_CLOSED', () => alloc(escaped, 'float32', 1));
    expect(e).toBeInstanceOf(FrameClosedError);
    expectRefused(arena, 'POL_FRAME_CLOSED', () => (escaped as ArenaFrame).tryAlloc('float32', [1]));
    expectRefused(arena, 'POL_FRAME_CLOSED', () => scratchspace(escaped, () => {}));
    expectRefused(arena, 'POL_FRAME_CLOSED', () => escaped[openFrameKey]?.());
    escaped.close(); // closing again does nothing
    escaped[Symbol.dispose]();
  });

  test('closing an outer frame while an inner one is open is refused; innermost first works', () => {
    const arena = fresh();
    const outer = scratchspace(arena);
    alloc(outer, 'uint8', 4);
    const inner = scratchspace(outer);
    alloc(inner, 'uint8', 4);
    const e = expectRefused(arena, 'POL_FRAME_ORDER', () => outer.close());
    expect(e.message).toContain('innermost first');
    expect(outer.isOpen).toBe(true);
    expect(inner.isOpen).toBe(true);
    inner.close();
    expect(arena.offset).toBe(4);
    outer.close();
    expect(arena.describe()).toMatchObject({ offset: 0, openFrames: 0 });
  });

  test('reset while a frame is open is refused', () => {
    const arena = fresh();
    scratchspace(arena, (frame) => {
      alloc(frame, 'uint8', 4);
      expectRefused(arena, 'POL_FRAME_ORDER', () => reset(arena));
    });
  });

  test('retract to a mark taken before an open frame is refused; one taken inside works', () => {
    const arena = fresh();
    alloc(arena, 'uint8', 4);
    const before = mark(arena);
    scratchspace(arena, (frame) => {
      alloc(frame, 'uint8', 4);
      const e = expectRefused(arena, 'POL_FRAME_ORDER', () => retract(arena, before));
      expect(e.message).toContain('Close the frame first');
      const inside = mark(frame);
      alloc(frame, 'uint8', 4);
      retract(frame, inside);
      expect(arena.offset).toBe(20);
    });
    retract(arena, before);
  });

  test('opening a frame on a frame that is not the innermost is refused as contended', () => {
    const arena = fresh();
    const outer = scratchspace(arena);
    const inner = scratchspace(outer);
    const e = expectRefused(arena, 'POL_CONTENDED', () => scratchspace(outer));
    expect(e).toBeInstanceOf(ContendedError);
    inner.close();
    outer.close();
  });

  test('opening a frame on the bare arena from outside the innermost block is refused as contended', () => {
    const arena = fresh();
    const holder = scratchspace(arena);
    const e = expectRefused(arena, 'POL_CONTENDED', () => scratchspace(arena));
    expect(e.message).toContain('Give each concurrent task its own arena');
    expectRefused(arena, 'POL_CONTENDED', () => withspace(arena, () => scratchspace(arena, () => {})));
    // Inside the holder's block (the ambient space is the holder), the same call nests.
    withspace(holder, () => scratchspace(arena, () => {}));
    holder.close();
  });

  test('a frame on another space does not count as an arena frame', () => {
    const gc = scratchspace(Similar(new Float32Array(1)));
    expect(() => mark(gc as never)).toThrow(/needs an Arena/);
    gc.close();
  });
});

describe('async frames', () => {
  test('an async f keeps its frame open across await and retracts once the promise settles', async () => {
    const arena = fresh();
    const pending = scratchspace(arena, async (frame) => {
      const a = alloc(frame, 'float32', 4);
      a.data.fill(2);
      await tick();
      expect(ambientspace()).toBe(frame);
      expect(arena.describe().openFrames).toBe(1);
      return a.data[0];
    });
    expect(arena.describe().openFrames).toBe(1);
    expect(await pending).toBe(2);
    expect(arena.describe()).toMatchObject({ offset: 0, openFrames: 0 });
  });

  test('two async tasks on one arena: the second is refused as a rejected promise, so Promise.all runs the first to the end', async () => {
    const arena = fresh();
    const order: string[] = [];
    const task = (name: string) =>
      scratchspace(arena, async (frame) => {
        const a = alloc(frame, 'float32', 4);
        order.push(`${name} started`);
        await tick();
        a.data.fill(3);
        order.push(`${name} done`);
        return a.data[0];
      });
    const first = task('a');
    const second = task('b'); // contended: a promise, not a throw
    expect(second).toBeInstanceOf(Promise);
    const [a, b] = await Promise.allSettled([first, second]);
    expect(a).toEqual({ status: 'fulfilled', value: 3 });
    expect(b?.status).toBe('rejected');
    expect((b as PromiseRejectedResult).reason).toBeInstanceOf(ContendedError);
    expect(order).toEqual(['a started', 'a done']);
    expect(arena.describe()).toMatchObject({ offset: 0, openFrames: 0 });
    // A synchronous callback refused the same way still throws.
    const held = task('c');
    expect(() => scratchspace(arena, () => 1)).toThrow(ContendedError);
    await held;
  });

  test('a rejection retracts, and the rejection propagates', async () => {
    const arena = fresh();
    await expect(
      scratchspace(arena, async (frame) => {
        alloc(frame, 'float32', 16);
        await tick();
        throw new Error('async kernel failed');
      }),
    ).rejects.toThrow('async kernel failed');
    expect(arena.describe()).toMatchObject({ offset: 0, openFrames: 0, watermark: 64 });
  });

  test('nested frames across await in one task work through the ambient space', async () => {
    const arena = fresh();
    await scratchspace(arena, async (outer) => {
      alloc(outer, 'uint8', 4);
      await tick();
      await scratchspace(async (inner) => {
        expect(inner.parent).toBe(outer);
        alloc(inner, 'uint8', 4);
        await tick();
        await scratchspace(arena, async () => {
          await tick();
          expect(arena.describe().openFrames).toBe(3);
        });
      });
      expect(arena.offset).toBe(4);
    });
    expect(arena.offset).toBe(0);
  });

  test("two tasks interleaving on one arena: the second is refused as contended, the holder's arrays stay intact", async () => {
    const arena = fresh();
    let holderReady: () => void = () => {};
    const ready = new Promise<void>((resolve) => {
      holderReady = resolve;
    });
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const holder = scratchspace(arena, async (frame) => {
      const a = alloc(frame, 'float32', 64);
      a.data.fill(7);
      holderReady();
      await gate;
      // Still the holder's: nothing carved over it, and the frame still allocates.
      const b = alloc(frame, 'float32', 4);
      return { sum: a.data.reduce((x, y) => x + y, 0), second: b.data.byteOffset };
    });
    await ready;
    const before = snapshot(arena);
    const contender = (async () => {
      await tick();
      return scratchspace(arena, async (frame) => alloc(frame, 'float32', 64));
    })();
    await expect(contender).rejects.toThrow(ContendedError);
    expect(snapshot(arena)).toEqual(before);
    // Allocating from the bare arena from the other task is refused as well.
    await expect((async () => alloc(arena, 'float32', 1))()).rejects.toThrow(FrameOrderError);
    release();
    expect(await holder).toEqual({ sum: 64 * 7, second: 256 });
    expect(arena.describe()).toMatchObject({ offset: 0, openFrames: 0 });
    // Once the holder is done, the arena serves the next task.
    expect(await scratchspace(arena, async (frame) => alloc(frame, 'float32', 1).data.length)).toBe(1);
  });

  test('tasks on separate arenas run concurrently', async () => {
    const task = (arena: Arena<'host'>, value: number) =>
      scratchspace(arena, async (frame) => {
        const a = alloc(frame, 'float64', 8);
        a.data.fill(value);
        await tick();
        return a.data[7];
      });
    expect(await Promise.all([task(fresh(), 1), task(fresh(), 2), task(fresh(), 3)])).toEqual([1, 2, 3]);
  });
});

describe('frame objects are reused (unchecked mode)', () => {
  test('opening and closing reuses one frame object per depth', () => {
    const arena = fresh();
    const seen: ArenaFrame<'host'>[][] = [];
    for (let pass = 0; pass < 3; pass++) {
      scratchspace(arena, (outer) => {
        scratchspace(outer, (inner) => {
          seen.push([outer as ArenaFrame<'host'>, inner as ArenaFrame<'host'>]);
        });
      });
    }
    const [first, ...rest] = seen as [ArenaFrame<'host'>[], ...ArenaFrame<'host'>[][]];
    expect(first[0]).not.toBe(first[1]);
    for (const frames of rest) {
      expect(frames[0]).toBe(first[0]);
      expect(frames[1]).toBe(first[1]);
    }
  });

  test('a kept frame refuses every use while it is closed, changing nothing', () => {
    const arena = fresh();
    const kept = scratchspace(arena, (frame) => frame as ArenaFrame<'host'>);
    alloc(arena, 'uint8', 3);
    expect(kept.isOpen).toBe(false);
    expect(String(kept)).toMatch(/^Frame\(start 0, closed/);
    for (const use of [
      () => kept.alloc('float32', [2]),
      () => kept.tryAlloc('float32', [2]),
      () => alloc(kept, 'float32', 2),
      () => alloc(kept, { a: Undef('float32', 2) }),
      () => (kept as unknown as { [openFrameKey](): unknown })[openFrameKey](),
      () => scratchspace(kept, () => 1),
      () => mark(kept),
    ]) {
      expectRefused(arena, 'POL_FRAME_CLOSED', use);
    }
    kept.close(); // closing a closed frame does nothing
    expect(arena.describe()).toMatchObject({ offset: 3, openFrames: 0 });
  });

  test('a kept frame is the next frame opened at its depth: it serves as that frame while it is open', () => {
    const arena = fresh();
    const kept = scratchspace(arena, (frame) => frame as ArenaFrame<'host'>);
    alloc(arena, 'uint8', 8);
    scratchspace(arena, (frame) => {
      // The aliasing the README describes: the kept handle and the new frame are one object.
      expect(frame).toBe(kept);
      expect(kept.isOpen).toBe(true);
      expect(kept.start).toBe(8);
      expect(kept.alloc('uint8', [4]).data.byteOffset).toBe(16);
    });
    expect(kept.isOpen).toBe(false);
    expect(arena.describe()).toMatchObject({ offset: 8, openFrames: 0 });
  });

  test('a frame at another depth never reuses a kept one', () => {
    const arena = fresh();
    const kept = scratchspace(arena, (frame) => frame as ArenaFrame<'host'>);
    scratchspace(arena, (outer) => {
      scratchspace(outer, (inner) => {
        expect(inner).not.toBe(kept);
        expect(kept.isOpen).toBe(true); // it is `outer`
        expect(outer).toBe(kept);
      });
    });
  });

  test('checked mode makes a fresh frame every time: a kept frame stays closed for good', () => {
    const arena = new Arena(new ArrayBuffer(1024), { checked: true });
    const kept = scratchspace(arena, (frame) => frame as ArenaFrame<'host'>);
    const frames = new Set<unknown>([kept]);
    for (let i = 0; i < 5; i++) {
      scratchspace(arena, (frame) => {
        frames.add(frame);
        expect(kept.isOpen).toBe(false);
        expect(() => kept.alloc('uint8', [1])).toThrow(FrameClosedError);
      });
    }
    expect(frames.size).toBe(6);
  });

  test('a frame open and close, with a carve in it, allocates no frame objects once steady', () => {
    const arena = fresh() as FrameOwner<'host'>; // its frame protocol typed, as its frames call it
    const open = () => {
      const frame = arena[openFrameKey]();
      frame.alloc('float32', [4]);
      frame.close();
      return frame;
    };
    const first = open();
    for (let i = 0; i < 10; i++) expect(open()).toBe(first);
    expect(arena.describe().arraysCreated).toBe(1);
  });
});
