import { describe, expect, it } from 'vitest';
import { neighbours } from './neighbours.js';

describe('neighbours', () => {
  it('holds for touching ranges, and for a gap that ends at the next grid offset', () => {
    expect(neighbours(256, 256, 256)).toBe(true); // touching
    expect(neighbours(256, 260, 256)).toBe(false); // an array could start at 256, in the gap
    expect(neighbours(16, 256, 256)).toBe(true); // padding up to the next offset of the grid
    expect(neighbours(0, 0, 256)).toBe(true);
  });

  it('fails once a grid offset lies strictly inside the gap, where another array could start', () => {
    expect(neighbours(16, 512, 256)).toBe(false); // 256 is free for another array
    expect(neighbours(257, 768, 256)).toBe(false); // 512 lies between
    expect(neighbours(257, 512, 256)).toBe(true);
  });

  it('agrees with "no multiple of grid in [end, start)", where another array could start, on every small case', () => {
    for (const grid of [4, 16, 256]) {
      for (let end = 0; end <= 3 * grid; end++) {
        for (let start = end; start <= 4 * grid; start++) {
          let free = false;
          for (let o = 0; o < start; o += grid) if (o >= end) free = true;
          expect(neighbours(end, start, grid)).toBe(!free);
        }
      }
    }
  });
});
