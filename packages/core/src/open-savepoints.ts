import type { PolArray } from './array.js';
import { InvalidArgumentError } from './errors.js';

/** A savepoint's token: its identity is the token, its list what was allocated under it. */
class SavepointRecord {
  readonly arrays: PolArray[] = [];

  toString(): string {
    return 'Savepoint';
  }
}

/**
 * The open savepoints of a space that tracks what it allocates (so that a rollback can release
 * arrays the garbage collector cannot free): a list per savepoint, in the order they were taken.
 *
 * - `take` opens a list; `note` appends an allocation to the innermost (most recently taken, still
 *   open) one, and does nothing when none is open, so an unguarded allocation keeps nothing;
 * - `commit` closes a list and appends its arrays to the nearest earlier open list, whose rollback
 *   then covers them; with none open, the arrays are forgotten (they are the caller's);
 * - `rollback` closes a list and hands back its arrays, to release.
 *
 * Savepoints may end out of order (two async calls on one space interleave across `await`):
 * ending one leaves the others open, and the ones taken after it now nest in the one before it.
 * A token that is not open here (ended already, or another space's) is refused, changing nothing:
 * a token never releases arrays that its owner's commit handed to the caller.
 */
export class OpenSavepoints {
  readonly #open: SavepointRecord[] = [];

  /** Open a savepoint and return its token. */
  take(): unknown {
    const record = new SavepointRecord();
    this.#open.push(record);
    return record;
  }

  /** Track `array` under the innermost open savepoint, if any. */
  note(array: PolArray): void {
    const open = this.#open;
    if (open.length !== 0) (open[open.length - 1] as SavepointRecord).arrays.push(array);
  }

  /** End `token` as succeeded; `space` names the owner in a refusal. */
  commit(token: unknown, space: object): void {
    const open = this.#open;
    const at = this.#indexOf(token, 'commit', space);
    const ended = open[at] as SavepointRecord;
    open.splice(at, 1);
    if (at > 0) {
      const enclosing = (open[at - 1] as SavepointRecord).arrays;
      for (const array of ended.arrays) enclosing.push(array);
    }
  }

  /** End `token` as failed and return the arrays allocated under it (and its committed inner savepoints). */
  rollback(token: unknown, space: object): readonly PolArray[] {
    const open = this.#open;
    const at = this.#indexOf(token, 'roll back', space);
    const ended = open[at] as SavepointRecord;
    open.splice(at, 1);
    return ended.arrays;
  }

  #indexOf(token: unknown, what: string, space: object): number {
    const at = this.#open.lastIndexOf(token as SavepointRecord);
    if (at < 0) {
      throw new InvalidArgumentError(
        `Cannot ${what} this savepoint: it is not open on ${String(space)} (it was committed or rolled back already, or another space took it), so nothing was changed. ` +
          'End each savepoint exactly once, with commit or rollback, on the space that took it.',
      );
    }
    return at;
  }
}
