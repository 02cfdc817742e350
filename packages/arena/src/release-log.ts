/**
 * The release log: which retracts lowered an arena's offset since its last reset, kept just long
 * enough to tell whether a mark has gone stale.
 *
 * @module
 */

import type { ClockReadings } from './clock.js';

/**
 * Releases (retracts, frame closes and rollbacks that lowered the offset) since the last reset, as
 * a monotonic stack: clocks and targets both strictly increase from the bottom to the top. A
 * release pops the entries whose target is not below its own, since those can no longer decide any
 * mark's fate. A mark is stale when a release after it (a larger clock) went below its offset: its
 * bytes were handed out again.
 */
export class ReleaseLog implements ClockReadings {
  // Invariant: #clocks[0..#count) and #targets[0..#count) both strictly increase.
  readonly #clocks: number[] = [];
  readonly #targets: number[] = [];
  #count = 0;

  /** Record a release to `target` at logical time `clock` (larger than any recorded so far). */
  record(target: number, clock: number): void {
    const targets = this.#targets;
    let n = this.#count;
    while (n > 0 && (targets[n - 1] ?? 0) >= target) n--;
    this.#clocks[n] = clock;
    targets[n] = target;
    this.#count = n + 1;
  }

  /** Whether a release after `clock` went below `offset`: a mark taken then at `offset` is stale. */
  wentBelow(offset: number, clock: number): boolean {
    const clocks = this.#clocks;
    const targets = this.#targets;
    let lowest = offset;
    for (let i = this.#count - 1; i >= 0; i--) {
      if ((clocks[i] ?? 0) <= clock) break;
      lowest = targets[i] ?? 0;
    }
    return lowest < offset;
  }

  /** Push the clock reading of every recorded release onto `into` (for the clock's renumbering). */
  readings(into: number[]): void {
    for (let i = 0; i < this.#count; i++) into.push(this.#clocks[i] ?? 0);
  }

  /** Take the clock's new numbering, which keeps the order (`to` maps each reading to its new value). */
  renumber(to: (reading: number) => number): void {
    const clocks = this.#clocks;
    for (let i = 0; i < this.#count; i++) clocks[i] = to(clocks[i] ?? 0);
  }

  /** Forget every release (a reset makes every older mark stale by its epoch anyway). */
  clear(): void {
    this.#count = 0;
  }
}
