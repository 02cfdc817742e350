import { describe, expect, test } from 'vitest';
import { Clock, earlier, setClockPeriod } from './clock.js';

describe('Clock', () => {
  test('ticks up to its period, then starts a new era; readings stay small integers', () => {
    const before = setClockPeriod(3);
    try {
      const clock = new Clock();
      const readings: [number, number][] = [];
      for (let i = 0; i < 7; i++) {
        clock.tick();
        readings.push([clock.era, clock.now]);
      }
      expect(readings).toEqual([
        [0, 1],
        [0, 2],
        [1, 0],
        [1, 1],
        [1, 2],
        [2, 0],
        [2, 1],
      ]);
    } finally {
      setClockPeriod(before);
    }
    expect(before).toBe(2 ** 30);
  });

  test('earlier compares era first, then tick', () => {
    expect(earlier(0, 5, 1, 0)).toBe(true);
    expect(earlier(1, 0, 0, 5)).toBe(false);
    expect(earlier(2, 3, 2, 4)).toBe(true);
    expect(earlier(2, 4, 2, 4)).toBe(false);
    expect(earlier(-1, 0, 0, 0)).toBe(true); // era −1: before every reading
  });
});
