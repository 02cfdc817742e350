/**
 * Arena frames: what `scratchspace(arena, f)` hands to `f`. A frame marks its arena when it opens
 * and retracts to that mark when it closes; it allocates only while it is the innermost open frame.
 *
 * @module
 */

import {
  type ArrayOf,
  type DType,
  FrameClosedError,
  frameKey,
  type Kind,
  openFrameKey,
  rollbackKey,
  type Space,
  savepointKey,
  spaceKey,
} from '@pol/core';
import type { Arena } from './arena.js';
import { describeDims } from './refusals.js';
import type { ArenaFrame } from './types.js';

/**
 * What a frame asks of its arena, reaching the arena's private state: the arena's class fills
 * these in from its static block (a class's #private members are visible to that class alone).
 */
export interface FrameOps {
  /** Carve through `frame`, which must be the innermost open frame. */
  alloc<K extends Kind, D extends DType>(
    arena: Arena<K>,
    frame: FrameImpl<K>,
    dtype: D,
    dims: readonly number[],
    fallible: boolean,
  ): ArrayOf<K, D> | undefined;
  /** Open a frame nested in `on`, which must be the innermost open frame. */
  open<K extends Kind>(arena: Arena<K>, on: FrameImpl<K>): FrameImpl<K>;
  /** Close `frame`, which must be the innermost open frame: retract to its start. */
  close<K extends Kind>(arena: Arena<K>, frame: FrameImpl<K>): void;
  /** Tell the arena's listeners of a release. */
  notify(arena: Arena<Kind>, kind: 'retract' | 'reset'): void;
}

/** Filled in by the arena's class when its module loads. */
export const frameOps = {} as FrameOps;

/** The one class of arena frames. */
export class FrameImpl<K extends Kind> implements ArenaFrame<K> {
  readonly [spaceKey]: K;
  declare readonly [frameKey]: true;
  // Invariant: open exactly while this frame is on its arena's chain of open frames.
  #open = true;

  constructor(
    readonly arena: Arena<K>,
    readonly parent: Space<K>,
    readonly start: number, // the arena's offset at open; closing retracts to it
    readonly clock: number, // the arena's clock at open: carves made through this frame (or inside it) have clock ≥ this
    readonly outer: FrameImpl<K> | undefined, // the frame that was innermost when this one opened
  ) {
    this[spaceKey] = arena[spaceKey];
  }

  get isOpen(): boolean {
    return this.#open;
  }

  alloc<D extends DType>(dtype: D, dims: readonly number[]): ArrayOf<K, D> {
    if (!this.#open) throw this.#closed(`allocate ${dtype}[${describeDims(dims)}]`);
    return frameOps.alloc(this.arena, this, dtype, dims, false) as ArrayOf<K, D>;
  }

  tryAlloc<D extends DType>(dtype: D, dims: readonly number[]): ArrayOf<K, D> | undefined {
    if (!this.#open) throw this.#closed(`allocate ${dtype}[${describeDims(dims)}]`);
    return frameOps.alloc(this.arena, this, dtype, dims, true);
  }

  [openFrameKey](): ArenaFrame<K> {
    if (!this.#open) throw this.#closed('open a nested frame');
    return frameOps.open(this.arena, this);
  }

  // The spec protocol goes to the arena: a spec allocated through a frame fails or rolls back there.
  [savepointKey](): unknown {
    if (!this.#open) throw this.#closed('allocate a spec');
    return this.arena[savepointKey]();
  }

  [rollbackKey](token: unknown): void {
    this.arena[rollbackKey](token);
  }

  close(): void {
    if (!this.#open) return;
    frameOps.close(this.arena, this); // throws, changing nothing, unless this is the innermost frame
    this.#open = false;
    frameOps.notify(this.arena as Arena<Kind>, 'retract');
  }

  [Symbol.dispose](): void {
    this.close();
  }

  toString(): string {
    return `Frame(start ${this.start}, ${this.#open ? 'open' : 'closed'}, on ${this.arena})`;
  }

  #closed(what: string): FrameClosedError {
    return new FrameClosedError(
      `Cannot ${what}: ${this} has closed, and everything it allocated is released. ` +
        'Allocate from a frame only inside its scratchspace block (or before disposing it), or open a new frame.',
    );
  }
}

Object.defineProperty(FrameImpl.prototype, frameKey, { value: true });
// Messages name values by their class ("got an ArenaFrame"): name the class as users know it.
Object.defineProperty(FrameImpl, 'name', { value: 'ArenaFrame' });
