/// <reference lib="esnext.disposable" preserve="true" />
/**
 * The arena: `ArenaImpl`, its offset, watermark, epoch and clock, the fast and slow paths of a
 * carve, marks, releases, frames and savepoints; and its public face, the `Arena` interface and
 * constructor.
 *
 * @module
 */

import {
  type ArrayOf,
  ambientspace,
  type DType,
  type DTypeInfo,
  InvalidArgumentError,
  type Kind,
  type PolArray,
  type Space,
} from '@pol/core';
import { describeValue, openFrameKey, rollbackKey, sameDims, savepointKey, spaceKey } from '@pol/core/backend';
import { CacheEntry, CarveCache, emptyFirstLevel } from './carve-cache.js';
import { CarveLife, CheckedCarves, type DeathCause } from './checked.js';
import { ClockGeneration, carryForward, clockLimit, renumber, retire, skipRetired } from './clock.js';
import { InvalidSlabError } from './errors.js';
import { FrameImpl, frameOps } from './frame.js';
import { type KnownCarve, knownCarveOf } from './host.js';
import { alignUp, CarveSize, elementPadding, measureCarve } from './layout.js';
import { type Mark, MarkImpl } from './mark.js';
import { arenaSettings, checkAlignment } from './options.js';
import {
  allocOrder,
  arenaFull,
  type BadMark,
  badMark,
  badRollback,
  closeOrder,
  contended,
  disposedCarve,
  disposeOrder,
  resetOrder,
} from './refusals.js';
import { checkOverlap, hold, readRegion } from './region.js';
import { storageFor } from './registry.js';
import { ReleaseLog } from './release-log.js';
import { Savepoints } from './savepoint.js';
import type { AnyStorage, Slab, SlabKind, SlabStorage, WasmMemory } from './storage.js';
import type {
  ArenaDescription,
  ArenaEvent,
  ArenaFrame,
  ArenaListener,
  ArenaOptions,
  ArenaStorageOptions,
  SlabOf,
  WasmArenaOptions,
} from './types.js';

/**
 * A bump allocator over one preallocated slab of bytes, and a `Space` of kind `K`. See `Arena`
 * (the constructor) for the whole contract.
 *
 * @example
 * ```ts
 * import { Arena } from '@pol/arena';
 * import type { Space } from '@pol/core';
 * const arena: Arena<'host'> = new Arena(new ArrayBuffer(1024));
 * const space: Space<'host'> = arena;
 * ```
 */
export interface Arena<K extends Kind = Kind> extends Space<K> {
  /** The slab it carves from. */
  readonly slab: SlabOf<K>;
  /** The storage that carves the slab. */
  readonly storage: SlabStorage<SlabOf<K>, K>;
  /** Where each carve starts, relative to the region's first byte (the slab's, without a region). */
  readonly alignment: number;
  /** Whether the arena is in checked mode. */
  readonly checked: boolean;
  /** The region's size in bytes (the slab's, without a region). The arena never grows. */
  readonly capacity: number;
  /**
   * Where the arena's region starts in the slab: every offset of the arena (its `offset`, marks,
   * `watermark`) counts from here. 0 for an arena over a whole slab.
   */
  readonly byteOffset: number;
  /** Whether the arena was disposed (see `dispose`). */
  readonly disposed: boolean;
  /** The first free byte. */
  readonly offset: number;
  /** The highest offset ever reached: the measured byte requirement of everything run on it. */
  readonly watermark: number;
  /** How many resets the arena has been through; marks of older epochs are stale. */
  readonly epoch: number;
  /**
   * Carve a `dims`-shaped `dtype` array: round the offset up to the alignment (and the element's),
   * take the next bytes, advance the offset and the watermark.
   *
   * @throws {ArenaFullError} past the end of the slab, changing nothing.
   * @throws {FrameOrderError} while a frame is open on the arena (allocate from the innermost frame).
   */
  alloc<D extends DType>(dtype: D, dims: readonly number[]): ArrayOf<K, D>;
  /** Like `alloc`, but `undefined` instead of `ArenaFullError` when the array does not fit. */
  tryAlloc<D extends DType>(dtype: D, dims: readonly number[]): ArrayOf<K, D> | undefined;
  /** The method form of `mark(arena)`. */
  mark(): Mark;
  /** The method form of `retract(arena, mark)`. */
  retract(mark: Mark): void;
  /** The method form of `reset(arena)`. */
  reset(): void;
  /** The method form of `observe(arena, listener)`. */
  observe(listener: ArenaListener): () => void;
  /** A snapshot of the arena's state. */
  describe(): ArenaDescription<K>;
  /** A one-line summary, such as `Arena(host, 1.0 MiB, offset 4096, watermark 8192, 1 open frame)`. */
  toString(): string;
  /**
   * Give the arena's region back: another arena of this thread may take those bytes from now on, and
   * this one refuses every carve with `DisposedArenaError` (in checked mode its arrays die, as at a
   * reset). Marks, retracts and frames still work, carving nothing. Disposing again does nothing.
   *
   * @throws {FrameOrderError} while a frame is open on the arena (close it first), changing nothing.
   */
  dispose(): void;
  /** `dispose()`, for `using arena = new Arena(...)`. */
  [Symbol.dispose](): void;
  /** Open a frame (what `scratchspace(arena, f)` calls). */
  [openFrameKey](): ArenaFrame<K>;
  /** Take a savepoint before a spec's allocations (what `alloc(arena, spec)` calls). */
  [savepointKey](): unknown;
  /** Undo everything since a savepoint (what a failed `alloc(arena, spec)` calls). */
  [rollbackKey](token: unknown): void;
}

/**
 * The constructor of arenas; its signatures compute an arena's kind from its slab's type.
 *
 * @example
 * ```ts
 * import { Arena, type ArenaConstructor } from '@pol/arena';
 * const make: ArenaConstructor = Arena;
 * const arena = new make(new Uint8Array(256)); // Arena<'host'>
 * ```
 */
export interface ArenaConstructor {
  /**
   * An arena over a slab a registered storage accepts; its kind follows from the slab's type. Over
   * a WebAssembly memory the options are required, with the region's `byteOffset`.
   */
  new <S extends Slab>(
    slab: S,
    ...options: [S] extends [never]
      ? [options?: ArenaOptions]
      : S extends WasmMemory
        ? [options: WasmArenaOptions]
        : [options?: ArenaOptions]
  ): Arena<SlabKind<S>>;
  /** An arena over a slab of the given storage. */
  new <S, K extends Kind>(slab: S, options: ArenaStorageOptions<S, K>): Arena<K>;
  readonly prototype: Arena;
}

/**
 * The arena. Its hot paths (alloc on a cache hit, mark, retract, frame open and close, savepoints)
 * touch only numbers and references it already holds, and allocate nothing once a loop is steady;
 * every refusal is built in `refusals.ts`, after nothing has been changed.
 */
class ArenaImpl<K extends Kind> implements Arena<K> {
  // Messages name values by their class ("got an Arena"): name it as users know it. A static
  // getter, not Object.defineProperty on the class afterwards, which would leave every `instanceof`
  // test of it (the arena's checks of its arguments, on every retract) several times slower in V8.
  static get name(): string {
    return 'Arena';
  }
  readonly [spaceKey]: K;
  readonly slab: SlabOf<K>;
  readonly storage: SlabStorage<SlabOf<K>, K>;
  readonly alignment: number = 1; // a power of two
  readonly checked: boolean;
  readonly capacity: number = 0; // the region's byteLength when the arena was made; never changes
  // Invariant: [byteOffset, byteOffset + capacity) lies in the slab; the storage is only ever called
  // with slab offsets in it (an arena offset plus byteOffset).
  readonly byteOffset: number = 0;
  // The absolute byte offset of region byte 0 in the memory views index; element alignment is absolute.
  readonly #base: number = 0;
  // Set once, by dispose; from then on every carve takes #miss, which refuses it.
  #disposed = false;
  // Gives the region's hold back (an arena made with a region holds it: see region.ts).
  readonly #unhold: (() => void) | undefined;
  // Gives a claimed region of a shared slab back (see shared-slab.ts).
  readonly #unclaim: (() => void) | undefined;

  // The hot path rounds offsets up to #maskUpTo up to the alignment by `(o + #alignAdd) & #alignMask`,
  // read from fields rather than worked out from `alignment` on every carve (see alignUp). #maskUpTo
  // is 2^30 − 1 (or −1, for alignments past 2^30), not 2^30: a small integer, which a field holds
  // unboxed, where 2^30 would be a heap number the hot path had to load through. The numbers the
  // hot path reads start as 0, not undefined: a field that has held undefined keeps its numbers
  // tagged, and every read of one is then checked (see CacheEntry).
  readonly #maskUpTo: number = 0;
  readonly #alignAdd: number = 0;
  readonly #alignMask: number = 0;

  // Invariant: 0 ≤ #offset ≤ capacity; every live carve lies in [0, #offset).
  #offset = 0;
  // Invariant: #watermark = the maximum #offset ever reached; it never decreases, reset included.
  #watermark = 0;
  // Invariant: bumps exactly at reset; marks and savepoints of other epochs are stale.
  #epoch = 0;
  // A logical clock that ticks at every mark, frame open, savepoint and release that lowers the
  // offset, ordering them against each other and against carves (a carve reads the clock without
  // ticking it). Invariant: 0 ≤ #clock < 2^30 (a small integer: see clock.ts); #tick renumbers
  // every reading the arena holds when it passes #clockLast. #generation is the numbering in use.
  #clock = 0;
  // The last reading before a renumbering: 2^30 − 1, a small integer even where they have 31 bits
  // (see #maskUpTo).
  readonly #clockLast = clockLimit() - 1;
  #generation = new ClockGeneration();
  // The numberings this arena retired that some mark may still refer to, weakly.
  readonly #retired: WeakRef<ClockGeneration>[] = [];
  // Invariant: the innermost open frame, or undefined; open frames form a chain through `outer`,
  // and their starts and clocks increase from the outermost to #top.
  #top: FrameImpl<K> | undefined = undefined;
  #depth = 0;
  // Unchecked mode: frame objects by depth, reused (see FrameImpl). Checked mode makes fresh ones.
  readonly #frames: FrameImpl<K>[] = [];
  // The releases since the last reset that decide whether a mark is stale.
  readonly #releases = new ReleaseLog();
  readonly #savepoints = new Savepoints();
  // Unchecked mode: the carve cache, and its first level and window shift for the hot path.
  readonly #cache: CarveCache | undefined;
  readonly #dense: readonly (CacheEntry | undefined)[];
  readonly #shift: number = 0;
  // Checked mode: the lives of live carves.
  readonly #lives: CheckedCarves | undefined;
  #created = 0;
  // Copy-on-write, so a listener may unsubscribe while being notified.
  #listeners: readonly ArenaListener[] = [];
  // Refilled by every slow-path carve.
  readonly #size = new CarveSize();
  // The built-in host storages carve from what #size already knows (see KnownCarve).
  readonly #knownCarve: KnownCarve | undefined;

  constructor(slab: unknown, options?: unknown) {
    const o = arenaSettings(options);
    const storage = o.storage ?? storageFor(slab, 'new Arena(slab)');
    if (o.storage !== undefined && !o.storage.matches(slab)) {
      throw new InvalidSlabError(
        `new Arena: the storage '${o.storage.name}' does not accept ${describeValue(slab)}. Pass a slab it matches, or leave out the storage option.`,
      );
    }
    storage.checkSlab?.(slab as never);
    const alignment = checkAlignment(o.alignment);
    storage.checkAlignment?.(slab as never, alignment);
    const slabLength = storage.byteLength(slab as never);
    const slabBase = storage.byteOffset?.(slab as never) ?? 0;
    if (!Number.isSafeInteger(slabLength) || slabLength < 0 || !Number.isSafeInteger(slabBase) || slabBase < 0) {
      throw new InvalidSlabError(
        `new Arena: the storage '${storage.name}' reports ${slabLength} bytes at byte offset ${slabBase} for ${describeValue(slab)}; both must be non-negative integers.`,
      );
    }
    const region = readRegion(storage, slab, o.byteOffset, o.byteLength, slabLength, slabBase, alignment);
    checkOverlap(storage, slab, region);
    const capacity = region.length;
    const base = slabBase + region.start;
    this[spaceKey] = storage.kind as K;
    this.slab = slab as SlabOf<K>;
    this.storage = storage as unknown as SlabStorage<SlabOf<K>, K>;
    this.alignment = alignment;
    this.#maskUpTo = alignment <= 0x40000000 ? 0x3fffffff : -1;
    this.#alignAdd = alignment - 1;
    this.#alignMask = -alignment;
    this.checked = o.checked;
    this.capacity = capacity;
    this.byteOffset = region.start;
    this.#base = base;
    this.#knownCarve = knownCarveOf(storage);
    if (o.checked) {
      // Two empty slots and the largest shift: every read is in bounds (and of the same kind of
      // array as an unchecked arena's), and finds nothing, so every carve takes the slow path.
      this.#cache = undefined;
      this.#dense = emptyFirstLevel(2);
      this.#shift = 31;
      this.#lives = new CheckedCarves(storage, slab, region.start, (offset) => this.#summary(offset));
    } else {
      const cache = new CarveCache(alignment, capacity);
      this.#cache = cache;
      this.#dense = cache.dense;
      this.#shift = cache.shift;
      this.#lives = undefined;
    }
    // Last, once the arena is whole: a storage whose slab can die keeps `forget` to call then. The
    // closure is made only for such a storage.
    storage.attach?.(slab as never, this as never, () => this.#forget());
    this.#unhold = hold(storage, slab, region, this);
    this.#unclaim = o.claim?.release;
    if (o.claim !== undefined) this.#epoch = o.claim.epoch;
  }

  // The slab died (its storage says so): drop every cached array, so that the next carve at each
  // offset asks the storage again, which refuses a dead slab. A checked arena caches nothing.
  #forget(): void {
    this.#cache?.clear();
  }

  get offset(): number {
    return this.#offset;
  }

  get watermark(): number {
    return this.#watermark;
  }

  get epoch(): number {
    return this.#epoch;
  }

  get disposed(): boolean {
    return this.#disposed;
  }

  dispose(): void {
    if (this.#disposed) return;
    if (this.#top !== undefined) throw disposeOrder(String(this), this.#depth);
    this.#disposed = true;
    // Every carve from now on misses the (empty) cache and is refused in #miss.
    this.#cache?.clear();
    this.#lives?.kill(0, this.#offset, Number.NEGATIVE_INFINITY, 'dispose', this.#epoch);
    this.#unhold?.();
    this.#unclaim?.();
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  // --- allocation ------------------------------------------------------------------------------

  alloc<D extends DType>(dtype: D, dims: readonly number[]): ArrayOf<K, D> {
    if (this.#top !== undefined) throw this.#allocOrder(undefined, dtype, dims);
    return this.#bump(dtype, dims, false) as ArrayOf<K, D>;
  }

  tryAlloc<D extends DType>(dtype: D, dims: readonly number[]): ArrayOf<K, D> | undefined {
    if (this.#top !== undefined) throw this.#allocOrder(undefined, dtype, dims);
    return this.#bump(dtype, dims, true);
  }

  // The fast path: a steady loop repeats its allocation sequence, so the arena-aligned offset
  // usually holds, in its dense slot, a cached array of this very dtype and dims. A cached entry was
  // validated and element-aligned when it was carved at exactly that offset, and the capacity never
  // changes, so a match needs no validation, no dtype lookup, no padding and no bounds check:
  // compare, bump, return. A taken slot that holds another shape sends the lookup to the second
  // level, inline too (shapes that take turns at one offset are a steady loop as well). Anything else
  // is one call to #miss. (A checked arena's dense part is empty, so every carve takes #miss.)
  #bump<D extends DType>(dtype: D, dims: readonly number[], fallible: boolean): ArrayOf<K, D> | undefined {
    const offset = this.#offset;
    const start = offset <= this.#maskUpTo ? (offset + this.#alignAdd) & this.#alignMask : alignUp(offset, this.alignment);
    const first = this.#dense[start >>> this.#shift];
    if (
      first !== undefined &&
      first.start === start &&
      first.dtype === dtype &&
      // The very dims it was carved with (interned dims, as Undef and a verb's plan pass them): no
      // element read, which Node 20 makes through a generic lookup for frozen dims. Else by value.
      (first.dims === dims ||
        (Array.isArray(dims) && // anything else is refused by #miss's validation
          first.rank === dims.length &&
          (first.rank === 1 ? first.d0 === dims[0] : sameDims(first.dims, dims))))
    ) {
      const end = first.end;
      this.#offset = end;
      if (end > this.#watermark) this.#watermark = end;
      return first.array as ArrayOf<K, D>;
    }
    if (first !== undefined) {
      // Another shape at this offset (or another offset in this window): the second level.
      const other = (this.#cache as CarveCache).findBeyond(start, dtype, dims);
      if (other !== undefined) {
        const end = other.end;
        this.#offset = end;
        if (end > this.#watermark) this.#watermark = end;
        return other.array as ArrayOf<K, D>;
      }
    }
    return this.#miss(start, dtype, dims, fallible);
  }

  // Everything the fast path did not find at `aligned`, the arena-aligned start: the second level
  // past 2^32 (which the dense part cannot index; below, an empty dense slot means nothing is cached
  // there, and the fast path looked at a taken one's second level), then the carve.
  //
  // One function, checked mode included, and on purpose larger than V8 inlines (460 bytes of
  // bytecode; this is about 540). When it was small enough to be inlined into a caller's loop, every
  // steady hit in that loop was about a quarter slower once the program had carved for the first
  // time (the loop made room for the calls of a path it never took). Optimized on its own, it has
  // the inlining budget to take in everything a first carve calls: the measurement, the view, its
  // wrapper and the cache entry.
  #miss<D extends DType>(aligned: number, dtype: D, dims: readonly number[], fallible: boolean): ArrayOf<K, D> | undefined {
    if (this.#disposed) throw disposedCarve(String(this), dtype, dims);
    const cache = this.#cache;
    if (cache !== undefined && aligned >= 4294967296) {
      const other = cache.findBeyond(aligned, dtype, dims);
      if (other !== undefined) {
        const end = other.end;
        this.#offset = end;
        if (end > this.#watermark) this.#watermark = end;
        return other.array as ArrayOf<K, D>;
      }
    }
    const size = measureCarve(this.storage as unknown as AnyStorage, dtype, dims, this.#size); // validates
    // JavaScript wants a view's absolute byteOffset to be a multiple of its element size.
    const start = aligned + elementPadding(this.#base, aligned, size.elementAlignment);
    const end = start + size.reserved;
    if (end > this.capacity) {
      if (fallible) return undefined;
      throw this.#full(dtype, dims, start, end);
    }
    const shared = size.dims;
    const storage = this.storage;
    // The storage counts from the slab's first byte, the arena from its region's.
    const at = start + this.byteOffset;
    let array: PolArray;
    if (cache === undefined) {
      // Checked mode: a fresh array every time, with a life.
      const life = new CarveLife(dtype, shared, start, size.bytes, this.#clock);
      array = (
        storage.carveChecked === undefined
          ? storage.carve(this.slab, at, dtype, shared)
          : storage.carveChecked(this.slab, at, dtype, shared, life)
      ) as PolArray;
      this.#created++;
      (this.#lives as CheckedCarves).add(life);
    } else {
      // A padded start is another place, which may hold this very carve.
      const entry = start !== aligned ? cache.find(start, dtype, dims) : undefined;
      if (entry !== undefined) array = entry.array;
      else {
        const known = this.#knownCarve;
        array =
          known !== undefined
            ? known(this.slab, at, dtype, shared, (size.info as DTypeInfo).TypedArray, size.count)
            : (storage.carve(this.slab, at, dtype, shared) as PolArray);
        this.#created++;
        cache.add(new CacheEntry(start, dtype, shared, end, array, size.d0));
      }
    }
    this.#offset = end;
    if (end > this.#watermark) this.#watermark = end;
    return array as ArrayOf<K, D>;
  }

  // --- marks and releases ----------------------------------------------------------------------

  // The clock's next reading. A compare here; the renumbering, once every 2^30 ticks, apart.
  #tick(): number {
    const next = this.#clock + 1;
    if (next <= this.#clockLast) {
      this.#clock = next;
      return next;
    }
    return this.#renumber();
  }

  // Renumber every clock reading the arena holds into 2, 4, 6, … in the same order, start a new
  // generation (leaving in the old one what became of each reading, for marks: see clock.ts), and
  // return the first reading past them all.
  #renumber(): number {
    // The open frames. (A closed frame kept for reuse gets a new reading when it opens again.)
    const readings: number[] = [];
    for (let f = this.#top; f !== undefined; f = f.outer) readings.push(f.clock);
    this.#savepoints.forEach((r) => {
      readings.push(r.clock, r.frameClock);
    });
    this.#releases.readings(readings);
    this.#lives?.readings(readings);
    const held = [...new Set(readings)].filter((r) => r !== 0).sort((a, b) => a - b);
    const to = (reading: number): number => renumber(held, reading);
    for (let f = this.#top; f !== undefined; f = f.outer) f.renumber(to);
    this.#savepoints.forEach((r) => {
      r.clock = to(r.clock);
      r.frameClock = to(r.frameClock);
    });
    this.#releases.renumber(to);
    this.#lives?.renumber(to);
    const old = this.#generation;
    const next = new ClockGeneration();
    retire(old, held, next);
    // Every retired numbering a mark still refers to goes straight to the new one, so that a kept
    // mark holds its own numbering and no chain (the others are collected with their marks).
    const retired = this.#retired;
    let kept = 0;
    for (const ref of retired) {
      const g = ref.deref();
      if (g === undefined) continue;
      skipRetired(g);
      retired[kept++] = ref;
    }
    retired.length = kept;
    retired.push(new WeakRef(old));
    this.#generation = next;
    this.#clock = 2 * held.length + 2;
    return this.#clock;
  }

  mark(): Mark {
    this.#cache?.disarm();
    const clock = this.#tick();
    return new MarkImpl(this as Arena<Kind>, this.#offset, this.#epoch, clock, this.#generation);
  }

  retract(mark: Mark): void {
    const reason = this.#markRefusal(mark);
    if (reason !== undefined) throw this.#badMark(reason, mark);
    const m = mark as unknown as MarkImpl;
    this.#release(m.offset, m.clock, 'retract');
    this.#notify('retract');
  }

  // Why retracting to `m` must be refused, or undefined when it may proceed.
  #markRefusal(m: unknown): BadMark | undefined {
    if (!(m instanceof MarkImpl)) return 'not a mark';
    if (m.arena !== (this as Arena<Kind>)) return 'foreign';
    if (m.epoch !== this.#epoch) return 'older epoch';
    if (m.offset > this.#offset) return 'above offset';
    if (m.generation !== this.#generation) {
      // The clock was renumbered since the mark: carry its reading into today's numbering.
      m.clock = carryForward(m.clock, m.generation, this.#generation);
      m.generation = this.#generation;
    }
    if (this.#releases.wentBelow(m.offset, m.clock)) return 'released';
    if (this.#top !== undefined && m.clock < this.#top.clock) return 'frame order';
    return undefined;
  }

  reset(): void {
    if (this.#top !== undefined) throw resetOrder(String(this), this.#depth);
    const from = this.#offset;
    this.#cache?.disarm();
    this.#lives?.kill(0, from, Number.NEGATIVE_INFINITY, 'reset', this.#epoch);
    this.#epoch++;
    this.#releases.clear();
    this.#offset = 0;
    this.#notify('reset');
  }

  // Move the offset back to `target`, releasing every carve made since `clock`. Validated already.
  #release(target: number, clock: number, cause: DeathCause): void {
    const from = this.#offset;
    this.#cache?.disarm();
    let since = clock;
    if (target < from) {
      const generation = this.#generation;
      const tick = this.#tick();
      // The tick renumbered the clock: `clock`, read before it, in the new numbering.
      if (this.#generation !== generation) since = carryForward(clock, generation, this.#generation);
      this.#releases.record(target, tick);
    }
    this.#lives?.kill(target, from, since, cause, this.#epoch);
    this.#offset = target;
  }

  observe(listener: ArenaListener): () => void {
    if (typeof listener !== 'function') {
      throw new InvalidArgumentError(
        `observe(arena, listener) needs a function, got ${describeValue(listener)}. Pass (event) => { ... }.`,
      );
    }
    this.#listeners = [...this.#listeners, listener];
    let subscribed = true;
    return () => {
      if (!subscribed) return;
      subscribed = false;
      const at = this.#listeners.indexOf(listener);
      if (at >= 0) this.#listeners = this.#listeners.filter((_, i) => i !== at);
    };
  }

  #notify(kind: 'retract' | 'reset'): void {
    const listeners = this.#listeners;
    if (listeners.length === 0) return;
    const event: ArenaEvent = Object.freeze({ kind, offset: this.#offset, epoch: this.#epoch });
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

  // --- frames ----------------------------------------------------------------------------------

  [openFrameKey](): ArenaFrame<K> {
    const top = this.#top;
    // Nesting on the bare arena is for code running inside the innermost frame's block (the same
    // task); anyone else opening a frame now would interleave with its holder.
    if (top !== undefined && ambientspace(this) !== top) throw contended(String(this), String(top));
    return this.#openFrame(this);
  }

  #openFrame(parent: Space<K>): FrameImpl<K> {
    this.#cache?.disarm();
    const depth = this.#depth;
    const clock = this.#tick();
    // The frame object last used at this depth is closed (frames close innermost first): reuse it.
    // Checked mode never reuses a frame, so a kept frame stays closed for good.
    let frame = this.checked ? undefined : this.#frames[depth];
    if (frame !== undefined) frame.reopen(parent, this.#offset, clock, this.#top);
    else {
      frame = new FrameImpl(this, parent, this.#offset, clock, this.#top);
      if (!this.checked) this.#frames[depth] = frame;
    }
    this.#top = frame;
    this.#depth = depth + 1;
    return frame;
  }

  // --- savepoints (atomic spec allocation) -----------------------------------------------------

  [savepointKey](): unknown {
    const record = this.#savepoints.take(this.#depth);
    const cache = this.#cache;
    record.offset = this.#offset;
    record.watermark = this.#watermark;
    record.epoch = this.#epoch;
    record.clock = this.#tick();
    record.frameClock = this.#top === undefined ? 0 : this.#top.clock;
    record.undoFrom = cache === undefined ? 0 : cache.arm();
    record.era = cache === undefined ? 0 : cache.era;
    return record.token;
  }

  [rollbackKey](token: unknown): void {
    const record = this.#savepoints.find(this.#depth, token);
    if (
      record === undefined ||
      record.epoch !== this.#epoch ||
      record.frameClock !== (this.#top === undefined ? 0 : this.#top.clock) ||
      record.offset > this.#offset ||
      // Like a stale mark: a release below it since, and carves there, which it would not release.
      this.#releases.wentBelow(record.offset, record.clock)
    ) {
      throw badRollback(this.#summary(this.#offset), token);
    }
    const moved = record.offset < this.#offset;
    this.#cache?.rollback(record.era, record.undoFrom); // before the release, which disarms the undo log
    this.#release(record.offset, record.clock, 'rollback');
    this.#watermark = record.watermark;
    // A rollback is an internal undo: listeners hear of it only when it released bytes.
    if (moved) this.#notify('retract');
  }

  // --- introspection ---------------------------------------------------------------------------

  describe(): ArenaDescription<K> {
    const marks: number[] = [];
    for (let f = this.#top; f !== undefined; f = f.outer) marks.unshift(f.start);
    return Object.freeze({
      kind: this[spaceKey],
      storage: this.storage.name,
      residency: this.storage.residency,
      capacity: this.capacity,
      byteOffset: this.byteOffset,
      disposed: this.#disposed,
      offset: this.#offset,
      watermark: this.#watermark,
      alignment: this.alignment,
      epoch: this.#epoch,
      checked: this.checked,
      openFrames: this.#depth,
      frameMarks: Object.freeze(marks),
      arraysCreated: this.#created,
    });
  }

  toString(): string {
    return this.#summary(this.#offset);
  }

  #summary(offset: number): string {
    const frames = `${this.#depth} open frame${this.#depth === 1 ? '' : 's'}`;
    return (
      `Arena(${this.storage.residency}, ${formatBytes(this.capacity)}${this.#unhold === undefined ? '' : ` at byte ${this.byteOffset}`}, ` +
      `offset ${offset}, watermark ${this.#watermark}, ${frames}${this.checked ? ', checked' : ''}${this.#disposed ? ', disposed' : ''})`
    );
  }

  // --- refusals, built after nothing has changed ------------------------------------------------

  #full(dtype: DType, dims: readonly number[], start: number, end: number): Error {
    const state = { summary: String(this), offset: this.#offset, watermark: this.#watermark, capacity: this.capacity };
    return arenaFull(state, dtype, dims, start, end);
  }

  #allocOrder(frame: FrameImpl<K> | undefined, dtype: DType, dims: readonly number[]): Error {
    return allocOrder(frame === undefined ? `${this} itself` : String(frame), String(this.#top), dtype, dims);
  }

  #badMark(reason: BadMark, m: unknown): Error {
    const mark = m instanceof MarkImpl ? m : undefined;
    return badMark(reason, String(this), m, {
      markArena: String(mark?.arena),
      markEpoch: mark?.epoch ?? 0,
      epoch: this.#epoch,
      offset: this.#offset,
      top: String(this.#top),
    });
  }

  static {
    frameOps.alloc = <K extends Kind, D extends DType>(
      a: Arena<K>,
      frame: FrameImpl<K>,
      dtype: D,
      dims: readonly number[],
      fallible: boolean,
    ): ArrayOf<K, D> | undefined => {
      const arena = a as ArenaImpl<K>;
      if (arena.#top !== frame) throw arena.#allocOrder(frame, dtype, dims);
      return arena.#bump(dtype, dims, fallible);
    };
    frameOps.open = <K extends Kind>(a: Arena<K>, on: FrameImpl<K>): FrameImpl<K> => {
      const arena = a as ArenaImpl<K>;
      if (arena.#top !== on) throw contended(String(on), String(arena.#top));
      return arena.#openFrame(on);
    };
    frameOps.close = <K extends Kind>(a: Arena<K>, frame: FrameImpl<K>): void => {
      const arena = a as ArenaImpl<K>;
      if (arena.#top !== frame) throw closeOrder(String(frame), String(arena.#top));
      arena.#top = frame.outer;
      arena.#depth--;
      arena.#release(frame.start, frame.clock, 'frame');
    };
    frameOps.notify = (arena: Arena<Kind>, kind: 'retract' | 'reset'): void => (arena as ArenaImpl<Kind>).#notify(kind);
  }
}

function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = n / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

/**
 * A bump allocator over one preallocated slab of bytes, and a `Space`: `alloc` carves typed arrays
 * from the slab; `mark`/`retract`, frames (`scratchspace`) and `reset` release them in bulk; nothing
 * tracks single allocations. The arena never grows, and identical allocation sequences yield
 * identical offsets. Over a host slab (ArrayBuffer, SharedArrayBuffer, Uint8Array or Node.js Buffer,
 * WebAssembly.Memory) it is an `Arena<'host'>` handing out `HostArray`s; over the slab of a storage
 * of kind `K` (see `defineStorage`), an `Arena<K>`.
 *
 * In steady state a carve at the same offset with the same dtype and dims returns the same array
 * object as last time, so a loop that repeats its allocations makes no garbage at all.
 *
 * @throws {InvalidSlabError} for a slab no storage accepts, or one its storage refuses.
 * @throws {InvalidAlignmentError} for an alignment that is not a power of two.
 * @example
 * ```ts
 * import { Arena, mark, retract, watermark } from '@pol/arena';
 * import { alloc, scratchspace } from '@pol/core';
 *
 * const arena = new Arena(new ArrayBuffer(1 << 20)); // Arena<'host'>, alignment 256
 * const out = alloc(arena, 'float32', 1024); // HostArray<'float32'>, lives until retract or reset
 * scratchspace(arena, (frame) => {
 *   const tmp = alloc(frame, 'float64', [32, 32]); // dies when the block exits
 *   tmp.data.fill(1);
 *   out.data[0] = tmp.data.length;
 * });
 * const m = mark(arena);
 * alloc(arena, 'int32', 16);
 * retract(arena, m); // the int32 array is garbage
 * console.log(watermark(arena), String(arena)); // 12288 'Arena(host, 1.0 MiB, offset 4096, watermark 12288, ...)'
 * ```
 */
export const Arena: ArenaConstructor = ArenaImpl as unknown as ArenaConstructor;

/** The arena behind `x` (an arena, or a frame on one), or undefined. */
export function arenaOf(x: unknown): Arena<Kind> | undefined {
  if (x instanceof ArenaImpl) return x as ArenaImpl<Kind>;
  if (x instanceof FrameImpl) return x.arena as Arena<Kind>;
  return undefined;
}

/** Whether `x` is an arena frame. */
export function isArenaFrame(x: unknown): x is ArenaFrame {
  return x instanceof FrameImpl;
}
