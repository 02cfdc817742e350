/// <reference lib="esnext.disposable" preserve="true" />
/**
 * Arena frames: what `scratchspace(arena, f)` hands to `f`. A frame marks its arena when it opens
 * and retracts to that mark when it closes; it allocates only while it is the innermost open frame.
 *
 * @module
 */

import { type ArrayOf, type DType, FrameClosedError, type Kind, type Space } from '@pol/core';
import { allocLengthKey, frameKey, openFrameKey, rollbackKey, savepointKey, shapeText, spaceKey } from '@pol/core/backend';
import type { ClockReadings } from './clock.js';
import type { Arena, ArenaFrame } from './types.js';

/** The key of {@link FrameOwner}'s carve. These keys are symbols the package never exports. */
export const frameCarveKey: unique symbol = Symbol('@pol/arena frame carve');
/** The key of {@link FrameOwner}'s carve of a 1-D array by its length. */
export const frameCarveLengthKey: unique symbol = Symbol('@pol/arena frame carve by length');
/** The key of {@link FrameOwner}'s nested open. */
export const frameOpenKey: unique symbol = Symbol('@pol/arena frame open');
/** The key of {@link FrameOwner}'s close. */
export const frameCloseKey: unique symbol = Symbol('@pol/arena frame close');
/** The key of {@link FrameOwner}'s notice of a close. */
export const frameClosedKey: unique symbol = Symbol('@pol/arena frame closed');

/**
 * What a frame asks of its arena, which alone holds the state these change (its innermost open
 * frame, offset and clock): the arena implements them under keys no caller can name, and hands
 * itself to every frame it opens, so that a frame's operations are its arena's own methods, called
 * on the one object the frame already holds. With them, the members of core's space protocol that
 * a frame forwards to its arena, which every arena has: the public `Arena` leaves them as core's
 * `Space` declares them (optional), so that they stay out of users' declarations.
 */
export interface FrameOwner<K extends Kind> extends Arena<K> {
  /** Open a frame on the arena itself (what `scratchspace(arena, f)` calls). */
  [openFrameKey](): ArenaFrame<K>;
  /** Take a savepoint before a spec's allocations (what `alloc(arena, spec)` calls). */
  [savepointKey](): unknown;
  /** Undo everything since a savepoint (what a failed `alloc(arena, spec)` calls). */
  [rollbackKey](token: unknown): void;
  /** Carve through `frame`, which must be the innermost open frame. */
  [frameCarveKey]<D extends DType>(
    frame: FrameImpl<K>,
    dtype: D,
    dims: readonly number[],
    fallible: boolean,
  ): ArrayOf<K, D> | undefined;
  /** Carve a 1-D array of `length` elements through `frame`, which must be the innermost open frame. */
  [frameCarveLengthKey]<D extends DType>(frame: FrameImpl<K>, dtype: D, length: number): ArrayOf<K, D>;
  /** Open a frame nested in `on`, which must be the innermost open frame. */
  [frameOpenKey](on: FrameImpl<K>): FrameImpl<K>;
  /** Close `frame`, which must be the innermost open frame: retract to its start. */
  [frameCloseKey](frame: FrameImpl<K>): void;
  /** Tell the arena's listeners of the release a frame's close made. */
  [frameClosedKey](): void;
}

/**
 * The one class of arena frames. An unchecked arena reuses its frame objects, one per depth: a
 * closed frame is opened again by the next frame opened at its depth (see {@link FrameImpl.reopen}),
 * so opening and closing a frame allocates nothing. Until then it stays closed and refuses every use.
 */
export class FrameImpl<K extends Kind> implements ArenaFrame<K>, ClockReadings {
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
    readonly arena: FrameOwner<K>,
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

  /** Push the clock reading of this frame and of every frame it is nested in onto `into` (for the clock's renumbering). */
  readings(into: number[]): void {
    for (let f: FrameImpl<K> | undefined = this; f !== undefined; f = f.#outer) into.push(f.#clock);
  }

  /** Take the clock's new numbering, here and in every frame this one is nested in (`to` maps each reading the arena held to its new value). */
  renumber(to: (reading: number) => number): void {
    for (let f: FrameImpl<K> | undefined = this; f !== undefined; f = f.#outer) f.#clock = to(f.#clock);
  }

  /** Where this frame and every frame it is nested in opened, outermost first. */
  starts(): number[] {
    const starts: number[] = [];
    for (let f: FrameImpl<K> | undefined = this; f !== undefined; f = f.#outer) starts.unshift(f.#start);
    return starts;
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
    return this.arena[frameCarveKey](this, dtype, dims, false) as ArrayOf<K, D>;
  }

  // What core's alloc(frame, dtype, n) calls (see allocLengthKey): the arena checks the dtype and the size.
  [allocLengthKey]<D extends DType>(dtype: D, length: number): ArrayOf<K, D> {
    if (!this.#open) throw this.#closed(`allocate ${shapeText(dtype, [length])}`);
    return this.arena[frameCarveLengthKey](this, dtype, length);
  }

  tryAlloc<D extends DType>(dtype: D, dims: readonly number[]): ArrayOf<K, D> | undefined {
    if (!this.#open) throw this.#closed(`allocate ${shapeText(dtype, dims)}`);
    return this.arena[frameCarveKey](this, dtype, dims, true);
  }

  [openFrameKey](): ArenaFrame<K> {
    if (!this.#open) throw this.#closed('open a nested frame');
    return this.arena[frameOpenKey](this);
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
    this.arena[frameCloseKey](this); // throws, changing nothing, unless this is the innermost frame
    this.#open = false;
    this.arena[frameClosedKey]();
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
