import { type ArrayOf, type DType, type Frame, FrameClosedError, InvalidArgumentError, type Kind } from '@pol/core';
import { describeValue } from '@pol/core/backend';
import { arenaOf, isArenaFrame } from './arena.js';
import { NotAnArenaError } from './errors.js';
import type { ArenaListener } from './listeners.js';
import type { Mark } from './mark.js';
import type { Arena } from './types.js';

function need(x: unknown, what: string): Arena {
  const arena = arenaOf(x);
  if (arena === undefined) {
    throw new NotAnArenaError(
      `${what} needs an Arena (or a frame on one), got ${describeValue(x)}. Make one with new Arena(new ArrayBuffer(bytes)).`,
    );
  }
  return arena;
}

// Marks move offsets, so a frame that has closed no longer stands for its arena there.
function needOpen(x: unknown, what: string): Arena {
  const arena = need(x, what);
  // An arena stands for itself: only a frame (x is not its arena) can have closed.
  if (arena !== x && isArenaFrame(x) && !x.isOpen) {
    throw new FrameClosedError(
      `Cannot ${what} through ${String(x)}: the frame has closed. Pass the arena itself, or a frame that is still open.`,
    );
  }
  return arena;
}

/**
 * Whether `x` is an arena.
 *
 * @example
 * ```ts
 * import { Arena, isArena } from '@pol/arena';
 * isArena(new Arena(new ArrayBuffer(64))); // true
 * isArena(new ArrayBuffer(64)); // false
 * ```
 */
export function isArena(x: unknown): x is Arena {
  return arenaOf(x) === x && x !== undefined;
}

/**
 * Snapshot the arena's offset (and epoch) as a {@link Mark}, to `retract` to later. Changes
 * nothing. A frame stands for its arena.
 *
 * @throws {NotAnArenaError} when `space` is neither an arena nor a frame on one.
 * @throws {FrameClosedError} when `space` is a frame that has closed.
 * @example
 * ```ts
 * import { Arena, mark, retract } from '@pol/arena';
 * const arena = new Arena(new ArrayBuffer(1024));
 * const m = mark(arena);
 * arena.alloc('float32', [16]);
 * retract(arena, m); // offset back to m.offset
 * ```
 */
export function mark<K extends Kind>(space: Arena<K> | Frame<K>): Mark {
  return needOpen(space, 'mark').mark();
}

/**
 * Move the arena's offset back to a mark: everything carved since is garbage at once, however
 * many arrays that is. Retracting to the same mark twice with nothing carved in between is a no-op.
 *
 * @throws {StaleMarkError} when the mark was taken before a `reset`, or a retract below it has happened since.
 * @throws {ForeignMarkError} when the mark belongs to another arena.
 * @throws {MarkAboveOffsetError} when the mark is above the current offset.
 * @throws {FrameOrderError} when the mark was taken before a frame that is still open.
 * @throws {NotAnArenaError} when `space` is neither an arena nor a frame on one.
 * @throws {FrameClosedError} when `space` is a frame that has closed.
 * @example
 * ```ts
 * import { Arena, mark, retract } from '@pol/arena';
 * const arena = new Arena(new ArrayBuffer(1024), { alignment: 16 });
 * const m = mark(arena);
 * arena.alloc('uint8', [100]);
 * retract(arena, m);
 * retract(arena, m); // no-op
 * console.log(arena.offset); // 0
 * ```
 */
export function retract<K extends Kind>(space: Arena<K> | Frame<K>, m: Mark): void {
  needOpen(space, 'retract').retract(m);
}

/**
 * Move the arena's offset back to 0: every carve is garbage, and the epoch advances so that every
 * existing mark is stale. The watermark survives.
 *
 * @throws {FrameOrderError} while a frame is open on the arena.
 * @example
 * ```ts
 * import { Arena, reset, watermark } from '@pol/arena';
 * const arena = new Arena(new ArrayBuffer(1024), { alignment: 16 });
 * for (let step = 0; step < 3; step++) {
 *   arena.alloc('float32', [32]);
 *   reset(arena);
 * }
 * console.log(arena.offset, watermark(arena)); // 0 128
 * ```
 */
export function reset(arena: Arena): void {
  if (!isArena(arena)) {
    if (isArenaFrame(arena)) {
      throw new NotAnArenaError(
        `reset needs the arena itself, got ${String(arena)}: a frame releases its bytes when it closes. Reset the arena outside every frame.`,
      );
    }
    need(arena, 'reset');
  }
  arena.reset();
}

/**
 * The highest offset the arena has ever reached, in bytes: the measured requirement of everything
 * run on it. It survives `reset`, so it accumulates over the passes of a warm-up. Size a slab from it.
 *
 * @throws {NotAnArenaError} when `space` is neither an arena nor a frame on one.
 * @example
 * ```ts
 * import { Arena, watermark } from '@pol/arena';
 * import { alloc, scratchspace } from '@pol/core';
 * const probe = new Arena(new ArrayBuffer(1 << 20));
 * scratchspace(probe, (frame) => alloc(frame, 'float32', 1000));
 * const arena = new Arena(new ArrayBuffer(watermark(probe))); // exactly big enough: 4000 bytes
 * ```
 */
export function watermark<K extends Kind>(space: Arena<K> | Frame<K>): number {
  return need(space, 'watermark').watermark;
}

/**
 * The fallible twin of `alloc` on an arena or a frame on one: `undefined` instead of
 * `ArenaFullError` when the array does not fit, for callers that fall back to another space. Every
 * other mistake (a bad dtype or dims, a frame out of order) still throws.
 *
 * @throws {NotAnArenaError} when `space` is neither an arena nor a frame on one.
 * @example
 * ```ts
 * import { Arena, tryAlloc } from '@pol/arena';
 * import { alloc, Similar } from '@pol/core';
 * const arena = new Arena(new ArrayBuffer(256));
 * const big = tryAlloc(arena, 'float32', [1024]) ?? alloc(Similar(new Float32Array(0)), 'float32', [1024]);
 * ```
 */
export function tryAlloc<K extends Kind, D extends DType>(
  space: Arena<K> | Frame<K>,
  dtype: D,
  dims: readonly number[],
): ArrayOf<K, D> | undefined;
export function tryAlloc<K extends Kind, D extends DType>(
  space: Arena<K> | Frame<K>,
  dtype: D,
  ...dims: number[]
): ArrayOf<K, D> | undefined;
export function tryAlloc(space: unknown, dtype: DType, dims?: unknown): unknown {
  const arena = need(space, 'tryAlloc');
  // Only the rest spelling builds an array; the dims-array spelling allocates nothing here.
  // biome-ignore lint/complexity/noArguments: the argument count tells the two spellings apart without a rest parameter.
  const shape = (Array.isArray(dims) ? dims : Array.prototype.slice.call(arguments, 2)) as number[];
  const target = space as Arena | { tryAlloc(dtype: DType, dims: readonly number[]): unknown };
  return target === arena ? arena.tryAlloc(dtype, shape) : target.tryAlloc(dtype, shape);
}

/**
 * Call `listener` after every retract, frame close and reset of the arena (even one that releases
 * nothing), with `{ kind, offset, epoch }`: every byte from `offset` up has been released. For
 * whatever must drop state tied to a region, such as a captured GPU graph. Returns the
 * unsubscribe function. A listener that throws does not stop the others; the first error is
 * rethrown after the release, which has happened.
 *
 * @throws {NotAnArenaError} when `space` is neither an arena nor a frame on one.
 * @throws {InvalidArgumentError} when `listener` is not a function.
 * @example
 * ```ts
 * import { Arena, observe, reset } from '@pol/arena';
 * const arena = new Arena(new ArrayBuffer(1024));
 * const stop = observe(arena, (event) => console.log(event.kind, event.offset)); // 'reset' 0
 * reset(arena);
 * stop();
 * ```
 */
export function observe<K extends Kind>(space: Arena<K> | Frame<K>, listener: ArenaListener): () => void {
  const arena = need(space, 'observe');
  if (typeof listener !== 'function') {
    throw new InvalidArgumentError(`observe(arena, listener) needs a function, got ${describeValue(listener)}.`);
  }
  return arena.observe(listener);
}
