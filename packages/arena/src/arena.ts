/// <reference lib="esnext.disposable" preserve="true" />
/**
 * The arena: `ArenaImpl`, its state (offset, watermark, epoch, clock, open frames) and the carve
 * path's fast and slow halves, with the releases that move its offset back; the `Arena` constructor
 * and its type. What else an arena does lives with its concept, reached with explicit arguments:
 * marks (`mark.ts`), frames (`frame.ts`, through the methods of `FrameOwner`), savepoints, the
 * clock's renumbering, listeners and introspection, each in its own module.
 *
 * @module
 */

import { type ArrayOf, ambientspace, type DType, type DTypeInfo, type Kind, type PolArray, type Space } from '@pol/core';
import { allocLengthKey, internDim, openFrameKey, rollbackKey, sameDims, savepointKey, spaceKey } from '@pol/core/backend';
import { arrayOf, CacheEntry } from './cache-entry.js';
import { CarveCache, emptyFirstLevel } from './carve-cache.js';
import { CarveLife, CheckedCarves, type DeathCause } from './checked.js';
import { ClockGeneration, carryForward, clockLimit, renumberClock } from './clock.js';
import {
  FrameImpl,
  type FrameOwner,
  frameCarveKey,
  frameCarveLengthKey,
  frameClosedKey,
  frameCloseKey,
  frameOpenKey,
} from './frame.js';
import { viewBufferOf, viewOver } from './host.js';
import { describeArena, summary } from './introspection.js';
import { alignUp, CarveSize, elementPadding, measureCarve } from './layout.js';
import { type ArenaListener, Listeners } from './listeners.js';
import { type Mark, MarkImpl, markRefusal, markRefused } from './mark.js';
import { arenaArguments } from './options.js';
import {
  allocOrder,
  arenaFull,
  badRollback,
  closeOrder,
  contended,
  disposedCarve,
  disposeOrder,
  resetOrder,
} from './refusals.js';
import { hold } from './region.js';
import { ReleaseLog } from './release-log.js';
import { Savepoints } from './savepoint.js';
import type { SlabOf } from './slab.js';
import { carvedBy } from './storage.js';
import type { AnyStorage, ArenaConstructor, ArenaDescription, ArenaFrame, Arena as ArenaType, SlabStorage } from './types.js';

/**
 * The type of arenas: the `Arena` interface of `types.ts`, named here too so that `Arena` is one
 * export, the type beside its constructor. (Documented as that interface, members and all.)
 *
 * @interface
 */
export type Arena<K extends Kind = Kind> = ArenaType<K>;

/**
 * The arena. Its hot paths (alloc on a cache hit, mark, retract, frame open and close, savepoints)
 * touch only numbers and references it already holds, and allocate nothing once a loop is steady;
 * every refusal is built in `refusals.ts`, after nothing has been changed. It is the owner of every
 * frame it opens (see {@link FrameOwner}).
 */
class ArenaImpl<K extends Kind> implements Arena<K>, FrameOwner<K> {
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
  // Unchecked mode: the carve cache, and its first level and window shift for the hot path, taken
  // again after every add, which may change both (see CarveCache.dense).
  readonly #cache: CarveCache | undefined;
  #dense: readonly (CacheEntry | undefined)[];
  #shift: number = 0;
  // Checked mode: the lives of live carves.
  readonly #lives: CheckedCarves | undefined;
  #created = 0;
  // Made by the first observe: an arena nobody observes pays one load per release.
  #listeners: Listeners | undefined = undefined;
  // Refilled by every slow-path carve.
  readonly #size = new CarveSize();
  // A built-in host storage's buffer, which the arena views itself from what #size already knows
  // (see viewBufferOf); undefined for any other storage, which carves through its `carve`.
  readonly #viewBuffer: ArrayBufferLike | undefined;
  // Whether a carve may take the lean path of #miss: unchecked, not disposed, and over a #viewBuffer.
  #lean = false;

  constructor(slab: unknown, options?: unknown) {
    const { storage, alignment, checked, region, base, claim } = arenaArguments(slab, options);
    const capacity = region.length;
    this[spaceKey] = storage.kind as K;
    this.slab = slab as SlabOf<K>;
    this.storage = storage as unknown as SlabStorage<SlabOf<K>, K>;
    this.alignment = alignment;
    this.#maskUpTo = alignment <= 0x40000000 ? 0x3fffffff : -1;
    this.#alignAdd = alignment - 1;
    this.#alignMask = -alignment;
    this.checked = checked;
    this.capacity = capacity;
    this.byteOffset = region.start;
    this.#base = base;
    this.#viewBuffer = viewBufferOf(storage, slab);
    if (checked) {
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
      this.#lean = this.#viewBuffer !== undefined;
    }
    // Last, once the arena is whole: a storage whose slab can die keeps `forget` to call then. The
    // closure is made only for such a storage.
    storage.attach?.(slab as never, this as never, () => this.#forget());
    this.#unhold = hold(storage, slab, region, this);
    this.#unclaim = claim?.release;
    if (claim !== undefined) this.#epoch = claim.epoch;
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
    this.#lean = false;
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

  // What core's alloc(arena, dtype, n) calls (see allocLengthKey): the carve validates the dtype and
  // the size itself, on a miss, so core's own checks would be a second pass over the same.
  [allocLengthKey]<D extends DType>(dtype: D, length: number): ArrayOf<K, D> {
    if (this.#top !== undefined) throw this.#allocOrder(undefined, dtype, [length]);
    return this.#bumpLength(dtype, length);
  }

  // #bump for a 1-D carve given by its length: a hit compares the length with the entry's first dim
  // (-1 for every other rank, so `length >= 0` keeps a caller's -1 from matching one), with no dims
  // array to read. A miss takes the dims #miss needs from internDim, which refuses what is no length.
  #bumpLength<D extends DType>(dtype: D, length: number): ArrayOf<K, D> {
    const offset = this.#offset;
    const start = offset <= this.#maskUpTo ? (offset + this.#alignAdd) & this.#alignMask : alignUp(offset, this.alignment);
    const first = this.#dense[start >>> this.#shift];
    if (first !== undefined && first.carveStart === start && first.dtype === dtype && first.carveD0 === length && length >= 0) {
      const end = first.carveEnd;
      this.#offset = end;
      if (end > this.#watermark) this.#watermark = end;
      const array = first.carveArray;
      return (array === undefined ? first : array) as ArrayOf<K, D>;
    }
    // An empty slot: a place never carved, straight to #miss. A taken one: the second level first.
    const dims = internDim(length);
    return (first === undefined ? this.#miss(start, dtype, dims, false) : this.#bump(dtype, dims, false)) as ArrayOf<K, D>;
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
      first.carveStart === start &&
      first.dtype === dtype &&
      // The very dims it was carved with (interned dims, as Undef and a verb's plan pass them): no
      // element read, which Node 20 makes through a generic lookup for frozen dims. Else by value.
      (first.dims === dims ||
        (Array.isArray(dims) && // anything else is refused by #miss's validation
          (dims.length === 1
            ? first.carveD0 === dims[0] && first.carveD0 >= 0
            : first.carveD0 < 0 && sameDims(first.dims, dims))))
    ) {
      const end = first.carveEnd;
      this.#offset = end;
      if (end > this.#watermark) this.#watermark = end;
      // The entry is the array of a host storage's carve (see CacheEntry).
      const array = first.carveArray;
      return (array === undefined ? first : array) as ArrayOf<K, D>;
    }
    if (first !== undefined) {
      // Another shape at this offset (or another offset in this window): the second level.
      const other = (this.#cache as CarveCache).findBeyond(start, dtype, dims);
      if (other !== undefined) {
        const end = other.carveEnd;
        this.#offset = end;
        if (end > this.#watermark) this.#watermark = end;
        const array = other.carveArray;
        return (array === undefined ? other : array) as ArrayOf<K, D>;
      }
    }
    return this.#miss(start, dtype, dims, fallible);
  }

  // Everything the fast path did not find at `aligned`, the arena-aligned start.
  //
  // First the lean path: a new array over a built-in host storage's buffer, of the shape measured last
  // or one that measures now, that needs no padding and fits. It is what a first pass is made of
  // (every carve at a place not seen before), and the fewest steps that do its work: measure, view,
  // make the entry (which is the array: see CacheEntry), cache it, bump. Everything else takes the
  // general path below: checked mode, other storages, padding, offsets past 2^30 (and every offset
  // of an alignment past 2^30), a full arena, the disposed arena's refusal (dispose clears #lean).
  //
  // One function, both paths, and on purpose larger than V8 inlines (460 bytes of bytecode). When
  // it was small enough to be inlined into a caller's loop, every steady hit in that loop was about a
  // quarter slower once the program had carved for the first time (the loop made room for the calls
  // of a path it never took). Optimized on its own, it has the inlining budget to take in everything
  // a first carve calls: the measurement, the view and the entry. The lean path stands apart from
  // the general one, not merged into it, so that a first carve does not run the general path's
  // branches (measured under Valgrind: a tenth fewer instructions per first carve).
  #miss<D extends DType>(aligned: number, dtype: D, dims: readonly number[], fallible: boolean): ArrayOf<K, D> | undefined {
    // Below 2^30 (#maskUpTo, a small integer): an integer compare, and an index the dense part takes.
    if (this.#lean === true && aligned <= this.#maskUpTo) {
      const size = measureCarve(this.storage as unknown as AnyStorage, dtype, dims, this.#size); // validates
      const end = aligned + size.reserved;
      const at = this.#base + aligned;
      // A mask, not `%`: the element sizes are powers of two, and `&` keeps the low bits of any safe integer.
      if (end <= this.capacity && (at & (size.elementAlignment - 1)) === 0) {
        const view = viewOver((size.info as DTypeInfo).TypedArray, this.#viewBuffer as ArrayBufferLike, at, size.count);
        const array = new CacheEntry<DType>(aligned, dtype, size.dims, end, undefined, size.rank === 1 ? size.d0 : -1, view);
        this.#created++;
        const cache = this.#cache as CarveCache;
        cache.add(array);
        this.#dense = cache.dense;
        this.#shift = cache.shift;
        this.#offset = end;
        if (end > this.#watermark) this.#watermark = end;
        return array as unknown as ArrayOf<K, D>;
      }
    }
    // The general path.
    if (this.#disposed) throw disposedCarve(String(this), dtype, dims);
    const cache = this.#cache;
    if (cache !== undefined && aligned >= 4294967296) {
      const other = cache.findBeyond(aligned, dtype, dims);
      if (other !== undefined) {
        const end = other.carveEnd;
        this.#offset = end;
        if (end > this.#watermark) this.#watermark = end;
        return arrayOf(other) as ArrayOf<K, D>;
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
      if (entry !== undefined) array = arrayOf(entry);
      else {
        const buffer = this.#viewBuffer;
        const d0 = size.rank === 1 ? size.d0 : -1;
        // A host storage's entry is its array (see CacheEntry); any other storage's is apart.
        const added =
          buffer !== undefined
            ? new CacheEntry<DType>(
                start,
                dtype,
                shared,
                end,
                undefined,
                d0,
                viewOver((size.info as DTypeInfo).TypedArray, buffer, this.#base + start, size.count),
              )
            : new CacheEntry(start, dtype, shared, end, carvedBy(storage, storage.carve(this.slab, at, dtype, shared)), d0);
        array = arrayOf(added);
        this.#created++;
        cache.add(added);
        this.#dense = cache.dense;
        this.#shift = cache.shift;
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

  // Renumber every clock reading the arena holds (see clock.ts) and return the first reading past
  // them all. The open frames hold readings from #top out; a closed frame kept for reuse gets a new
  // reading when it opens again.
  #renumber(): number {
    const next = renumberClock(this.#generation, this.#retired, [this.#top, this.#savepoints, this.#releases, this.#lives]);
    this.#generation = next.generation;
    this.#clock = next.clock;
    return next.clock;
  }

  mark(): Mark {
    this.#cache?.disarm();
    const clock = this.#tick();
    return new MarkImpl(this, this.#offset, this.#epoch, clock, this.#generation);
  }

  retract(mark: Mark): void {
    const reason = markRefusal(mark, this, this.#epoch, this.#offset, this.#generation, this.#releases, this.#frameClock());
    if (reason !== undefined) throw markRefused(reason, String(this), mark, this.#epoch, this.#offset, String(this.#top));
    const m = mark as unknown as MarkImpl;
    this.#release(m.offset, m.clock, 'retract');
    this.#listeners?.notify('retract', this.#offset, this.#epoch);
  }

  reset(): void {
    if (this.#top !== undefined) throw resetOrder(String(this), this.#depth);
    const from = this.#offset;
    this.#cache?.disarm();
    this.#lives?.kill(0, from, Number.NEGATIVE_INFINITY, 'reset', this.#epoch);
    this.#epoch++;
    this.#releases.clear();
    this.#offset = 0;
    this.#listeners?.notify('reset', this.#offset, this.#epoch);
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
    const listeners = this.#listeners ?? new Listeners();
    const unsubscribe = listeners.add(listener); // refuses a listener that is not a function
    this.#listeners = listeners;
    return unsubscribe;
  }

  // --- frames: this arena is the FrameOwner of each frame it opens --------------------------------

  [openFrameKey](): ArenaFrame<K> {
    const top = this.#top;
    // Nesting on the bare arena is for code running inside the innermost frame's block (the same
    // task); anyone else opening a frame now would interleave with its holder.
    if (top !== undefined && ambientspace(this) !== top) throw contended(String(this), String(top));
    return this.#openFrame(this);
  }

  [frameOpenKey](on: FrameImpl<K>): FrameImpl<K> {
    if (this.#top !== on) throw contended(String(on), String(this.#top));
    return this.#openFrame(on);
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

  [frameCarveKey]<D extends DType>(
    frame: FrameImpl<K>,
    dtype: D,
    dims: readonly number[],
    fallible: boolean,
  ): ArrayOf<K, D> | undefined {
    if (this.#top !== frame) throw this.#allocOrder(frame, dtype, dims);
    return this.#bump(dtype, dims, fallible);
  }

  [frameCarveLengthKey]<D extends DType>(frame: FrameImpl<K>, dtype: D, length: number): ArrayOf<K, D> {
    if (this.#top !== frame) throw this.#allocOrder(frame, dtype, [length]);
    return this.#bumpLength(dtype, length);
  }

  [frameCloseKey](frame: FrameImpl<K>): void {
    if (this.#top !== frame) throw closeOrder(String(frame), String(this.#top));
    this.#top = frame.outer;
    this.#depth--;
    this.#release(frame.start, frame.clock, 'frame');
  }

  [frameClosedKey](): void {
    this.#listeners?.notify('retract', this.#offset, this.#epoch);
  }

  // --- savepoints (atomic spec allocation: see savepoint.ts) ------------------------------------

  [savepointKey](): unknown {
    const clock = this.#tick(); // before the frame's clock is read: a renumbering changes it
    return this.#savepoints.take(this.#depth, this.#offset, this.#watermark, this.#epoch, clock, this.#frameClock(), this.#cache);
  }

  [rollbackKey](token: unknown): void {
    const record = this.#savepoints.find(this.#depth, token, this.#epoch, this.#frameClock(), this.#offset, this.#releases);
    if (record === undefined) throw badRollback(this.#summary(this.#offset), token);
    const moved = record.offset < this.#offset;
    this.#cache?.rollback(record.era, record.undoFrom); // before the release, which disarms the undo log
    this.#release(record.offset, record.clock, 'rollback');
    this.#watermark = record.watermark;
    // A rollback is an internal undo: listeners hear of it only when it released bytes.
    if (moved) this.#listeners?.notify('retract', this.#offset, this.#epoch);
  }

  // The clock of the innermost open frame, or 0 without one: what marks and savepoints are ordered
  // against (one taken before the frame opened cannot be retracted or rolled back to inside it).
  #frameClock(): number {
    const top = this.#top;
    return top === undefined ? 0 : top.clock;
  }

  // --- introspection (see introspection.ts) -----------------------------------------------------

  describe(): ArenaDescription<K> {
    return describeArena(this, this.#top === undefined ? [] : this.#top.starts(), this.#created);
  }

  toString(): string {
    return this.#summary(this.#offset);
  }

  #summary(offset: number): string {
    return summary(this.describe(), this.#unhold !== undefined, offset);
  }

  // --- refusals, built after nothing has changed ------------------------------------------------

  #full(dtype: DType, dims: readonly number[], start: number, end: number): Error {
    const state = { summary: String(this), offset: this.#offset, watermark: this.#watermark, capacity: this.capacity };
    return arenaFull(state, dtype, dims, start, end);
  }

  #allocOrder(frame: FrameImpl<K> | undefined, dtype: DType, dims: readonly number[]): Error {
    return allocOrder(frame === undefined ? `${this} itself` : String(frame), String(this.#top), dtype, dims);
  }
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
