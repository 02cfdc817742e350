/**
 * Checked mode: the lives of carved arrays, their deaths when a release frees their bytes, and the
 * poisoning of those bytes.
 *
 * @module
 */

import { type DType, dtypeInfo } from '@pol/core';
import { shapeText } from '@pol/core/backend';
import type { ClockReadings } from './clock.js';
import { StaleArrayError } from './errors.js';
import type { AnyStorage, ArrayLife } from './types.js';

/** What released an array's bytes. */
export type DeathCause = 'frame' | 'retract' | 'reset' | 'rollback' | 'dispose';

/** One release, shared by every array it killed. */
class Death {
  constructor(
    readonly cause: DeathCause,
    readonly offset: number, // the arena's offset after the release
    readonly epoch: number, // the epoch the release happened in
    readonly arena: string,
  ) {}

  describe(): string {
    switch (this.cause) {
      case 'frame':
        return `its frame closed, retracting ${this.arena} to offset ${this.offset} in epoch ${this.epoch}`;
      case 'retract':
        return `retract(arena, mark) released it, moving ${this.arena} back to offset ${this.offset} in epoch ${this.epoch}`;
      case 'reset':
        return `reset(arena) released it, ending epoch ${this.epoch} of ${this.arena}`;
      case 'rollback':
        return `a spec allocation that failed part-way rolled it back on ${this.arena} (epoch ${this.epoch})`;
      case 'dispose':
        return `${this.arena} was disposed, giving its region back`;
    }
  }
}

/** The life of one checked carve (see ArrayLife). */
export class CarveLife implements ArrayLife {
  // Invariant: #death is set exactly once, by the release that frees [start, start + byteLength).
  #death: Death | undefined;

  constructor(
    readonly dtype: DType,
    readonly dims: readonly number[],
    readonly start: number,
    readonly byteLength: number,
    public clock: number, // the arena's clock when carved: a release to a mark with clock ≤ this kills it (renumbered with the clock)
  ) {}

  get alive(): boolean {
    return this.#death === undefined;
  }

  die(death: Death): void {
    this.#death = death;
  }

  assertAlive(): void {
    if (this.#death !== undefined) throw this.#stale(this.#death);
  }

  #stale(death: Death): StaleArrayError {
    return new StaleArrayError(
      `${shapeText(this.dtype, this.dims)} (carved at offset ${this.start}) is stale: ${death.describe()}. ` +
        'Its bytes have been poisoned and may be handed out again. Read an array only while its frame is open; ' +
        'copy what must outlive the frame, or allocate it from the arena (or an outer frame) before opening the frame.',
    );
  }
}

/**
 * The live carves of a checked arena, in carve order (so their clocks never decrease), and the
 * release that kills the ones a retract, frame close or reset frees.
 */
export class CheckedCarves implements ClockReadings {
  readonly #live: CarveLife[] = [];

  constructor(
    readonly storage: AnyStorage,
    readonly slab: unknown, // a slab `storage` matches
    // Where the arena's region starts in the slab: the storage's offsets are the slab's, a life's the arena's.
    readonly regionStart: number,
    // The arena's one-line summary at a given offset, for the stale-array messages.
    readonly summary: (offset: number) => string,
  ) {}

  add(life: CarveLife): void {
    this.#live.push(life);
  }

  /** Push the clock reading of every live carve onto `into` (for the clock's renumbering). */
  readings(into: number[]): void {
    for (const life of this.#live) into.push(life.clock);
  }

  /** Take the clock's new numbering, which keeps the order (`to` maps each reading to its new value). */
  renumber(to: (reading: number) => number): void {
    for (const life of this.#live) life.clock = to(life.clock);
  }

  /** Poison [target, from) and kill every carve made at or after `clock`. */
  kill(target: number, from: number, clock: number, cause: DeathCause, epoch: number): void {
    const live = this.#live;
    const storage = this.storage;
    const poison = storage.poison;
    const at = this.regionStart;
    if (poison !== undefined && from > target) poison.call(storage, this.slab as never, at + target, from - target);
    let n = live.length;
    if (n === 0 || (live[n - 1]?.clock ?? Number.NEGATIVE_INFINITY) < clock) return;
    const death = new Death(cause, target, epoch, this.summary(target));
    for (; n > 0; n--) {
      const life = live[n - 1];
      if (life === undefined || life.clock < clock) break;
      life.die(death);
      if (poison !== undefined && life.byteLength > 0 && dtypeInfo(life.dtype).float) {
        poison.call(storage, this.slab as never, at + life.start, life.byteLength, life.dtype);
      }
    }
    live.length = n;
  }
}
