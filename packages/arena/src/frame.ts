/// <reference lib="esnext.disposable" preserve="true" />
/**
 * Arena frames: what `scratchspace(arena, f)` hands to `f`. A frame marks its arena when it opens
 * and retracts to that mark when it closes; it allocates only while it is the innermost open frame.
 *
 * @module
 */

import { type ArrayOf, type DType, FrameClosedError, type Kind, type Space } from '@pol/core';
import { frameKey, openFrameKey, rollbackKey, savepointKey, shapeText, spaceKey } from '@pol/core/backend';
import type { Arena } from './arena.js';
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

/**
 * The one class of arena frames. An unchecked arena reuses its frame objects, one per depth: a
 * closed frame is opened again by the next frame opened at its depth (see {@link FrameImpl.reopen}),
 * so opening and closing a frame allocates nothing. Until then it stays closed and refuses every use.
 */
export class FrameImpl<K extends Kind> implements ArenaFrame<K> {
  // Messages name values by their class ("got an ArenaFrame"): name it as users know it, with a
  // static getter for the reason given at ArenaImpl's.
  static get name(): string {
    return 'ArenaFrame';
  }
  readonly [spaceKey]: K;
  declare readonly [frameKey]: true;
  // Invariant: open exactly while this frame is on its arena's chain of open frames.
  #open = true;
  #parent: Space<K>;
  #start: number;
  #clock: number;
  #outer: FrameImpl<K> | undefined;

  constructor(
    readonly arena: Arena<K>,
    parent: Space<K>,
    start: number,
    clock: number,
    outer: FrameImpl<K> | undefined,
  ) {
    this[spaceKey] = arena[spaceKey];
    this.#parent = parent;
    this.#start = start;
    this.#clock = clock;
    this.#outer = outer;
  }

  /** Open this closed frame again as a new frame: what its arena does instead of making one. */
  reopen(parent: Space<K>, start: number, clock: number, outer: FrameImpl<K> | undefined): this {
    this.#parent = parent;
    this.#start = start;
    this.#clock = clock;
    this.#outer = outer;
    this.#open = true;
    return this;
  }

  get isOpen(): boolean {
    return this.#open;
  }

  /** The space it was opened on: its arena, or the frame it is nested in. */
  get parent(): Space<K> {
    return this.#parent;
  }

  /** The arena's offset at open; closing retracts to it. */
  get start(): number {
    return this.#start;
  }

  /** Take the clock's new numbering (`to` maps each reading the arena held to its new value). */
  renumber(to: (reading: number) => number): void {
    this.#clock = to(this.#clock);
  }

  /** The arena's clock at open: carves made through this frame (or inside it) have a clock at least this. */
  get clock(): number {
    return this.#clock;
  }

  /** The frame that was innermost when this one opened. */
  get outer(): FrameImpl<K> | undefined {
    return this.#outer;
  }

  alloc<D extends DType>(dtype: D, dims: readonly number[]): ArrayOf<K, D> {
    if (!this.#open) throw this.#closed(`allocate ${shapeText(dtype, dims)}`);
    return frameOps.alloc(this.arena, this, dtype, dims, false) as ArrayOf<K, D>;
  }

  tryAlloc<D extends DType>(dtype: D, dims: readonly number[]): ArrayOf<K, D> | undefined {
    if (!this.#open) throw this.#closed(`allocate ${shapeText(dtype, dims)}`);
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
