/// <reference lib="esnext.disposable" preserve="true" />
/**
 * Frames on the spaces of placement (the planning space, a placed arena): opening one takes the
 * space's position, closing it rewinds the space there, as an arena's frame marks and retracts.
 * Frames close innermost first: closing a frame closes the frames opened inside it that are still
 * open. Savepoints are positions too, so a spec that fails part-way leaves the space as it was.
 *
 * @module
 */

import { type ArrayOf, type DType, type Frame, FrameClosedError, type Space } from '@pol/core';
import { frameKey, openFrameKey, rollbackKey, savepointKey, shapeText, spaceKey } from '@pol/core/backend';

/** A space that can say where it is and go back there: what a marking frame needs of it. */
export interface Positioned<Token> extends Space<'gpu'> {
  /** Where the space is now. */
  position(): Token;
  /** Go back to `token`: everything carved since is released. */
  rewind(token: Token): void;
  /** The frames open on it, outermost first. */
  readonly frames: MarkingFrame<Token>[];
  /** The space, for messages. */
  toString(): string;
}

/** A frame on a positioned space. */
export class MarkingFrame<Token> implements Frame<'gpu'> {
  // How messages name it: a static getter keeps `instanceof` fast (CONTRIBUTING.md, "Class names").
  static get name(): string {
    return 'Frame';
  }
  readonly [spaceKey] = 'gpu' as const;
  declare readonly [frameKey]: true;
  readonly #root: Positioned<Token>;
  readonly #start: Token;
  #open = true;

  constructor(
    root: Positioned<Token>,
    readonly parent: Space<'gpu'>,
  ) {
    this.#root = root;
    this.#start = root.position();
    root.frames.push(this);
  }

  get isOpen(): boolean {
    return this.#open;
  }

  alloc<D extends DType>(dtype: D, dims: readonly number[]): ArrayOf<'gpu', D> {
    if (!this.#open) throw this.#closed(`allocate ${shapeText(dtype, dims)}`);
    return this.#root.alloc(dtype, dims);
  }

  [openFrameKey](): Frame<'gpu'> {
    if (!this.#open) throw this.#closed('open a nested frame');
    return new MarkingFrame(this.#root, this);
  }

  [savepointKey](): unknown {
    return this.#root.position();
  }

  [rollbackKey](token: unknown): void {
    this.#root.rewind(token as Token);
  }

  close(): void {
    if (!this.#open) return;
    const frames = this.#root.frames;
    // Inner frames first: their positions lie above this one's.
    for (let top = frames[frames.length - 1]; top !== undefined && top !== this; top = frames[frames.length - 1]) top.close();
    frames.pop();
    this.#open = false;
    this.#root.rewind(this.#start);
  }

  [Symbol.dispose](): void {
    this.close();
  }

  toString(): string {
    return `Frame(on ${String(this.#root)}${this.#open ? '' : ', closed'})`;
  }

  #closed(what: string): FrameClosedError {
    return new FrameClosedError(
      `Cannot ${what}: ${String(this)} has closed, and everything it allocated is dead. Allocate from a frame only while it is open.`,
    );
  }
}

/**
 * A space whose frames and savepoints are positions (the planning space, a placed arena): it says
 * where it is and goes back there; the frame protocol follows.
 */
export abstract class PositionedSpace<Token> implements Positioned<Token> {
  readonly [spaceKey] = 'gpu' as const;
  readonly frames: MarkingFrame<Token>[] = [];

  abstract alloc<D extends DType>(dtype: D, dims: readonly number[]): ArrayOf<'gpu', D>;
  abstract position(): Token;
  abstract rewind(token: Token): void;

  [openFrameKey](): MarkingFrame<Token> {
    return new MarkingFrame(this, this);
  }

  [savepointKey](): unknown {
    return this.position();
  }

  [rollbackKey](token: unknown): void {
    this.rewind(token as Token);
  }
}

Object.defineProperty(MarkingFrame.prototype, frameKey, { value: true });
