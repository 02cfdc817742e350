// Internal: an arena's logical clock. It orders marks, frame opens, savepoints, releases and
// carves (a carve reads the clock without ticking it). A reading is two small integers: the tick,
// which counts up to the period and then starts again from 0, and the era, which counts the times
// it did. Readings compare era first, then tick (`earlier`), so the order is exact however long a
// program runs.
//
// Why two numbers: one count passes 2^31 after about 2 billion ticks (a few ticks per verb call:
// minutes of a busy loop), and V8 holds a number past that as a heap number, 16 B each time it is
// passed to a call V8 did not inline. A steady loop would then allocate again. A tick below the
// period and an era below 2^30 stay small integers, which V8 never boxes.

let period = 2 ** 30;

/** Whether reading (eraA, tickA) is earlier than reading (eraB, tickB). */
export function earlier(eraA: number, tickA: number, eraB: number, tickB: number): boolean {
  return eraA < eraB || (eraA === eraB && tickA < tickB);
}

/** The clock of one arena: `tick()` advances it, and `era` and `now` read it. */
export class Clock {
  static get name(): string {
    return 'Clock';
  }

  // Invariant: 0 ≤ now < the period; (era, now) only ever increases.
  era = 0;
  now = 0;

  /** Advance the clock by one tick. */
  tick(): void {
    const next = this.now + 1;
    if (next < period) this.now = next;
    else {
      this.now = 0;
      this.era++;
    }
  }
}

/**
 * For tests: make every clock's period `ticks` (so that a test can cross many eras), returning the
 * period before. Never called by the package.
 */
export function setClockPeriod(ticks: number): number {
  const before = period;
  period = ticks;
  return before;
}
