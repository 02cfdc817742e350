/**
 * The carve cache of an unchecked arena: the array objects carved at each offset, so that a repeated
 * carve of the same dtype and dims returns the same object; its eviction policy; and its undo log,
 * so that a spec allocation that fails part-way leaves the cache as it was.
 *
 * @module
 */

import type { DType } from '@pol/core';
import { sameDims } from '@pol/core/backend';
import type { CacheEntry } from './cache-entry.js';

/**
 * Windows at most: 65,536, and one slot more for the offset `capacity` itself (a zero-byte carve at
 * the very end). Windows are as wide as the carves are apart (CarveCache.#fittingShift), and the
 * slots are made as carves reach them (FIRST_SLOTS), so a first level holds about a slot per entry,
 * and 512 KiB of pointers at the very most.
 */
const DENSE_WINDOWS = 65_536;
let denseWindows = DENSE_WINDOWS;

/**
 * For tests: give caches made from now on at most `windows` windows (as few as 1), and make them
 * refine their windows once `refineAt` entries are in the table (see REFINE_AT), so that random
 * programs over small slabs rebuild their first level often; returns the settings before. Never
 * called by the package.
 */
export function setDenseLimits(windows: number, refineAt: number): [windows: number, refineAt: number] {
  const before: [number, number] = [denseWindows, refineAtSetting];
  denseWindows = windows;
  refineAtSetting = refineAt;
  return before;
}

/**
 * The slots a new arena's first level starts with: enough for a small arena's every place, and few
 * enough that making an arena costs little (it was 1,025 slots at once: most of an arena's
 * construction). Past them it doubles, on the carve that reaches past its end.
 */
const FIRST_SLOTS = 256;
/** The table entries past which, when they are most of the cache, the windows are made finer if that fits. */
const REFINE_AT = 64;
let refineAtSetting = REFINE_AT;
/** The last start the first level indexes: past it, `>>>` would wrap (those entries live in the table). */
const MOST_DENSE_START = 4294967295;
/** Copied from for first levels of up to this many slots (8 KiB of them, made once). */
const TEMPLATE_SLOTS = 1024;
const emptySlots: readonly undefined[] = new Array<undefined>(TEMPLATE_SLOTS).fill(undefined);

/**
 * A first level of `slots` empty slots: filled with undefined, no holes, so that a read of an empty
 * slot never walks the prototype chain; a copy of a template, about twice as fast as filling a
 * new array, up to the template's size; and always the same kind of array (holey elements, as an
 * array made at its length and filled is), so that the arena's hot path sees one.
 */
export function emptyFirstLevel(slots: number): (CacheEntry | undefined)[] {
  return slots <= TEMPLATE_SLOTS ? emptySlots.slice(0, slots) : new Array<CacheEntry | undefined>(slots).fill(undefined);
}
/** 2^shift for every shift (0 to 31): an array read, where `2 ** shift` calls the power function (a quarter of a first level's remake, measured). */
const POWERS_OF_TWO: readonly number[] = Array.from({ length: 32 }, (_, i) => 2 ** i);

/** The cache's first limit, in entries, and the most it grows to. */
const FIRST_LIMIT = 4096;
const MOST_LIMIT = 1 << 20;
/**
 * Ghost slots: at least 2^18 (a megabyte, made at the first emptying), and 16 per entry of the
 * limit, so that the keys of the last several emptyings are still there when a long cycle comes back.
 */
const FEWEST_GHOSTS = 1 << 18;
const GHOSTS_PER_ENTRY = 16;
/** Cache changes remembered for the armed savepoints; past this a rollback restores everything but cache identity. */
const UNDO_LIMIT = 4096;

/** A 32-bit hash of an offset and dims, for the second level and the ghost table. */
function keyHash(start: number, dims: readonly number[]): number {
  // Small enough to inline for the common 1-D case; other ranks fold every dim in. Lookups hash
  // what the caller passed before it is validated, so anything at all must hash (to no entry).
  return Array.isArray(dims) && dims.length === 1 ? mix(offsetBits(start), dims[0] as number) : keyHashOfRank(start, dims);
}

function keyHashOfRank(start: number, dims: readonly number[]): number {
  let h = offsetBits(start);
  const rank = Array.isArray(dims) ? dims.length : 0;
  for (let i = 0; i < rank; i++) h = mix(h, dims[i] as number);
  return mix(h, rank);
}

// Offsets past 2^32 (slabs over 4 GiB) mix in their high part; below, no division is needed.
function offsetBits(start: number): number {
  return start < 4294967296 ? start | 0 : (start | 0) ^ Math.floor(start / 4294967296);
}

function mix(h: number, x: number): number {
  const m = Math.imul(h ^ Math.imul(x | 0, 0x9e3779b1), 0x85ebca6b);
  return m ^ (m >>> 15);
}

// An entry's key hash, computed when needed: the first level never needs it, so a first carve does
// not pay for it.
function hashOf(entry: CacheEntry): number {
  // A 1-D entry's dim is its carveD0: the hash keyHash makes of its dims, without reading them
  // (frozen dims are read through a slow path on Node.js 20).
  const d0 = entry.carveD0;
  return d0 >= 0 ? mix(offsetBits(entry.carveStart), d0) : keyHash(entry.carveStart, entry.dims);
}

// A ghost is a key hash with its lowest bit set (0 marks an empty slot); its slot ignores that bit,
// so a hash and its ghost land in the same slot.
function ghostOf(hash: number): number {
  return hash | 1;
}
function ghostSlot(hashOrGhost: number, size: number): number {
  return (hashOrGhost >>> 1) & (size - 1);
}

/** Whether `entry` holds `dtype[dims]` at `start`. */
export function matches(entry: CacheEntry, start: number, dtype: DType, dims: readonly number[]): boolean {
  return (
    entry.carveStart === start &&
    entry.dtype === dtype &&
    Array.isArray(dims) &&
    (dims.length === 1 ? entry.carveD0 === dims[0] && entry.carveD0 >= 0 : entry.carveD0 < 0 && sameDims(entry.dims, dims))
  );
}

/**
 * Offset, dtype and dims → the array carved there. Two levels:
 *
 * - `dense`, indexed by `start >>> shift`: the first entry carved in each window of 2^shift bytes.
 *   2^shift starts as the arena's alignment, and follows the carves: when one reaches past the
 *   array's end, the array doubles if the windows are about as wide as the carves are apart, else
 *   it is made again with windows that are (and at most 65,536 of them); when most entries are in
 *   the table, finer windows are tried. A steady loop's carves hit here: one index, then the
 *   entry's own fields.
 * - a hash table keyed by offset and dims, open addressing with linear probing, for every other
 *   entry: more shapes at one offset, more carves in one window, offsets past 2^32.
 *
 * Invariant: the second level holds an entry only in windows whose dense slot is taken (entries go
 * to the dense slot first, and leave in reverse order or all at once), so a carve at an offset never
 * seen looks at one empty slot and stops.
 *
 * Eviction: nothing per offset. The cache holds up to `limit` entries (4,096 at first); the entry
 * past the limit empties it, keeping the emptied keys' hashes as ghosts. A miss on a ghost is a
 * reload: the loop came back for an array the cache threw away. When at least a quarter of the
 * limit's worth of misses since the last emptying were reloads, the loop's working set does not
 * fit, and the limit doubles instead (up to 2^20 entries). So a loop whose shapes cycle ends up with
 * everything cached and allocating nothing (for any cycle of up to about 300,000 arrays: the ghosts
 * of the last several emptyings are kept, 2^18 of them at least), and a program that keeps making
 * new shapes keeps its cache at the first limit, or below 8 times the arrays it does reuse.
 */
export class CarveCache {
  /**
   * The first level. `add` may replace it (a longer copy, or one remade with other windows) or
   * remake it in place, so the arena, which keeps a reference to it and to `shift` for its hot
   * path, takes both again after every `add`.
   * Invariant: it has at most `#mostSlots` slots, and every slot past its end is empty.
   */
  dense: (CacheEntry | undefined)[];
  /** log2 of a window's bytes: the alignment's at first, then as the carves' spacing sets it (see #fittingShift). Taken again by the arena with `dense`. */
  shift: number;
  readonly #capacity: number;
  /** log2 of the alignment: the finest windows. */
  readonly #finest: number;
  /** The most windows, and the table entries that may make them finer (the constants but in tests; see setDenseLimits). */
  readonly #windows: number;
  readonly #refineAt: number;
  /** The slots the first level may grow to at this shift: a window's each up to the capacity, and the end's; 65,537 at most. */
  #mostSlots: number;
  // The second level: a power-of-two table, or empty until the first entry that needs it.
  #table: (CacheEntry | undefined)[] = [];
  #tableCount = 0;
  #count = 0; // entries in both levels
  #limit = FIRST_LIMIT;
  // Hashes of emptied-out keys (direct-mapped; 0 is empty), and the reloads since the last emptying.
  #ghosts: Int32Array | undefined;
  #reloads = 0;
  // The undo log: entries added since the armed savepoints, oldest first. Disarmed by any operation
  // a rollback cannot span; `era` counts the disarmings, so a savepoint knows whether its log is still
  // the current one.
  readonly #undo: (CacheEntry | undefined)[] = [];
  #undoLength = 0;
  #armed = false;
  #overflow = false;
  #era = 0;

  /** A cache for offsets 0 to `capacity` that are multiples of `alignment` (a power of two), or padded past one. */
  constructor(alignment: number, capacity: number, firstLimit = FIRST_LIMIT) {
    // Math.clz32 reads its argument as 32 bits: alignments of 2^31 and more take the largest shift.
    this.shift = alignment >= 2 ** 31 ? 31 : 31 - Math.clz32(alignment);
    this.#finest = this.shift;
    this.#capacity = capacity;
    this.#windows = denseWindows;
    this.#refineAt = refineAtSetting;
    this.#mostSlots = this.#mostSlotsAt(this.shift);
    this.dense = emptyFirstLevel(Math.min(this.#mostSlots, FIRST_SLOTS));
    this.#limit = firstLimit;
  }

  /** How many entries it holds. */
  get size(): number {
    return this.#count;
  }

  /** How many entries it may hold before the next one empties it (or doubles this). */
  get limit(): number {
    return this.#limit;
  }

  /** The entry for `dtype[dims]` at `start`, if one is cached. */
  find(start: number, dtype: DType, dims: readonly number[]): CacheEntry | undefined {
    const slot = this.#slot(start);
    if (slot >= 0) {
      const first = this.dense[slot];
      if (first === undefined) return undefined;
      if (matches(first, start, dtype, dims)) return first;
    }
    return this.findBeyond(start, dtype, dims);
  }

  /**
   * The entry for `dtype[dims]` at `start` in the second level: for a caller that found the dense
   * slot of `start` taken by another entry (or `start` past 2^32, which the dense part cannot index).
   */
  findBeyond(start: number, dtype: DType, dims: readonly number[]): CacheEntry | undefined {
    if (this.#tableCount === 0) return undefined;
    const table = this.#table;
    const mask = table.length - 1;
    if (!Array.isArray(dims) || dims.length !== 1) return this.#findInTable(table, mask, start, dtype, dims);
    // The 1-D case, spelled out so that it stays inline in the arena's hot path.
    const d0 = dims[0];
    for (let i = mix(offsetBits(start), d0 as number) & mask; ; i = (i + 1) & mask) {
      const entry = table[i];
      if (entry === undefined) return undefined;
      if (entry.carveStart === start && entry.carveD0 === d0 && entry.carveD0 >= 0 && entry.dtype === dtype) return entry;
    }
  }

  /** Cache `entry`, for a key `find` found nothing for. May empty the cache first (see the class). */
  add(entry: CacheEntry): void {
    // The common case, a first carve into an empty window with nothing to remember, takes a slot.
    const start = entry.carveStart;
    if (this.#count < this.#limit && !this.#armed && this.#ghosts === undefined && start < 4294967296) {
      const slot = start >>> this.shift;
      const dense = this.dense;
      if (slot < dense.length && dense[slot] === undefined) {
        dense[slot] = entry;
        this.#count++;
        return;
      }
    }
    this.#addAnywhere(entry);
  }

  #addAnywhere(entry: CacheEntry): void {
    if (this.#count >= this.#limit) this.#full();
    const ghosts = this.#ghosts;
    if (ghosts !== undefined) {
      const hash = hashOf(entry);
      if (ghosts[ghostSlot(hash, ghosts.length)] === ghostOf(hash)) this.#reloads++;
    }
    const start = entry.carveStart;
    let slot = this.#slot(start);
    if (slot >= this.dense.length) slot = this.#reach(start, slot);
    // Bound for the table, with most entries there already: windows wider than the carves are
    // apart (a large carve came first, and set them), made finer if that fits.
    if (
      slot >= 0 &&
      this.dense[slot] !== undefined &&
      this.shift > this.#finest &&
      this.#tableCount >= this.#refineAt &&
      this.#tableCount * 2 > this.#count
    ) {
      // Every entry below 2^32 starts before the first level's end (and below 2^32, which `>>>`
      // would wrap to 0).
      const furthest = Math.min(MOST_DENSE_START, Math.max(start, this.dense.length * (POWERS_OF_TWO[this.shift] as number) - 1));
      const finer = this.#fittingShift(furthest);
      if (finer < this.shift) this.#rebuild(finer, furthest);
    }
    this.#place(entry);
    this.#count++;
    if (this.#armed && !this.#overflow) {
      if (this.#undoLength === UNDO_LIMIT) this.#overflow = true;
      else this.#undo[this.#undoLength++] = entry;
    }
  }

  /**
   * Drop every entry: the slab died, and no array cached over it may be handed out again. Disarms
   * the undo log (a savepoint taken before then restores everything but the cache's identity), and
   * keeps the ghosts and the limit, which describe the loop rather than the slab.
   */
  clear(): void {
    this.disarm();
    this.dense.fill(undefined);
    this.#table = [];
    this.#tableCount = 0;
    this.#count = 0;
    this.#reloads = 0;
  }

  // --- the undo log ----------------------------------------------------------------------------

  /**
   * Start (or keep) remembering added entries, for a savepoint. Returns where this savepoint's part
   * of the log starts; `era` tells the savepoint's log apart from later ones.
   */
  arm(): number {
    if (!this.#armed || this.#overflow) {
      // A log that overflowed can restore nothing: start a new one, in a new era.
      if (this.#armed) this.disarm();
      this.#armed = true;
      this.#overflow = false;
    }
    return this.#undoLength;
  }

  /** Which log `arm` appends to: it changes at every disarm. */
  get era(): number {
    return this.#era;
  }

  /** Stop remembering: an operation a rollback cannot span (a mark, a frame, a release) happened. */
  disarm(): void {
    if (!this.#armed) return;
    this.#armed = false;
    this.#era++;
    // Drop the references, keep the capacity. A loop, not `fill`: the log is almost always empty
    // here (a verb's savepoint arms it, and its frame's open disarms it with nothing carved in
    // between), and a call of the `fill` builtin costs more than that whole savepoint.
    const undo = this.#undo;
    for (let i = this.#undoLength - 1; i >= 0; i--) undo[i] = undefined;
    this.#undoLength = 0;
  }

  /**
   * Remove every entry added since the savepoint that armed at `from` in `era`, if that log is still
   * armed and complete; otherwise leave the cache as it is (the rollback then restores everything
   * but the cache's identity).
   */
  rollback(era: number, from: number): void {
    if (!this.#armed || era !== this.#era || this.#overflow || from > this.#undoLength) return;
    const undo = this.#undo;
    for (let i = this.#undoLength - 1; i >= from; i--) {
      this.#remove(undo[i] as CacheEntry);
      undo[i] = undefined;
    }
    this.#undoLength = from;
  }

  // --- levels ----------------------------------------------------------------------------------

  // A first level with room for the slot of `start` (`slot` at the current shift, past the end of
  // the first level), with windows about as wide as the carves are apart: doubled, when the
  // windows fit; else made again with the windows that do (see #fittingShift). So it holds about
  // one slot per entry, however far apart the carves are: with a slot per aligned place, an arena
  // of carves of 1,024 floats made 16 slots a carve, and copies of them as it grew, more bytes than
  // the entry and its view. Returns the slot of `start` after.
  #reach(start: number, slot: number): number {
    const shift = this.#fittingShift(start);
    if (shift !== this.shift) {
      this.#rebuild(shift, start);
      return this.#slot(start);
    }
    const old = this.dense;
    let length = old.length * 2;
    while (length <= slot) length *= 2;
    const dense = emptyFirstLevel(Math.min(length, this.#mostSlots));
    for (let i = 0; i < old.length; i++) dense[i] = old[i];
    this.dense = dense;
    return slot;
  }

  // The windows for the cached carves, spread up to `furthest` (below 2^32): a power of two no
  // wider than their average spacing, no finer than the alignment, and coarse enough that
  // `furthest` is within the most windows. (#reach passes the carve past the first level's end,
  // which is further than every entry below 2^32: they are all before that end.) The spacing is
  // `furthest` over the entries, not over the entries and one: n carves from 0 and the one at
  // `furthest` are n gaps apart. Over n + 1, carves exactly a power of two apart got windows of half
  // that, two slots a carve, and a first level that doubled once more per pass.
  #fittingShift(furthest: number): number {
    const spacing = Math.floor(furthest / Math.max(1, this.#count));
    let shift = spacing >= 2 ** 31 ? 31 : Math.max(this.#finest, 31 - Math.clz32(spacing));
    while (shift < 31 && furthest >>> shift >= this.#windows) shift++;
    return shift;
  }

  // Windows of 2^shift bytes, and every entry put again where they send it, in an order that keeps
  // a rollback exact: the entries an armed savepoint may remove (the undo log's) last, oldest first,
  // so that in each window the dense slot holds one no rollback removes, or the log's oldest of
  // that window, which a rollback removes after the others (newest first). `furthest` is below
  // 2^32 and at least the start of every entry below 2^32: both callers pass a start at or past the
  // old first level's end, or that end's last byte.
  #rebuild(shift: number, furthest: number): void {
    const oldDense = this.dense;
    const oldTable = this.#table;
    const oldShift = this.shift;
    // (A set only when there is a log to order by: a first pass remakes its level with none.)
    const logged = this.#armed && !this.#overflow && this.#undoLength > 0 ? new Set<CacheEntry>() : undefined;
    if (logged !== undefined) for (let i = 0; i < this.#undoLength; i++) logged.add(this.#undo[i] as CacheEntry);
    this.shift = shift;
    this.#mostSlots = this.#mostSlotsAt(shift);
    // Room up to the furthest slot, doubled from the first size as #reach grows it.
    let length = FIRST_SLOTS;
    while (length <= furthest >>> shift) length *= 2;
    const slots = Math.min(length, this.#mostSlots);
    // Coarser windows that need no more slots than the level has (a first pass of carves many
    // places apart, at its first carve past the first 256 windows) move the entries within it, with
    // no new array: copying a template of 256 slots costs half as much again as the rest of the remake.
    // Each entry's new slot is at or below its old one, and every slot below was visited (emptied,
    // and filled again only by an entry placed before this one), so no entry is written over
    // before it is read. The level keeps its length, within the slots this shift allows.
    const inPlace = shift > oldShift && slots <= oldDense.length && oldDense.length <= this.#mostSlots;
    this.dense = inPlace ? oldDense : emptyFirstLevel(slots);
    this.#table = [];
    this.#tableCount = 0;
    for (let i = 0; i < oldDense.length; i++) {
      const entry = oldDense[i];
      if (entry === undefined) continue;
      if (inPlace) oldDense[i] = undefined;
      if (logged?.has(entry) !== true) this.#place(entry);
    }
    for (let i = 0; i < oldTable.length; i++) {
      const entry = oldTable[i];
      if (entry !== undefined && logged?.has(entry) !== true) this.#place(entry);
    }
    if (logged !== undefined) for (const entry of logged) this.#place(entry);
  }

  // The slots a first level of windows of 2^shift bytes may have: one per window up to the
  // capacity, and the capacity's own (a zero-byte carve at the very end), at most the most windows.
  #mostSlotsAt(shift: number): number {
    return Math.min(this.#windows + 1, Math.floor(this.#capacity / (POWERS_OF_TWO[shift] as number)) + 1);
  }

  // An entry put where the current windows send it: its dense slot if free, else the table.
  #place(entry: CacheEntry): void {
    const slot = this.#slot(entry.carveStart);
    const dense = this.dense;
    if (slot >= 0 && slot < dense.length && dense[slot] === undefined) dense[slot] = entry;
    else this.#insert(entry);
  }

  // The dense slot of `start`, or -1 past 2^32 (where `>>>` would wrap).
  #slot(start: number): number {
    return start < 4294967296 ? start >>> this.shift : -1;
  }

  #findInTable(
    table: readonly (CacheEntry | undefined)[],
    mask: number,
    start: number,
    dtype: DType,
    dims: readonly number[],
  ): CacheEntry | undefined {
    for (let i = keyHash(start, dims) & mask; ; i = (i + 1) & mask) {
      const entry = table[i];
      if (entry === undefined) return undefined;
      if (matches(entry, start, dtype, dims)) return entry;
    }
  }

  #insert(entry: CacheEntry): void {
    if ((this.#tableCount + 1) * 2 > this.#table.length) this.#grow(); // at most half full: short probes
    const table = this.#table;
    const mask = table.length - 1;
    let i = hashOf(entry) & mask;
    while (table[i] !== undefined) i = (i + 1) & mask;
    table[i] = entry;
    this.#tableCount++;
  }

  #grow(): void {
    const old = this.#table;
    // Made at its size and filled, not pushed to: an array grown by pushes reallocates its store
    // as it goes (about three times its size in all), the bulk of a first pass's bytes per carve
    // when most carves land here (many small carves per window of a large slab).
    const table = new Array<CacheEntry | undefined>(Math.max(16, old.length * 2)).fill(undefined);
    this.#table = table;
    const mask = table.length - 1;
    for (const entry of old) {
      if (entry === undefined) continue;
      let i = hashOf(entry) & mask;
      while (table[i] !== undefined) i = (i + 1) & mask;
      table[i] = entry;
    }
  }

  #remove(entry: CacheEntry): void {
    this.#count--;
    const slot = this.#slot(entry.carveStart);
    if (slot >= 0 && this.dense[slot] === entry) {
      this.dense[slot] = undefined;
      return;
    }
    // Backward-shift deletion keeps every probe sequence unbroken without tombstones.
    const table = this.#table;
    const mask = table.length - 1;
    let hole = hashOf(entry) & mask;
    while (table[hole] !== entry) hole = (hole + 1) & mask;
    for (let i = (hole + 1) & mask; ; i = (i + 1) & mask) {
      const next = table[i];
      if (next === undefined) break;
      const home = hashOf(next) & mask;
      // `next` may move back into the hole unless its home lies cyclically in (hole, i].
      const stays = hole <= i ? hole < home && home <= i : hole < home || home <= i;
      if (stays) continue;
      table[hole] = next;
      hole = i;
    }
    table[hole] = undefined;
    this.#tableCount--;
  }

  // The limit is reached: double it if a quarter of the misses since the last emptying were reloads
  // (the loop came back for what the cache threw away), else empty the cache, keeping the keys as
  // ghosts. Never while an armed savepoint could
  // still ask for an exact rollback: the cache then runs past its limit, by at most the undo log.
  #full(): void {
    if (this.#armed && !this.#overflow) return;
    if (this.#reloads * 4 >= this.#limit && this.#limit < MOST_LIMIT) {
      this.#limit *= 2;
      this.#reloads = 0;
      return;
    }
    let ghosts = this.#ghosts;
    const size = Math.max(FEWEST_GHOSTS, this.#limit * GHOSTS_PER_ENTRY);
    if (ghosts === undefined || ghosts.length < size) {
      const bigger = new Int32Array(size);
      if (ghosts !== undefined) for (const g of ghosts) if (g !== 0) bigger[ghostSlot(g, size)] = g;
      ghosts = bigger;
      this.#ghosts = ghosts;
    }
    emptyInto(this.dense, ghosts);
    emptyInto(this.#table, ghosts);
    this.#tableCount = 0;
    this.#count = 0;
    this.#reloads = 0;
  }
}

// Empty every slot of `slots`, keeping the key of each entry in it as a ghost.
function emptyInto(slots: (CacheEntry | undefined)[], ghosts: Int32Array): void {
  for (let i = 0; i < slots.length; i++) {
    const entry = slots[i];
    if (entry === undefined) continue;
    const hash = hashOf(entry);
    ghosts[ghostSlot(hash, ghosts.length)] = ghostOf(hash);
    slots[i] = undefined;
  }
}
