/**
 * Marks: snapshots of an arena's offset that `retract` moves back to.
 *
 * @module
 */

import type { Kind } from '@pol/core';
import type { Arena } from './arena.js';
import type { ClockGeneration } from './clock.js';

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
    readonly arena: Arena<Kind>,
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
