import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { ClockGeneration, carryForward, clockLimit, renumber, setClockLimit } from './clock.js';

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
    g0.held = held;
    g0.next = g1;
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
            g.held = held;
            g.next = next;
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
