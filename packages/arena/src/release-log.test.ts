import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { ReleaseLog } from './release-log.js';

describe('ReleaseLog', () => {
  test('a mark is stale once a later release went below it, not when one stopped at it', () => {
    const log = new ReleaseLog();
    log.record(100, 5);
    expect(log.wentBelow(100, 4)).toBe(false); // released to exactly 100
    expect(log.wentBelow(120, 4)).toBe(true);
    expect(log.wentBelow(120, 6)).toBe(false); // the mark came after the release
    log.clear();
    expect(log.wentBelow(120, 4)).toBe(false);
  });

  test('agrees with the list of every release', () => {
    const step = fc.oneof(
      fc.record({ kind: fc.constant('release' as const), target: fc.nat(64) }),
      fc.record({ kind: fc.constant('ask' as const), offset: fc.nat(64), clock: fc.nat(80) }),
      fc.constant({ kind: 'clear' as const }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 80 }), (steps) => {
        const log = new ReleaseLog();
        let all: { target: number; clock: number }[] = [];
        let clock = 0;
        for (const s of steps) {
          if (s.kind === 'release') {
            clock++;
            log.record(s.target, clock);
            all.push({ target: s.target, clock });
          } else if (s.kind === 'clear') {
            log.clear();
            all = [];
          } else {
            const expected = all.some((r) => r.clock > s.clock && r.target < s.offset);
            expect(log.wentBelow(s.offset, s.clock)).toBe(expected);
          }
        }
      }),
      { numRuns: 2000 },
    );
  });
});
