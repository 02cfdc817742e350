import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { ReleaseLog } from './release-log.js';

describe('ReleaseLog', () => {
  test('a mark is stale once a later release went below it, not when one stopped at it', () => {
    const log = new ReleaseLog();
    log.record(100, 0, 5);
    expect(log.wentBelow(100, 0, 4)).toBe(false); // released to exactly 100
    expect(log.wentBelow(120, 0, 4)).toBe(true);
    expect(log.wentBelow(120, 0, 6)).toBe(false); // the mark came after the release
    log.clear();
    expect(log.wentBelow(120, 0, 4)).toBe(false);
  });

  test('orders clock readings era first: a small tick of a later era is later than a large tick of an earlier one', () => {
    const log = new ReleaseLog();
    log.record(100, 3, 1);
    expect(log.wentBelow(120, 2, 999_999)).toBe(true); // the release came after the mark
    expect(log.wentBelow(120, 3, 1)).toBe(false); // the same reading: not after
    expect(log.wentBelow(120, 4, 0)).toBe(false); // the mark came after the release
  });

  test('agrees with the list of every release, across eras (property)', () => {
    const step = fc.oneof(
      // A release a few ticks on, now and then in a new era (the tick starting again from 0).
      fc.record({ kind: fc.constant('release' as const), target: fc.nat(64), newEra: fc.boolean() }),
      fc.record({ kind: fc.constant('ask' as const), offset: fc.nat(64), era: fc.nat(6), tick: fc.nat(20) }),
      fc.constant({ kind: 'clear' as const }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 80 }), (steps) => {
        const log = new ReleaseLog();
        let all: { target: number; at: number }[] = [];
        let era = 0;
        let tick = 0;
        for (const s of steps) {
          if (s.kind === 'release') {
            if (s.newEra) {
              era++;
              tick = 0;
            } else tick++;
            log.record(s.target, era, tick);
            all.push({ target: s.target, at: era * 1000 + tick });
          } else if (s.kind === 'clear') {
            log.clear();
            all = [];
          } else {
            const at = s.era * 1000 + s.tick;
            const expected = all.some((r) => r.at > at && r.target < s.offset);
            expect(log.wentBelow(s.offset, s.era, s.tick)).toBe(expected);
          }
        }
      }),
      { numRuns: 2000 },
    );
  });
});
