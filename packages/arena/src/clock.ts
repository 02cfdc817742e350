// Internal: how an arena's logical clock stays a small integer however long a program runs.
//
// The clock orders marks, frame opens, savepoints, releases and (checked) carves; its readings are
// only ever compared with each other. One count would pass 2^31 after about 2 billion ticks (three
// or four per verb call: a minute of a busy verb loop), and V8 would then hold it as a heap
// number, 16 B each time it crossed a call that V8 did not inline: a steady loop would allocate
// again. So when the clock reaches its limit (2^30, below 2^31 − 1 so that it is a small integer
// on builds with 31-bit ones too), the arena renumbers every reading it holds (frames, savepoint
// records, the release log, checked lives) into 2, 4, 6, …, in the same order, and goes on from just
// past them. The hot path is a compare against the limit; the renumbering is a cold path taken once
// every 2^30 ticks.
//
// Marks are held by their users, out of the arena's reach, so a mark keeps the numbering (the
// generation) it read the clock in, and is carried forward when it is next used (`carryForward`).
// A renumbering leaves in the generation it retires what became of each of its readings: a held
// one became its even number, and any other (a mark's, which no holder shares unless a checked
// carve read the clock right after the mark) lands on the odd number between, keeping its order
// against every reading. The arena keeps every retired generation that some mark still refers to
// (weakly) up to date with the newest numbering, so a mark kept for ever holds one generation, not
// the chain of every renumbering since.

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

/** One numbering of an arena's clock readings; once retired, where each of its readings went. */
export class ClockGeneration {
  static get name(): string {
    return 'ClockGeneration';
  }

  // Set when the arena retires this numbering: the readings it held then, ascending and unique
  // (never 0, which stays "none"); and, for a reading after n held ones, `slots[2n]` (or
  // `slots[2n + 1]` when it is the n-th held one) is its value in the numbering `next`, which the
  // arena keeps the newest while a mark refers to this one.
  held: readonly number[] = [];
  slots: number[] = [];
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

/** Retire `generation`, which held `held` (ascending, unique, no 0), for `next`: readings go to 2, 4, 6, … and odd numbers between. */
export function retire(generation: ClockGeneration, held: readonly number[], next: ClockGeneration): void {
  generation.held = held;
  generation.slots = Array.from({ length: 2 * held.length + 1 }, (_, k) => k + 1);
  generation.next = next;
}

/** Bring retired `generation`, whose `next` was just retired too, up to date with that one's `next`. */
export function skipRetired(generation: ClockGeneration): void {
  const was = generation.next;
  if (was === undefined || was.next === undefined) return;
  const slots = generation.slots;
  for (let k = 0; k < slots.length; k++) slots[k] = step(was, slots[k] as number);
  generation.next = was.next;
}

// A reading of retired generation `g`, in `g.next`'s numbering.
function step(g: ClockGeneration, reading: number): number {
  if (reading === 0) return 0;
  const n = below(g.held, reading);
  return g.slots[g.held[n] === reading ? 2 * n + 1 : 2 * n] as number;
}

/** `reading`, taken in generation `from`, in generation `to`'s numbering (see the top of this file). */
export function carryForward(reading: number, from: ClockGeneration, to: ClockGeneration): number {
  let r = reading;
  for (let g: ClockGeneration | undefined = from; g !== undefined && g !== to; g = g.next) r = step(g, r);
  return r;
}

/**
 * What holds clock readings an arena must renumber: its open frames, its savepoint records, its
 * release log and, in checked mode, its lives.
 */
export interface ClockReadings {
  /** Push every reading held onto `into`. */
  readings(into: number[]): void;
  /** Take the new numbering, which keeps the order (`to` maps each reading held to its new value). */
  renumber(to: (reading: number) => number): void;
}

/** What a renumbering leaves: the numbering in use from now on, and the clock's reading in it. */
export interface Renumbered {
  readonly generation: ClockGeneration;
  readonly clock: number;
}

/**
 * A retired numbering, held weakly: a `WeakRef<ClockGeneration>`, declared by what is read of it,
 * so that the declarations need no ES2021 lib (a program on `target: es2020` type-checks them).
 */
export interface Retired {
  deref(): ClockGeneration | undefined;
}

/**
 * Renumber every reading `holders` hold into 2, 4, 6, … in the same order, and retire `generation`
 * for a new numbering, leaving in it what became of each reading (for marks). Every numbering in
 * `retired` a mark still refers to goes straight to the new one, so that a kept mark holds its own
 * numbering and no chain (the others are collected with their marks), and `generation` joins them.
 * Returns the new numbering, and the first reading past every renumbered one.
 */
export function renumberClock(
  generation: ClockGeneration,
  retired: Retired[],
  holders: readonly (ClockReadings | undefined)[],
): Renumbered {
  const readings: number[] = [];
  for (const holder of holders) holder?.readings(readings);
  const held = [...new Set(readings)].filter((r) => r !== 0).sort((a, b) => a - b);
  const to = (reading: number): number => renumber(held, reading);
  for (const holder of holders) holder?.renumber(to);
  const next = new ClockGeneration();
  retire(generation, held, next);
  let kept = 0;
  for (const ref of retired) {
    const g = ref.deref();
    if (g === undefined) continue;
    skipRetired(g);
    retired[kept++] = ref;
  }
  retired.length = kept;
  retired.push(new WeakRef(generation));
  return { generation: next, clock: 2 * held.length + 2 };
}
