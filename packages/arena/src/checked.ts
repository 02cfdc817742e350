/**
 * Checked mode: the lives of carved arrays, their deaths when a release frees their bytes, and the
 * poisoning of those bytes.
 *
 * @module
 */

import { type DType, dtypeInfo } from '@pol/core';
import { shapeText } from '@pol/core/backend';
import { earlier } from './clock.js';
import { StaleArrayError } from './errors.js';
import type { AnyStorage, ArrayLife } from './storage.js';

/** What released an array's bytes. */
export type DeathCause = 'frame' | 'retract' | 'reset' | 'rollback';

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
    // The arena's clock reading when carved, (clockEra, clockTick): a release to a mark that read the
    // clock no later kills it.
    readonly clockEra: number,
    readonly clockTick: number,
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
export class CheckedCarves {
  readonly #live: CarveLife[] = [];

  constructor(
    readonly storage: AnyStorage,
    readonly slab: unknown, // a slab `storage` matches
    // The arena's one-line summary at a given offset, for the stale-array messages.
    readonly summary: (offset: number) => string,
  ) {}

  add(life: CarveLife): void {
    this.#live.push(life);
  }

  /** Poison [target, from) and kill every carve made at or after the clock reading (era, tick). */
  kill(target: number, from: number, era: number, tick: number, cause: DeathCause, epoch: number): void {
    const live = this.#live;
    const storage = this.storage;
    const poison = storage.poison;
    if (poison !== undefined && from > target) poison.call(storage, this.slab as never, target, from - target);
    let n = live.length;
    const last = live[n - 1];
    if (last === undefined || earlier(last.clockEra, last.clockTick, era, tick)) return;
    const death = new Death(cause, target, epoch, this.summary(target));
    for (; n > 0; n--) {
      const life = live[n - 1];
      if (life === undefined || earlier(life.clockEra, life.clockTick, era, tick)) break;
      life.die(death);
      if (poison !== undefined && life.byteLength > 0 && dtypeInfo(life.dtype).float) {
        poison.call(storage, this.slab as never, life.start, life.byteLength, life.dtype);
      }
    }
    live.length = n;
  }
}
