// Internal: how an arena's logical clock stays a small integer however long a program runs.
//
// The clock orders marks, frame opens, savepoints, releases and (checked) carves; its readings are
// only ever compared with each other. One count would pass 2^31 after about 2 billion ticks (three
// or four per verb call: a minute of a busy verb loop), and V8 would then hold it as a heap
// number, 16 B each time it crossed a call that V8 did not inline: a steady loop would allocate
// again. So when the clock reaches its limit, the arena renumbers every reading it holds (open
// frames, savepoint records, the release log, checked lives) into small even numbers, in the same
// order, and goes on from just past them. The hot path is a compare against the limit, and the
// renumbering is a cold path taken once every 2^30 ticks.
//
// Marks are held by their users, out of the arena's reach, so a mark keeps the generation of the
// clock it read; each renumbering leaves in the old generation the table of what became of every
// reading, and a link to the next generation. A mark from an older generation is carried forward
// through those tables when it is next used (`carryForward`). A mark's reading is never one the
// arena held (every tick is a new reading), so it lands between two renumbered readings, on the
// odd number between their even ones, in the same order against every reading the arena holds. An
// old generation lives only as long as some mark still refers to it.

let limit = 2 ** 30;

/** The clock limit arenas made from now on get: 2^30, or what a test set (`setClockLimit`). */
export function clockLimit(): number {
  return limit;
}

/**
 * For tests: make arenas made from now on renumber their clock once it passes `ticks` (as low as
 * 1: then nearly every tick renumbers), returning the limit before. Never called by the package.
 */
export function setClockLimit(ticks: number): number {
  const before = limit;
  limit = ticks;
  return before;
}

/** One numbering of an arena's clock readings; once renumbered, the readings it held then. */
export class ClockGeneration {
  static get name(): string {
    return 'ClockGeneration';
  }

  // Set when the arena renumbers: the readings it held then, ascending and unique (never 0, which
  // stays "none"); the i-th became 2(i + 1) in the next generation, so odd numbers lie between.
  held: readonly number[] = [];
  next: ClockGeneration | undefined = undefined;
}

/** How many of `held` (ascending) are below `reading`. */
function below(held: readonly number[], reading: number): number {
  let lo = 0;
  let hi = held.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((held[mid] as number) < reading) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The new value of `reading`, one of `held` or 0 ("none"), when the arena renumbers them. */
export function renumber(held: readonly number[], reading: number): number {
  return reading === 0 ? 0 : 2 * (below(held, reading) + 1);
}

/**
 * `reading`, taken in generation `from`, in generation `to`'s numbering, generation after
 * generation: a reading the arena held becomes its new even value; any other (a mark's, held by
 * its user) lands on the odd number just after the last held reading that was earlier (1 when
 * there was none). Either way it keeps its order against every reading the arena holds.
 */
export function carryForward(reading: number, from: ClockGeneration, to: ClockGeneration): number {
  let r = reading;
  for (let g: ClockGeneration | undefined = from; g !== undefined && g !== to; g = g.next) {
    if (r === 0) return 0;
    const n = below(g.held, r);
    r = g.held[n] === r ? 2 * (n + 1) : 2 * n + 1;
  }
  return r;
}
