import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { colour, count, oddCycle } from './colouring.js';

/** A graph of `n` vertices from random pairs. */
const graphs = fc.integer({ min: 0, max: 11 }).chain((n) =>
  fc
    .array(fc.tuple(fc.integer({ min: 0, max: Math.max(0, n - 1) }), fc.integer({ min: 0, max: Math.max(0, n - 1) })), {
      maxLength: 30,
    })
    .map((pairs) => {
      const adjacent: number[][] = Array.from({ length: n }, () => []);
      for (const [a, b] of pairs) {
        if (a === b || n === 0 || adjacent[a]?.includes(b)) continue;
        adjacent[a]?.push(b);
        adjacent[b]?.push(a);
      }
      return { n, adjacent };
    }),
);

/** The fewest colours, by trying every colouring (small graphs only). */
function chromatic(n: number, adjacent: readonly (readonly number[])[]): number {
  for (let k = n === 0 ? 0 : 1; ; k++) {
    const colours = new Array<number>(n).fill(-1);
    const place = (v: number): boolean => {
      if (v === n) return true;
      for (let c = 0; c < k; c++) {
        if ((adjacent[v] ?? []).some((u) => colours[u] === c)) continue;
        colours[v] = c;
        if (place(v + 1)) return true;
      }
      colours[v] = -1;
      return false;
    };
    if (place(0)) return k;
  }
}

describe('colour', () => {
  test('a triangle needs three, a square two, no edge one, nothing none', () => {
    expect(
      count(
        colour(3, [
          [1, 2],
          [0, 2],
          [0, 1],
        ]),
      ),
    ).toBe(3);
    expect(
      count(
        colour(4, [
          [1, 3],
          [0, 2],
          [1, 3],
          [0, 2],
        ]),
      ),
    ).toBe(2);
    expect(colour(3, [[], [], []])).toEqual([0, 0, 0]);
    expect(colour(0, [])).toEqual([]);
  });

  test('property: neighbours never share a colour, and as few colours as can be are used', () => {
    fc.assert(
      fc.property(graphs, ({ n, adjacent }) => {
        const colours = colour(n, adjacent);
        expect(colours).toHaveLength(n);
        adjacent.forEach((list, v) => {
          for (const u of list) expect(colours[u]).not.toBe(colours[v]);
        });
        expect(count(colours)).toBe(chromatic(n, adjacent));
        // numbered in order of first use
        const firsts = [...new Set(colours)];
        expect(firsts).toEqual(firsts.map((_, i) => i));
      }),
      { numRuns: 300 },
    );
  });
});

describe('oddCycle', () => {
  test('property: an odd cycle of the graph exactly when two colours do not do', () => {
    fc.assert(
      fc.property(graphs, ({ n, adjacent }) => {
        const cycle = oddCycle(n, adjacent);
        expect(cycle === undefined).toBe(chromatic(n, adjacent) <= 2);
        if (cycle === undefined) return;
        expect(cycle.length % 2).toBe(1);
        expect(new Set(cycle).size).toBe(cycle.length);
        cycle.forEach((v, i) => {
          expect(adjacent[v]).toContain(cycle[(i + 1) % cycle.length]);
        });
      }),
      { numRuns: 300 },
    );
  });
});
