import { scratchspace } from '@pol/core';
import { rollbackKey, savepointKey } from '@pol/core/backend';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { ClockGeneration, carryForward, clockLimit, renumber, retire, setClockLimit, skipRetired } from './clock.js';
import type { FrameOwner } from './frame.js';
import { Arena, mark, retract } from './index.js';
import type { MarkImpl } from './mark.js';

describe('the clock renumbering', () => {
  test('the limit is 2^30 unless a test sets another', () => {
    expect(clockLimit()).toBe(2 ** 30);
    const before = setClockLimit(5);
    expect(clockLimit()).toBe(5);
    setClockLimit(before);
    expect(clockLimit()).toBe(2 ** 30);
  });

  test('held readings become 2, 4, 6, … in order, and 0 stays 0; carried forward, a held reading takes its new value', () => {
    const held = [3, 17, 400, 2 ** 29];
    expect(held.map((r) => renumber(held, r))).toEqual([2, 4, 6, 8]);
    expect(renumber(held, 0)).toBe(0);
    const g0 = new ClockGeneration();
    const g1 = new ClockGeneration();
    retire(g0, held, g1);
    expect(held.map((r) => carryForward(r, g0, g1))).toEqual([2, 4, 6, 8]);
    expect([1, 4, 2 ** 29 + 5].map((r) => carryForward(r, g0, g1))).toEqual([1, 3, 9]);
    expect(carryForward(0, g0, g1)).toBe(0);
    expect(carryForward(17, g1, g1)).toBe(17); // already in today's numbering
  });

  test('a reading the arena did not hold keeps its order against every held one, through many generations (property)', () => {
    // Generations of held readings; a mark's reading in the first, never one of them. After each
    // renumbering the held readings are the renumbered ones plus new, larger ticks.
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 1, max: 10_000 }), { minLength: 1, maxLength: 12 }),
        fc.array(fc.uniqueArray(fc.integer({ min: 1, max: 50 }), { maxLength: 5 }), { minLength: 1, maxLength: 5 }),
        fc.integer({ min: 1, max: 10_001 }),
        (first, later, markSeed) => {
          const held0 = [...first].sort((a, b) => a - b);
          // A reading not held: between (or around) the held ones.
          let mark = markSeed;
          while (held0.includes(mark)) mark++;
          const g0 = new ClockGeneration();
          let g = g0;
          let held = held0;
          // Every held reading's fate, so the mark can be compared with each in every generation.
          let tracked = held0.map((r) => ({ r, before: mark < r }));
          for (const extra of later) {
            const next = new ClockGeneration();
            retire(g, held, next);
            // As the arena does: the first numbering goes straight to the newest.
            if (g !== g0) skipRetired(g0);
            const renumbered = held.map((r) => renumber(held, r));
            tracked = tracked.map((t) => ({ r: renumber(held, t.r), before: t.before }));
            const top = 2 * held.length + 2;
            const fresh = extra.map((e) => top + e);
            // A fresh tick comes after the mark.
            tracked.push(...fresh.map((r) => ({ r, before: true })));
            held = [...renumbered, ...fresh].sort((a, b) => a - b);
            g = next;
          }
          const carried = carryForward(mark, g0, g);
          expect(carried % 2).toBe(1);
          for (const t of tracked) expect(carried < t.r).toBe(t.before);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe("an arena's clock", () => {
  test('renumbers at its limit: readings stay small, and marks kept across thousands of renumberings keep their order and hold one retired numbering each', () => {
    const before = setClockLimit(64);
    try {
      const arena = new Arena(new ArrayBuffer(4096)) as FrameOwner<'host'>; // its savepoint protocol typed
      const kept = mark(arena) as unknown as MarkImpl;
      arena.alloc('float32', [4]);
      const inner = mark(arena) as unknown as MarkImpl;
      for (let i = 0; i < 10_000; i++) {
        scratchspace(arena, (frame) => frame.alloc('float32', [2]));
        const token = arena[savepointKey]();
        arena.alloc('float32', [1]);
        arena[rollbackKey](token);
      }
      const fresh = mark(arena) as unknown as MarkImpl;
      expect(fresh.clock).toBeLessThan(64);
      expect(kept.generation).not.toBe(fresh.generation);
      // Neither kept mark holds a chain: each retired numbering points straight at the newest.
      expect(kept.generation.next).toBe(fresh.generation);
      expect(inner.generation.next).toBe(fresh.generation);
      // Inside a frame opened after them, both are refused for frame order; outside, both are good.
      scratchspace(arena, () => {
        expect(() => retract(arena, inner)).toThrow(/frame/);
        expect(() => retract(arena, kept)).toThrow(/frame/);
      });
      retract(arena, inner);
      expect(arena.offset).toBe(16);
      retract(arena, kept);
      expect(arena.offset).toBe(0);
      // A release went below the inner mark: it is stale now.
      expect(() => retract(arena, inner)).toThrow(/stale|released/i);
    } finally {
      setClockLimit(before);
    }
  });
});
