/**
 * The arena's refusals: every error an arena operation throws is built here, on the cold path,
 * after the operation has checked that it must refuse and before it has changed anything.
 *
 * @module
 */

import { type DType, InvalidArgumentError } from '@pol/core';
import { describeValue, shapeText } from '@pol/core/backend';
import {
  ArenaFullError,
  ContendedError,
  DisposedArenaError,
  ForeignMarkError,
  FrameOrderError,
  MarkAboveOffsetError,
  StaleMarkError,
} from './errors.js';

/** What an arena knows about itself when it refuses: its summary line and its counters. */
export interface ArenaState {
  readonly summary: string;
  readonly offset: number;
  readonly watermark: number;
  readonly capacity: number;
}

/** `dtype[dims]` needs `[start, end)`, past the end of the slab. */
export function arenaFull(arena: ArenaState, dtype: DType, dims: readonly number[], start: number, end: number): ArenaFullError {
  const requested = end - start;
  const padding = start - arena.offset;
  const available = arena.capacity - arena.offset;
  return new ArenaFullError(
    `${arena.summary} is full: ${shapeText(dtype, dims)} needs ${requested} bytes` +
      (padding > 0 ? ` (plus ${padding} bytes of padding to start it at offset ${start})` : '') +
      `, but only ${available} of ${arena.capacity} bytes are left (watermark ${arena.watermark}). ` +
      'An arena never grows: size the slab from watermark(arena) after a warm-up pass, release scratch with a frame or retract, ' +
      'or use tryAlloc to fall back.',
    requested + padding,
    available,
    arena.watermark,
  );
}

/** Allocating from `what` (the arena, or a frame) while `top` is open inside it. */
export function allocOrder(what: string, top: string, dtype: DType, dims: readonly number[]): FrameOrderError {
  return new FrameOrderError(
    `Cannot allocate ${shapeText(dtype, dims)} from ${what}: ${top} is open inside it, ` +
      "and its close would release the new array's bytes while you still hold it. " +
      'Allocate from the innermost open frame (the one scratchspace passed you, or ambientspace()); ' +
      'allocate what must outlive the frame before opening it. If another async task holds this arena, give each task its own arena.',
  );
}

/** Opening a frame on `on` while `top`, someone else's frame, is the innermost open one. */
export function contended(on: string, top: string): ContendedError {
  return new ContendedError(
    `Cannot open a frame on ${on}: ${top} is open on this arena, ` +
      "and the caller is not inside that frame's block, so the new frame would interleave with it (contended). " +
      'Give each concurrent task its own arena, or open nested frames on the innermost frame: scratchspace(frame, ...) ' +
      'or scratchspace(...) inside its block. The open frame and its arrays are untouched.',
  );
}

/** Closing `frame` while `top` is still open inside it. */
export function closeOrder(frame: string, top: string): FrameOrderError {
  return new FrameOrderError(
    `Cannot close ${frame}: ${top} was opened inside it and is still open, and closing the outer frame ` +
      'would release the inner one\'s bytes under it. Close frames innermost first (scratchspace blocks and "using" do this for you). ' +
      'Nothing was closed.',
  );
}

/** Resetting `arena` with `depth` frames open. */
export function resetOrder(arena: string, depth: number): FrameOrderError {
  return new FrameOrderError(
    `Cannot reset ${arena}: ${depth} frame${depth === 1 ? ' is' : 's are'} open on it, and a reset would release their bytes under them. ` +
      'Close every frame first (reset between steps, outside any scratchspace block).',
  );
}

/** Disposing `arena` while `depth` frames are open on it. */
export function disposeOrder(arena: string, depth: number): FrameOrderError {
  return new FrameOrderError(
    `Cannot dispose ${arena}: ${depth} frame${depth === 1 ? ' is' : 's are'} open on it, and their blocks still use its region. ` +
      'Close every frame first (dispose after the last scratchspace block has returned).',
  );
}

/** A carve of `dtype[dims]` from `arena`, which was disposed. */
export function disposedCarve(arena: string, dtype: DType, dims: readonly number[]): DisposedArenaError {
  return new DisposedArenaError(
    `Cannot allocate ${shapeText(dtype, dims)} from ${arena}: it was disposed, and its region may belong to another arena by now. ` +
      'Make a new arena over the region (new Arena(slab, { byteOffset, byteLength })) and allocate from that one.',
  );
}

/** Why a retract to a mark is refused, in the order a retract checks. */
export type BadMark = 'not a mark' | 'foreign' | 'older epoch' | 'above offset' | 'released' | 'frame order';

/** The refusal of a retract of `arena` (at `offset`, in `epoch`) to `mark`, for `reason`. */
export function badMark(
  reason: BadMark,
  arena: string,
  mark: unknown,
  details: {
    readonly markArena: string;
    readonly markEpoch: number;
    readonly epoch: number;
    readonly offset: number;
    readonly top: string;
  },
): Error {
  switch (reason) {
    case 'not a mark':
      return new InvalidArgumentError(`retract needs a Mark from mark(arena), got ${describeValue(mark)}.`);
    case 'foreign':
      return new ForeignMarkError(
        `Cannot retract ${arena} to ${mark}: the mark was taken on another arena, ${details.markArena}. Retract an arena only to its own marks.`,
      );
    case 'older epoch':
      return new StaleMarkError(
        `Cannot retract ${arena} to ${mark}: the mark was taken in epoch ${details.markEpoch}, and reset has since moved the arena to epoch ${details.epoch}, ` +
          'so its offset means nothing now. Take a new mark after the reset.',
      );
    case 'above offset':
      return new MarkAboveOffsetError(
        `Cannot retract ${arena} to ${mark}: the mark is above the current offset ${details.offset}, and retract only moves the offset back. ` +
          'An earlier retract already released everything past it.',
      );
    case 'released':
      return new StaleMarkError(
        `Cannot retract ${arena} to ${mark}: a retract below the mark has happened since it was taken, and the bytes above it have been carved again, ` +
          'so retracting to it would release arrays that are still in use. Take a new mark.',
      );
    case 'frame order':
      return new FrameOrderError(
        `Cannot retract ${arena} to ${mark}: the mark was taken before ${details.top} opened, which is still open, and the retract would release its bytes under it. ` +
          'Close the frame first, or retract only to marks taken inside it.',
      );
  }
}

/** A rollback to something that is not the savepoint of the allocation that just failed. */
export function badRollback(arena: string, token: unknown): InvalidArgumentError {
  return new InvalidArgumentError(
    `${arena} cannot roll back to ${describeValue(token)}: only to the savepoint of the allocation that just failed.`,
  );
}
