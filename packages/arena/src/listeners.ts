/**
 * Listeners: who hears of an arena's releases (`observe`), and the delivery that tells every one of
 * them even when one throws.
 *
 * @module
 */

import { InvalidArgumentError } from '@pol/core';
import { describeValue } from '@pol/core/backend';

/**
 * What `observe` listeners receive after each retract (frame closes included) and reset.
 *
 * @example
 * ```ts
 * import { Arena, type ArenaEvent, observe } from '@pol/arena';
 * const arena = new Arena(new ArrayBuffer(1024));
 * const log: ArenaEvent[] = [];
 * observe(arena, (event) => log.push(event));
 * arena.reset(); // log: [{ kind: 'reset', offset: 0, epoch: 1 }]
 * ```
 */
export interface ArenaEvent {
  /** `'retract'` for a retract, a frame close or a rolled-back allocation; `'reset'` for a reset. */
  readonly kind: 'retract' | 'reset';
  /** The arena's offset after the release: every byte from here up is released. */
  readonly offset: number;
  /** The arena's epoch after the release. */
  readonly epoch: number;
}

/**
 * A listener passed to `observe`.
 *
 * @example
 * ```ts
 * import { Arena, type ArenaListener, observe } from '@pol/arena';
 * let pinnedEnd = 512; // say, the end of the region a captured graph uses
 * const invalidate: ArenaListener = (event) => {
 *   if (event.offset < pinnedEnd) pinnedEnd = 0;
 * };
 * observe(new Arena(new ArrayBuffer(1024)), invalidate);
 * ```
 */
export type ArenaListener = (event: ArenaEvent) => void;

/** The listeners of one arena, which makes this object when it is first observed. */
export class Listeners {
  // Copy-on-write, so a listener may unsubscribe while being notified.
  #list: readonly ArenaListener[] = [];

  /**
   * Call `listener` after every release from now on; returns the unsubscribe function, which does
   * nothing the second time.
   *
   * @throws {InvalidArgumentError} when `listener` is not a function.
   */
  add(listener: ArenaListener): () => void {
    if (typeof listener !== 'function') {
      throw new InvalidArgumentError(
        `observe(arena, listener) needs a function, got ${describeValue(listener)}. Pass (event) => { ... }.`,
      );
    }
    this.#list = [...this.#list, listener];
    let subscribed = true;
    return () => {
      if (!subscribed) return;
      subscribed = false;
      const at = this.#list.indexOf(listener);
      if (at >= 0) this.#list = this.#list.filter((_, i) => i !== at);
    };
  }

  /** Tell every listener of a release that left the arena at `offset` in `epoch`; rethrow the first failure after all heard. */
  notify(kind: ArenaEvent['kind'], offset: number, epoch: number): void {
    const listeners = this.#list;
    if (listeners.length === 0) return;
    const event: ArenaEvent = Object.freeze({ kind, offset, epoch });
    let failed = false;
    let failure: unknown;
    // Every listener hears of the release even if one throws; the first failure is rethrown.
    for (let i = 0; i < listeners.length; i++) {
      try {
        listeners[i]?.(event);
      } catch (error) {
        if (!failed) {
          failed = true;
          failure = error;
        }
      }
    }
    if (failed) throw failure;
  }
}
