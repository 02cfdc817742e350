/**
 * The release log: which retracts lowered an arena's offset since its last reset, kept just long
 * enough to tell whether a mark has gone stale.
 *
 * @module
 */

import { earlier } from './clock.js';

/**
 * Releases (retracts, frame closes and rollbacks that lowered the offset) since the last reset, as
 * a monotonic stack: clock readings and targets both strictly increase from the bottom to the top. A
 * release pops the entries whose target is not below its own, since those can no longer decide any
 * mark's fate. A mark is stale when a release after it (a later clock reading) went below its offset: its
 * bytes were handed out again.
 */
export class ReleaseLog {
  // Invariant: the clock readings (#eras[i], #ticks[i]) and #targets[i] both strictly increase
  // over [0, #count).
  readonly #eras: number[] = [];
  readonly #ticks: number[] = [];
  readonly #targets: number[] = [];
  #count = 0;

  /** Record a release to `target` at clock reading (era, tick) (later than any recorded so far). */
  record(target: number, era: number, tick: number): void {
    const targets = this.#targets;
    let n = this.#count;
    while (n > 0 && (targets[n - 1] ?? 0) >= target) n--;
    this.#eras[n] = era;
    this.#ticks[n] = tick;
    targets[n] = target;
    this.#count = n + 1;
  }

  /** Whether a release after clock reading (era, tick) went below `offset`: a mark taken then at `offset` is stale. */
  wentBelow(offset: number, era: number, tick: number): boolean {
    const eras = this.#eras;
    const ticks = this.#ticks;
    const targets = this.#targets;
    let lowest = offset;
    for (let i = this.#count - 1; i >= 0; i--) {
      if (!earlier(era, tick, eras[i] ?? 0, ticks[i] ?? 0)) break;
      lowest = targets[i] ?? 0;
    }
    return lowest < offset;
  }

  /** Forget every release (a reset makes every older mark stale by its epoch anyway). */
  clear(): void {
    this.#count = 0;
  }
}
