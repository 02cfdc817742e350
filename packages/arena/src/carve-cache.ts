/**
 * The carve cache of an unchecked arena: the array objects carved at each offset, so that a repeated
 * carve of the same dtype and dims returns the same object; and its undo log, so that a spec
 * allocation that fails part-way leaves the cache as it was.
 *
 * @module
 */

import type { DType, PolArray } from '@pol/core';

/** Entries kept per offset: enough for a few shapes that take turns at one offset. */
const BUCKET_SIZE = 8;
/** Cache changes remembered for one savepoint; past this a rollback restores everything but cache identity. */
const UNDO_LIMIT = 4096;
// Slots of the dense part (offsets up to DENSE_LIMIT × alignment); 64 Ki slots at most, half a
// megabyte of pointers.
const DENSE_LIMIT = 1 << 16;
// How far past its end the dense part may grow at once. Carves far apart (large arrays) go to the
// Map instead, so the dense part never fills long runs of empty slots.
const DENSE_GAP = 16;

/** One cached array: what was carved at an offset, and the bytes the carve took. */
export class CacheEntry {
  constructor(
    readonly dtype: DType,
    readonly dims: readonly number[], // frozen, owned by the cache; validated when carved
    readonly array: PolArray,
    readonly reserved: number, // the bytes the carve took (the storage's reserve of its byte length)
  ) {}
}

class Bucket {
  // Invariant: at most BUCKET_SIZE entries, at most one per (dtype, dims).
  readonly entries: CacheEntry[] = [];
  // The slot the next insertion replaces once the bucket is full (round robin).
  next = 0;
}

// One cache change, remembered while a savepoint is armed so that a rollback can undo it.
class UndoRecord {
  constructor(
    readonly offset: number,
    readonly bucket: Bucket,
    readonly created: boolean, // the bucket itself was added to the cache
    readonly slot: number,
    readonly previous: CacheEntry | undefined, // undefined: the entry was appended
    readonly previousNext: number,
  ) {}
}

function sameDims(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * Offset → the bucket of arrays carved there. Offsets that are multiples of the arena's alignment
 * and close together (consecutive carves of small and medium arrays) live in a dense array indexed
 * by offset / alignment, which a steady loop reads several times faster than a Map; the others
 * (padded starts, carves far apart, offsets past the dense part) live in a Map.
 */
export class CarveCache {
  // Invariants: #dense has no holes (unused slots hold undefined), so it stays a packed array; an
  // offset's bucket is in #dense or in #sparse, never both.
  readonly #dense: (Bucket | undefined)[] = [];
  readonly #sparse = new Map<number, Bucket>();
  readonly #mask: number; // alignment - 1
  readonly #shift: number; // log2(alignment)
  // Cache changes since the armed savepoint; disarmed by any operation a rollback cannot span.
  readonly #undo: UndoRecord[] = [];
  #armed = false;
  #overflow = false;

  constructor(alignment: number) {
    this.#mask = alignment - 1;
    this.#shift = 31 - Math.clz32(alignment);
  }

  /** The entry for `dtype[dims]` at `offset`, if one is cached. */
  find(offset: number, dtype: DType, dims: readonly number[]): CacheEntry | undefined {
    const bucket = this.#bucket(offset);
    if (bucket === undefined) return undefined;
    const entries = bucket.entries;
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i] as CacheEntry;
      if (entry.dtype === dtype && sameDims(entry.dims, dims)) return entry;
    }
    return undefined;
  }

  /** Cache `entry` at `offset`, for a key `find` found nothing for; a full bucket evicts round robin. */
  add(offset: number, entry: CacheEntry): void {
    const found = this.#bucket(offset);
    const bucket = found ?? new Bucket();
    if (found === undefined) this.#setBucket(offset, bucket);
    const entries = bucket.entries;
    const full = entries.length >= BUCKET_SIZE;
    const slot = full ? bucket.next : entries.length;
    if (this.#armed) this.#remember(new UndoRecord(offset, bucket, found === undefined, slot, entries[slot], bucket.next));
    entries[slot] = entry;
    if (full) bucket.next = (bucket.next + 1) % BUCKET_SIZE;
  }

  // --- the undo log ----------------------------------------------------------------------------

  /** Start remembering changes, for a savepoint; forgets what an earlier savepoint remembered. */
  arm(): void {
    this.#undo.length = 0;
    this.#armed = true;
    this.#overflow = false;
  }

  /** Stop remembering: an operation a rollback cannot span (a mark, a frame, a release) happened. */
  disarm(): void {
    this.#armed = false;
  }

  /**
   * Undo every change since `arm`, if the log is still armed and complete; otherwise leave the
   * cache as it is (a rollback then restores everything but the cache's identity). Disarms.
   */
  rollback(): void {
    if (this.#armed && !this.#overflow) {
      const undo = this.#undo;
      for (let i = undo.length - 1; i >= 0; i--) {
        const r = undo[i];
        if (r === undefined) continue;
        if (r.created) {
          this.#delete(r.offset);
          continue;
        }
        if (r.previous === undefined) r.bucket.entries.length = r.slot;
        else r.bucket.entries[r.slot] = r.previous;
        r.bucket.next = r.previousNext;
      }
    }
    this.#undo.length = 0;
    this.#armed = false;
  }

  #remember(record: UndoRecord): void {
    if (this.#undo.length >= UNDO_LIMIT) {
      this.#overflow = true;
      return;
    }
    this.#undo.push(record);
  }

  // --- offset → bucket -------------------------------------------------------------------------

  // The dense slot `offset` would take, or -1 when it can only live in the Map.
  #slot(offset: number): number {
    if (offset >= 0x40000000 || (offset & this.#mask) !== 0) return -1;
    const slot = offset >>> this.#shift;
    return slot < DENSE_LIMIT ? slot : -1;
  }

  #bucket(offset: number): Bucket | undefined {
    const slot = this.#slot(offset);
    if (slot >= 0 && slot < this.#dense.length) {
      const bucket = this.#dense[slot];
      if (bucket !== undefined) return bucket;
    }
    return this.#sparse.size === 0 ? undefined : this.#sparse.get(offset);
  }

  // Only for an offset #bucket found nothing at.
  #setBucket(offset: number, bucket: Bucket): void {
    const slot = this.#slot(offset);
    const dense = this.#dense;
    if (slot < 0 || slot > dense.length + DENSE_GAP) {
      this.#sparse.set(offset, bucket);
      return;
    }
    while (dense.length < slot) dense.push(undefined);
    dense[slot] = bucket;
  }

  #delete(offset: number): void {
    const slot = this.#slot(offset);
    if (slot >= 0 && slot < this.#dense.length && this.#dense[slot] !== undefined) this.#dense[slot] = undefined;
    else this.#sparse.delete(offset);
  }
}
