/**
 * Marks: snapshots of an arena's offset that `retract` moves back to, and when a retract to one
 * must be refused.
 *
 * @module
 */

import type { Kind, Space } from '@pol/core';
import { type ClockGeneration, carryForward } from './clock.js';
import { type BadMark, badMark } from './refusals.js';
import type { ReleaseLog } from './release-log.js';

declare const markBrand: unique symbol;

/**
 * A snapshot of an arena's offset, returned by `mark` and consumed by `retract`. It carries the
 * arena's epoch, so a mark taken before a `reset` is refused instead of corrupting newer carves.
 *
 * @example
 * ```ts
 * import { Arena, type Mark, mark, retract } from '@pol/arena';
 * const arena = new Arena(new ArrayBuffer(1024));
 * const m: Mark = mark(arena);
 * arena.alloc('int32', [8]);
 * retract(arena, m);
 * console.log(m.offset, m.epoch); // 0 0
 * ```
 */
export interface Mark {
  readonly [markBrand]: true;
  /** The offset it snapshots. */
  readonly offset: number;
  /** The epoch it was taken in. */
  readonly epoch: number;
}

/** The one class of marks: what `arena.mark()` makes and `arena.retract(mark)` accepts. */
export class MarkImpl implements Mark {
  declare readonly [markBrand]: true;
  // Messages name values by their class ("got a Mark"): name it as users know it, with a
  // static getter for the reason given at ArenaImpl's.
  static get name(): string {
    return 'Mark';
  }
  constructor(
    // The arena it was taken on (as the space it is: the Arena interface names this module's Mark).
    readonly arena: Space<Kind>,
    readonly offset: number,
    readonly epoch: number,
    // The arena's clock reading this mark took, in the clock's numbering `generation`: it orders the
    // mark against carves and releases. The arena carries both forward when it has renumbered its
    // clock since (see clock.ts).
    public clock: number,
    public generation: ClockGeneration,
  ) {}

  toString(): string {
    return `Mark(offset ${this.offset}, epoch ${this.epoch})`;
  }
}

/**
 * Why retracting `arena` to `m` must be refused, or undefined when it may proceed, for an arena at
 * `offset` in `epoch`, whose clock numbering is `generation`, whose releases are `releases` and
 * whose innermost open frame opened at `frameClock` (0: none). A mark taken in an older numbering
 * is carried into `generation` on the way.
 */
export function markRefusal(
  m: unknown,
  arena: Space<Kind>,
  epoch: number,
  offset: number,
  generation: ClockGeneration,
  releases: ReleaseLog,
  frameClock: number,
): BadMark | undefined {
  if (!(m instanceof MarkImpl)) return 'not a mark';
  if (m.arena !== arena) return 'foreign';
  if (m.epoch !== epoch) return 'older epoch';
  if (m.offset > offset) return 'above offset';
  if (m.generation !== generation) {
    // The clock was renumbered since the mark: carry its reading into today's numbering.
    m.clock = carryForward(m.clock, m.generation, generation);
    m.generation = generation;
  }
  if (releases.wentBelow(m.offset, m.clock)) return 'released';
  if (m.clock < frameClock) return 'frame order';
  return undefined;
}

/**
 * The refusal of a retract, for `reason`, of the arena `summary` names (at `offset` in `epoch`,
 * with `top` its innermost open frame) to `m`.
 */
export function markRefused(reason: BadMark, summary: string, m: unknown, epoch: number, offset: number, top: string): Error {
  const mark = m instanceof MarkImpl ? m : undefined;
  return badMark(reason, summary, m, {
    markArena: String(mark?.arena),
    markEpoch: mark?.epoch ?? 0,
    epoch,
    offset,
    top,
  });
}
