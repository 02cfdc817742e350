import {
  type ArrayOf,
  ambientspace,
  byteLength,
  type DType,
  describeValue,
  dtypeInfo,
  type Frame,
  FrameClosedError,
  frameKey,
  frozenDims,
  InvalidArgumentError,
  type Kind,
  openFrameKey,
  type PolArray,
  rollbackKey,
  type Space,
  savepointKey,
  spaceKey,
} from '@pol/core';
import {
  ArenaFullError,
  ContendedError,
  ForeignMarkError,
  FrameOrderError,
  InvalidAlignmentError,
  InvalidSlabError,
  MarkAboveOffsetError,
  StaleArrayError,
  StaleMarkError,
} from './errors.js';
import {
  type AnyStorage,
  type ArrayLife,
  checkStorage,
  type Slab,
  type SlabKind,
  type SlabStorage,
  type SlabTypes,
  storageFor,
} from './storage.js';

/**
 * The slab type of a `K` arena: `SlabOf<'host'>` is ArrayBuffer, SharedArrayBuffer, Uint8Array or a
 * WebAssembly memory.
 *
 * @example
 * ```ts
 * import { Arena, type SlabOf } from '@pol/arena';
 * const slab: SlabOf<'host'> = new ArrayBuffer(1024);
 * const arena = new Arena(slab);
 * ```
 */
export type SlabOf<K extends Kind> = K extends keyof SlabTypes ? SlabTypes[K] : unknown;

/**
 * Options of `new Arena(slab, options)`.
 *
 * @example
 * ```ts
 * import { Arena, type ArenaOptions } from '@pol/arena';
 * const options: ArenaOptions = { alignment: 64, checked: true };
 * const arena = new Arena(new ArrayBuffer(4096), options);
 * ```
 */
export interface ArenaOptions {
  /**
   * Where each carve starts, relative to the slab's first byte: a power of two. Default 256. A
   * carve also starts at a multiple of its element size in absolute terms (see the README).
   */
  readonly alignment?: number;
  /**
   * Checked mode: released bytes are poisoned, arrays refuse reads once they die, and array objects
   * are never reused. For tests and debugging; off by default, and free when off.
   */
  readonly checked?: boolean;
}

/**
 * Options naming the storage outright, for a slab type no {@link SlabTypes} entry declares.
 *
 * @example
 * ```ts
 * import { Arena, type ArenaStorageOptions, type SlabStorage } from '@pol/arena';
 * import { dtypeInfo, makeHostArray } from '@pol/core';
 * class Pages {
 *   readonly bytes = new ArrayBuffer(4096);
 * }
 * const pages: SlabStorage<Pages, 'host'> = {
 *   name: 'Pages',
 *   kind: 'host',
 *   residency: 'host',
 *   matches: (slab): slab is Pages => slab instanceof Pages,
 *   byteLength: (slab) => slab.bytes.byteLength,
 *   carve: (slab, offset, dtype, dims) =>
 *     makeHostArray(dtype, dims, new (dtypeInfo(dtype).TypedArray)(slab.bytes, offset, dims.reduce((a, b) => a * b, 1))),
 * };
 * const options: ArenaStorageOptions<Pages, 'host'> = { storage: pages, alignment: 64 };
 * const arena = new Arena(new Pages(), options); // Arena<'host'>
 * ```
 */
export interface ArenaStorageOptions<S, K extends Kind> extends ArenaOptions {
  /** The storage to carve `slab` with, instead of the first registered one that matches it. */
  readonly storage: SlabStorage<S, K>;
}

/**
 * What `observe` listeners receive after each retract (frame closes included) and reset.
 *
 * @example
 * ```ts
 * import { Arena, type ArenaEvent, observe } from '@pol/arena';
 * const arena = new Arena(new ArrayBuffer(1024));
 * const log: ArenaEvent[] = [];
 * observe(arena, (event) => log.push(event));
 * arena.reset(); // log: [{ kind: 'reset', offset: 0, epoch: 1 }]
 * ```
 */
export interface ArenaEvent {
  /** `'retract'` for a retract, a frame close or a rolled-back allocation; `'reset'` for a reset. */
  readonly kind: 'retract' | 'reset';
  /** The arena's offset after the release: every byte from here up is released. */
  readonly offset: number;
  /** The arena's epoch after the release. */
  readonly epoch: number;
}

/**
 * A listener passed to `observe`.
 *
 * @example
 * ```ts
 * import { Arena, type ArenaListener, observe } from '@pol/arena';
 * let pinnedEnd = 512; // say, the end of the region a captured graph uses
 * const invalidate: ArenaListener = (event) => {
 *   if (event.offset < pinnedEnd) pinnedEnd = 0;
 * };
 * observe(new Arena(new ArrayBuffer(1024)), invalidate);
 * ```
 */
export type ArenaListener = (event: ArenaEvent) => void;

/**
 * What `arena.describe()` returns: a snapshot of the arena's state.
 *
 * @example
 * ```ts
 * import { Arena, type ArenaDescription } from '@pol/arena';
 * const arena = new Arena(new ArrayBuffer(1 << 20));
 * arena.alloc('float32', [256]);
 * const d: ArenaDescription<'host'> = arena.describe();
 * console.log(d.residency, d.capacity, d.offset, d.watermark, d.openFrames); // 'host' 1048576 1024 1024 0
 * ```
 */
export interface ArenaDescription<K extends Kind = Kind> {
  /** The kind of arrays it carves. */
  readonly kind: K;
  /** The storage's name, such as `'ArrayBuffer'`. */
  readonly storage: string;
  /** Where its bytes live. */
  readonly residency: 'host' | 'device';
  /** The slab's size in bytes. */
  readonly capacity: number;
  /** The first free byte. */
  readonly offset: number;
  /** The highest offset ever reached, across resets. */
  readonly watermark: number;
  /** Where carves start, relative to the slab's first byte. */
  readonly alignment: number;
  /** How many resets the arena has been through. */
  readonly epoch: number;
  /** Whether the arena is in checked mode. */
  readonly checked: boolean;
  /** How many frames are open on it. */
  readonly openFrames: number;
  /** The offset each open frame opened at (and will retract to), outermost first. */
  readonly frameMarks: readonly number[];
  /** How many array objects it has ever made: flat once a loop is steady. */
  readonly arraysCreated: number;
}

declare const markBrand: unique symbol;

/**
 * A snapshot of an arena's offset, returned by `mark` and consumed by `retract`. It carries the
 * arena's epoch, so a mark taken before a `reset` is refused instead of corrupting newer carves.
 *
 * @example
 * ```ts
 * import { Arena, type Mark, mark, retract } from '@pol/arena';
 * const arena = new Arena(new ArrayBuffer(1024));
 * const m: Mark = mark(arena);
 * arena.alloc('int32', [8]);
 * retract(arena, m);
 * console.log(m.offset, m.epoch); // 0 0
 * ```
 */
export interface Mark {
  readonly [markBrand]: true;
  /** The offset it snapshots. */
  readonly offset: number;
  /** The epoch it was taken in. */
  readonly epoch: number;
}

/**
 * A frame on an arena: `scratchspace(arena, f)` hands one to `f`. It marks the arena when it opens
 * and retracts to that mark when it closes, so everything carved through it dies at once. It
 * allocates only while it is the arena's innermost open frame.
 *
 * @example
 * ```ts
 * import { Arena, type ArenaFrame } from '@pol/arena';
 * import { scratchspace } from '@pol/core';
 * const arena = new Arena(new ArrayBuffer(1024));
 * scratchspace(arena, (frame) => {
 *   const f = frame as ArenaFrame<'host'>; // scratchspace types it as core's Frame<'host'>
 *   const tmp = f.tryAlloc('float32', [64]); // undefined if it does not fit
 *   console.log(f.start, f.arena === arena, tmp?.data.length); // 0 true 64
 * });
 * ```
 */
export interface ArenaFrame<K extends Kind = Kind> extends Frame<K> {
  /** The arena it was opened on (directly or through outer frames). */
  readonly arena: Arena<K>;
  /** The arena's offset when the frame opened: where closing it retracts to. */
  readonly start: number;
  /** Like `alloc`, but `undefined` instead of `ArenaFullError` when the array does not fit. */
  tryAlloc<D extends DType>(dtype: D, dims: readonly number[]): ArrayOf<K, D> | undefined;
  /** Open a frame nested in this one (what `scratchspace(frame, f)` calls). */
  [openFrameKey](): ArenaFrame<K>;
}

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
  /** Where each carve starts, relative to the slab's first byte. */
  readonly alignment: number;
  /** Whether the arena is in checked mode. */
  readonly checked: boolean;
  /** The slab's size in bytes. The arena never grows. */
  readonly capacity: number;
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
  /** An arena over a slab a registered storage accepts; its kind follows from the slab's type. */
  new <S extends Slab>(slab: S, options?: ArenaOptions): Arena<SlabKind<S>>;
  /** An arena over a slab of the given storage. */
  new <S, K extends Kind>(slab: S, options: ArenaStorageOptions<S, K>): Arena<K>;
  readonly prototype: Arena;
}

// ---------------------------------------------------------------------------------------------
// Internals

/** Entries kept per offset in the array cache: enough for a few shapes that take turns at one offset. */
const BUCKET_SIZE = 8;
/** Cache changes remembered for one savepoint; past this a rollback restores everything but cache identity. */
const UNDO_LIMIT = 4096;

class CacheEntry {
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

// Slots of the dense part of a CarveCache (offsets up to DENSE_LIMIT × alignment); 64 Ki slots at
// most, half a megabyte of pointers.
const DENSE_LIMIT = 1 << 16;
// How far past its end the dense part may grow at once. Carves far apart (large arrays) go to the
// Map instead, so the dense part never fills long runs of empty slots.
const DENSE_GAP = 16;

/**
 * Offset → the bucket of arrays carved there. Offsets that are multiples of the arena's alignment
 * and close together (consecutive carves of small and medium arrays) live in a dense array indexed
 * by offset / alignment, which a steady loop reads several times faster than a Map; the others
 * (padded starts, carves far apart, offsets past the dense part) live in a Map.
 */
class CarveCache {
  // Invariants: #dense has no holes (unused slots hold undefined), so it stays a packed array; an
  // offset's bucket is in #dense or in #sparse, never both.
  readonly #dense: (Bucket | undefined)[] = [];
  readonly #sparse = new Map<number, Bucket>();
  readonly #mask: number; // alignment - 1
  readonly #shift: number; // log2(alignment)

  constructor(alignment: number) {
    this.#mask = alignment - 1;
    this.#shift = 31 - Math.clz32(alignment);
  }

  // The dense slot `offset` would take, or -1 when it can only live in the Map.
  #slot(offset: number): number {
    if (offset >= 0x40000000 || (offset & this.#mask) !== 0) return -1;
    const slot = offset >>> this.#shift;
    return slot < DENSE_LIMIT ? slot : -1;
  }

  get(offset: number): Bucket | undefined {
    const slot = this.#slot(offset);
    if (slot >= 0 && slot < this.#dense.length) {
      const bucket = this.#dense[slot];
      if (bucket !== undefined) return bucket;
    }
    return this.#sparse.size === 0 ? undefined : this.#sparse.get(offset);
  }

  // Only for an offset `get` found nothing at.
  set(offset: number, bucket: Bucket): void {
    const slot = this.#slot(offset);
    const dense = this.#dense;
    if (slot < 0 || slot > dense.length + DENSE_GAP) {
      this.#sparse.set(offset, bucket);
      return;
    }
    while (dense.length < slot) dense.push(undefined);
    dense[slot] = bucket;
  }

  delete(offset: number): void {
    const slot = this.#slot(offset);
    if (slot >= 0 && slot < this.#dense.length && this.#dense[slot] !== undefined) this.#dense[slot] = undefined;
    else this.#sparse.delete(offset);
  }
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

type DeathCause = 'frame' | 'retract' | 'reset' | 'rollback';

class Death {
  constructor(
    readonly cause: DeathCause,
    readonly offset: number, // the arena's offset after the release
    readonly epoch: number, // the epoch the release happened in
    readonly arena: string,
  ) {}

  describe(): string {
    switch (this.cause) {
      case 'frame':
        return `its frame closed, retracting ${this.arena} to offset ${this.offset} in epoch ${this.epoch}`;
      case 'retract':
        return `retract(arena, mark) released it, moving ${this.arena} back to offset ${this.offset} in epoch ${this.epoch}`;
      case 'reset':
        return `reset(arena) released it, ending epoch ${this.epoch} of ${this.arena}`;
      case 'rollback':
        return `a spec allocation that failed part-way rolled it back on ${this.arena} (epoch ${this.epoch})`;
    }
  }
}

/** The life of one checked carve (see ArrayLife). */
class CarveLife implements ArrayLife {
  // Invariant: #death is set exactly once, by the release that frees [start, start + byteLength).
  #death: Death | undefined;

  constructor(
    readonly dtype: DType,
    readonly dims: readonly number[],
    readonly start: number,
    readonly byteLength: number,
    readonly clock: number, // the arena's clock when carved: a release to a mark with clock ≤ this kills it
  ) {}

  get alive(): boolean {
    return this.#death === undefined;
  }

  die(death: Death): void {
    this.#death = death;
  }

  assertAlive(): void {
    if (this.#death !== undefined) throw this.#stale(this.#death);
  }

  #stale(death: Death): StaleArrayError {
    return new StaleArrayError(
      `${this.dtype}[${this.dims.join(', ')}] (carved at offset ${this.start}) is stale: ${death.describe()}. ` +
        'Its bytes have been poisoned and may be handed out again. Read an array only while its frame is open; ' +
        'copy what must outlive the frame, or allocate it from the arena (or an outer frame) before opening the frame.',
    );
  }
}

class MarkImpl implements Mark {
  declare readonly [markBrand]: true;
  constructor(
    readonly arena: ArenaImpl<Kind>,
    readonly offset: number,
    readonly epoch: number,
    readonly clock: number, // the arena's clock value this mark took; orders it against carves and releases
  ) {}

  toString(): string {
    return `Mark(offset ${this.offset}, epoch ${this.epoch})`;
  }
}

class Savepoint {
  constructor(
    readonly arena: ArenaImpl<Kind>,
    readonly offset: number,
    readonly watermark: number,
    readonly epoch: number,
    readonly clock: number,
    readonly top: FrameImpl<Kind> | undefined,
  ) {}
}

// Friend access: frames reach their arena's private state only through these functions, which
// ArenaImpl's static block fills in (a class's #private members are visible to that class alone).
interface Friends {
  alloc<K extends Kind, D extends DType>(
    arena: ArenaImpl<K>,
    frame: FrameImpl<K>,
    dtype: D,
    dims: readonly number[],
    fallible: boolean,
  ): ArrayOf<K, D> | undefined;
  open<K extends Kind>(arena: ArenaImpl<K>, on: FrameImpl<K>): FrameImpl<K>;
  close<K extends Kind>(arena: ArenaImpl<K>, frame: FrameImpl<K>): void;
  notify(arena: ArenaImpl<Kind>, kind: 'retract' | 'reset'): void;
}
const friends = {} as Friends;

// `alignment` is a power of two. Offsets below 2^30 (every slab up to a gigabyte, and the start of
// any larger one) take the bit mask, which is much cheaper than a division; the rest take `%`.
function alignUp(x: number, alignment: number): number {
  if (x < 0x40000000 && alignment <= 0x40000000) return (x + alignment - 1) & -alignment;
  const r = x % alignment;
  return r === 0 ? x : x + alignment - r;
}

function sameDims(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
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

const knownOptions = new Set(['alignment', 'checked', 'storage']);

function readOptions(options: unknown): { alignment: unknown; checked: boolean; storage: AnyStorage | undefined } {
  if (options === undefined) return { alignment: 256, checked: false, storage: undefined };
  if (typeof options !== 'object' || options === null) {
    throw new InvalidArgumentError(
      `new Arena(slab, options) takes an options object such as { alignment: 256, checked: false }, got ${describeValue(options)}.`,
    );
  }
  const o = options as { alignment?: unknown; checked?: unknown; storage?: unknown };
  for (const key of Object.keys(o)) {
    if (!knownOptions.has(key)) {
      throw new InvalidArgumentError(
        `new Arena: unknown option '${key}'. The options are alignment (a power of two), checked (a boolean) and storage (a SlabStorage).`,
      );
    }
  }
  if (o.checked !== undefined && typeof o.checked !== 'boolean') {
    throw new InvalidArgumentError(`new Arena: checked must be true or false, got ${describeValue(o.checked)}.`);
  }
  if (o.storage !== undefined) checkStorage(o.storage);
  return {
    alignment: o.alignment === undefined ? 256 : o.alignment,
    checked: o.checked === true,
    storage: o.storage as AnyStorage | undefined,
  };
}

function checkAlignment(alignment: unknown): number {
  if (
    typeof alignment !== 'number' ||
    !Number.isSafeInteger(alignment) ||
    alignment < 1 ||
    (alignment > 2 ** 30 ? !Number.isInteger(Math.log2(alignment)) : (alignment & (alignment - 1)) !== 0)
  ) {
    throw new InvalidAlignmentError(
      `new Arena: alignment must be a power of two (1, 2, 4, ..., 256, ...), got ${describeValue(alignment)}. ` +
        'Leave it out for the default, 256.',
    );
  }
  return alignment;
}

/**
 * The arena. Its hot paths (alloc on a cache hit, mark, retract, frame open and close) touch only
 * numbers and a handful of references; every refusal is built in a separate cold method, after
 * nothing has been changed.
 */
class ArenaImpl<K extends Kind> implements Arena<K> {
  readonly [spaceKey]: K;
  readonly slab: SlabOf<K>;
  readonly storage: SlabStorage<SlabOf<K>, K>;
  readonly alignment: number; // a power of two
  readonly checked: boolean;
  readonly capacity: number; // the slab's byteLength when the arena was made; never changes
  // The absolute byte offset of slab byte 0 in the memory views index; element alignment is absolute.
  readonly #base: number;

  // Invariant: 0 ≤ #offset ≤ capacity; every live carve lies in [0, #offset).
  #offset = 0;
  // Invariant: #watermark = the maximum #offset ever reached; it never decreases, reset included.
  #watermark = 0;
  // Invariant: bumps exactly at reset; marks and savepoints of other epochs are stale.
  #epoch = 0;
  // A logical clock that ticks at every mark, frame open, savepoint and releasing retract, ordering
  // them against each other and against carves (a carve records the clock without ticking it).
  #clock = 0;
  // Invariant: the innermost open frame, or undefined; open frames form a chain through `outer`,
  // and their starts and clocks increase from the outermost to #top.
  #top: FrameImpl<K> | undefined = undefined;
  #depth = 0;
  // Releases (retracts that lowered the offset) since the last reset, as a monotonic stack:
  // clocks and targets both strictly increase from 0 to #releases - 1; a release pops the entries
  // whose target is not below its own, which can no longer decide any mark's fate. A mark is stale
  // when a release after it (clock > mark's) went below its offset: its bytes were handed out again.
  readonly #releaseClocks: number[] = [];
  readonly #releaseTargets: number[] = [];
  #releases = 0;
  // Unchecked mode: offset → the arrays carved there, so a repeated carve returns the same object.
  readonly #cache: CarveCache;
  // Checked mode: the lives of live carves in carve order (so their clocks never decrease).
  readonly #live: CarveLife[] = [];
  #created = 0;
  // Copy-on-write, so a listener may unsubscribe while being notified.
  #listeners: readonly ArenaListener[] = [];
  // Cache changes since the armed savepoint; disarmed by any operation a rollback cannot span.
  readonly #undo: UndoRecord[] = [];
  #undoArmed = false;
  #undoOverflow = false;

  constructor(slab: unknown, options?: unknown) {
    const o = readOptions(options);
    const storage = o.storage ?? storageFor(slab, 'new Arena(slab)');
    if (o.storage !== undefined && !o.storage.matches(slab)) {
      throw new InvalidSlabError(
        `new Arena: the storage '${o.storage.name}' does not accept ${describeValue(slab)}. Pass a slab it matches, or leave out the storage option.`,
      );
    }
    storage.checkSlab?.(slab as never);
    const alignment = checkAlignment(o.alignment);
    storage.checkAlignment?.(slab as never, alignment);
    const capacity = storage.byteLength(slab as never);
    const base = storage.byteOffset?.(slab as never) ?? 0;
    if (!Number.isSafeInteger(capacity) || capacity < 0 || !Number.isSafeInteger(base) || base < 0) {
      throw new InvalidSlabError(
        `new Arena: the storage '${storage.name}' reports ${capacity} bytes at byte offset ${base} for ${describeValue(slab)}; both must be non-negative integers.`,
      );
    }
    this[spaceKey] = storage.kind as K;
    this.slab = slab as SlabOf<K>;
    this.storage = storage as unknown as SlabStorage<SlabOf<K>, K>;
    this.alignment = alignment;
    this.#cache = new CarveCache(alignment);
    this.checked = o.checked;
    this.capacity = capacity;
    this.#base = base;
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
  // usually holds a cached array of this very dtype and dims. A cached entry was validated and
  // element-aligned when it was carved at exactly that offset, so a match needs no validation,
  // no dtype lookup and no padding: compare, bump, return. Anything else takes the slow path.
  #bump<D extends DType>(dtype: D, dims: readonly number[], fallible: boolean): ArrayOf<K, D> | undefined {
    if (!this.checked) {
      const start = alignUp(this.#offset, this.alignment);
      const bucket = this.#cache.get(start);
      if (bucket !== undefined) {
        const entries = bucket.entries;
        for (let i = 0; i < entries.length; i++) {
          const entry = entries[i] as CacheEntry;
          if (entry.dtype === dtype && sameDims(entry.dims, dims)) {
            const end = start + entry.reserved;
            if (end > this.capacity) break;
            this.#offset = end;
            if (end > this.#watermark) this.#watermark = end;
            return entry.array as ArrayOf<K, D>;
          }
        }
      }
    }
    return this.#bumpSlow(dtype, dims, fallible);
  }

  #bumpSlow<D extends DType>(dtype: D, dims: readonly number[], fallible: boolean): ArrayOf<K, D> | undefined {
    const bytes = byteLength(dtype, dims); // validates dtype and dims
    const elementAlignment = dtypeInfo(dtype).alignment;
    let start = alignUp(this.#offset, this.alignment);
    // JavaScript wants a view's absolute byteOffset to be a multiple of its element size.
    const misfit = (this.#base + start) % elementAlignment;
    if (misfit !== 0) start += elementAlignment - misfit;
    const reserve = this.storage.reserve;
    const end = start + (reserve === undefined ? bytes : reserve.call(this.storage, bytes));
    if (end > this.capacity) {
      if (fallible) return undefined;
      throw this.#full(dtype, dims, start, end);
    }
    const array = this.checked
      ? this.#carveChecked(start, dtype, dims, bytes)
      : this.#carveCached(start, dtype, dims, end - start);
    this.#offset = end;
    if (end > this.#watermark) this.#watermark = end;
    return array as ArrayOf<K, D>;
  }

  #carveCached(start: number, dtype: DType, dims: readonly number[], reserved: number): PolArray {
    const bucket = this.#cache.get(start);
    if (bucket !== undefined) {
      const entries = bucket.entries;
      for (let i = 0; i < entries.length; i++) {
        const entry = entries[i];
        if (entry !== undefined && entry.dtype === dtype && sameDims(entry.dims, dims)) return entry.array;
      }
    }
    return this.#miss(start, dtype, dims, reserved, bucket);
  }

  #miss(start: number, dtype: DType, dims: readonly number[], reserved: number, found: Bucket | undefined): PolArray {
    const frozen = frozenDims(dims);
    const array = this.storage.carve(this.slab, start, dtype, frozen) as PolArray;
    this.#created++;
    const entry = new CacheEntry(dtype, frozen, array, reserved);
    const bucket = found ?? new Bucket();
    if (found === undefined) this.#cache.set(start, bucket);
    const entries = bucket.entries;
    const full = entries.length >= BUCKET_SIZE;
    const slot = full ? bucket.next : entries.length;
    if (this.#undoArmed) this.#remember(new UndoRecord(start, bucket, found === undefined, slot, entries[slot], bucket.next));
    entries[slot] = entry;
    if (full) bucket.next = (bucket.next + 1) % BUCKET_SIZE;
    return array;
  }

  #remember(record: UndoRecord): void {
    if (this.#undo.length >= UNDO_LIMIT) {
      this.#undoOverflow = true;
      return;
    }
    this.#undo.push(record);
  }

  #carveChecked(start: number, dtype: DType, dims: readonly number[], bytes: number): PolArray {
    const frozen = frozenDims(dims);
    const life = new CarveLife(dtype, frozen, start, bytes, this.#clock);
    const storage = this.storage;
    const array = (
      storage.carveChecked === undefined
        ? storage.carve(this.slab, start, dtype, frozen)
        : storage.carveChecked(this.slab, start, dtype, frozen, life)
    ) as PolArray;
    this.#created++;
    this.#live.push(life);
    return array;
  }

  // --- marks and releases ----------------------------------------------------------------------

  mark(): Mark {
    this.#undoArmed = false;
    return new MarkImpl(this as ArenaImpl<Kind>, this.#offset, this.#epoch, ++this.#clock);
  }

  retract(mark: Mark): void {
    const m = mark as unknown;
    if (
      !(m instanceof MarkImpl) ||
      m.arena !== (this as ArenaImpl<Kind>) ||
      m.epoch !== this.#epoch ||
      m.offset > this.#offset ||
      this.#released(m) ||
      (this.#top !== undefined && m.clock < this.#top.clock)
    ) {
      throw this.#badMark(m);
    }
    this.#release(m.offset, m.clock, 'retract');
    this.#notify('retract');
  }

  reset(): void {
    if (this.#top !== undefined) throw this.#resetOrder();
    const from = this.#offset;
    this.#undoArmed = false;
    if (this.checked) this.#kill(0, from, Number.NEGATIVE_INFINITY, 'reset');
    this.#epoch++;
    this.#releases = 0;
    this.#offset = 0;
    this.#notify('reset');
  }

  // Whether a release since `m` went below it, handing its bytes out again.
  #released(m: MarkImpl): boolean {
    const clocks = this.#releaseClocks;
    const targets = this.#releaseTargets;
    let lowest = m.offset;
    for (let i = this.#releases - 1; i >= 0; i--) {
      if ((clocks[i] ?? 0) <= m.clock) break;
      lowest = targets[i] ?? 0;
    }
    return lowest < m.offset;
  }

  // Move the offset back to `target`, releasing every carve made since `clock`. Validated already.
  #release(target: number, clock: number, cause: DeathCause): void {
    const from = this.#offset;
    this.#undoArmed = false;
    if (target < from) {
      const targets = this.#releaseTargets;
      let n = this.#releases;
      while (n > 0 && (targets[n - 1] ?? 0) >= target) n--;
      this.#releaseClocks[n] = ++this.#clock;
      targets[n] = target;
      this.#releases = n + 1;
    }
    if (this.checked) this.#kill(target, from, clock, cause);
    this.#offset = target;
  }

  // Checked mode: poison [target, from) and kill every carve made at or after `clock`.
  #kill(target: number, from: number, clock: number, cause: DeathCause): void {
    const live = this.#live;
    const poison = this.storage.poison;
    if (poison !== undefined && from > target) poison.call(this.storage, this.slab, target, from - target);
    let n = live.length;
    if (n === 0 || (live[n - 1]?.clock ?? Number.NEGATIVE_INFINITY) < clock) return;
    const death = new Death(cause, target, this.#epoch, this.#summary(target));
    for (; n > 0; n--) {
      const life = live[n - 1];
      if (life === undefined || life.clock < clock) break;
      life.die(death);
      if (poison !== undefined && life.byteLength > 0 && dtypeInfo(life.dtype).float) {
        poison.call(this.storage, this.slab, life.start, life.byteLength, life.dtype);
      }
    }
    live.length = n;
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
    if (top !== undefined && ambientspace(this) !== top) throw this.#contended(this);
    return this.#openFrame(this);
  }

  #openFrame(parent: Space<K>): FrameImpl<K> {
    this.#undoArmed = false;
    const frame = new FrameImpl(this, parent, this.#offset, ++this.#clock, this.#top);
    this.#top = frame;
    this.#depth++;
    return frame;
  }

  // --- savepoints (atomic spec allocation) -----------------------------------------------------

  [savepointKey](): unknown {
    this.#undo.length = 0;
    this.#undoArmed = true;
    this.#undoOverflow = false;
    return new Savepoint(
      this as ArenaImpl<Kind>,
      this.#offset,
      this.#watermark,
      this.#epoch,
      ++this.#clock,
      this.#top as FrameImpl<Kind> | undefined,
    );
  }

  [rollbackKey](token: unknown): void {
    if (
      !(token instanceof Savepoint) ||
      token.arena !== (this as ArenaImpl<Kind>) ||
      token.epoch !== this.#epoch ||
      token.top !== (this.#top as FrameImpl<Kind> | undefined) ||
      token.offset > this.#offset
    ) {
      throw new InvalidArgumentError(
        `${this.#summary(this.#offset)} cannot roll back to ${describeValue(token)}: only to the savepoint of the allocation that just failed.`,
      );
    }
    const undo = this.#undoArmed && !this.#undoOverflow ? this.#undo : undefined;
    const moved = token.offset < this.#offset;
    this.#release(token.offset, token.clock, 'rollback');
    this.#watermark = token.watermark;
    if (undo !== undefined) {
      for (let i = undo.length - 1; i >= 0; i--) {
        const r = undo[i];
        if (r === undefined) continue;
        if (r.created) {
          this.#cache.delete(r.offset);
          continue;
        }
        if (r.previous === undefined) r.bucket.entries.length = r.slot;
        else r.bucket.entries[r.slot] = r.previous;
        r.bucket.next = r.previousNext;
      }
    }
    this.#undo.length = 0;
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
      `Arena(${this.storage.residency}, ${formatBytes(this.capacity)}, offset ${offset}, watermark ${this.#watermark}, ${frames}` +
      `${this.checked ? ', checked' : ''})`
    );
  }

  // --- cold paths: every refusal is built here, after nothing has changed -----------------------

  #full(dtype: DType, dims: readonly number[], start: number, end: number): ArenaFullError {
    const offset = this.#offset;
    const requested = end - start;
    const padding = start - offset;
    const available = this.capacity - offset;
    return new ArenaFullError(
      `${this} is full: ${dtype}[${dims.join(', ')}] needs ${requested} bytes` +
        (padding > 0 ? ` (plus ${padding} bytes of padding to start it at offset ${start})` : '') +
        `, but only ${available} of ${this.capacity} bytes are left (watermark ${this.#watermark}). ` +
        'An arena never grows: size the slab from watermark(arena) after a warm-up pass, release scratch with a frame or retract, ' +
        'or use tryAlloc to fall back.',
      requested + padding,
      available,
      this.#watermark,
    );
  }

  #allocOrder(frame: FrameImpl<K> | undefined, dtype: DType, dims: readonly number[]): FrameOrderError {
    const top = this.#top;
    const what = frame === undefined ? `${this} itself` : String(frame);
    return new FrameOrderError(
      `Cannot allocate ${dtype}[${dims.join(', ')}] from ${what}: ${String(top)} is open inside it, ` +
        "and its close would release the new array's bytes while you still hold it. " +
        'Allocate from the innermost open frame (the one scratchspace passed you, or ambientspace()); ' +
        'allocate what must outlive the frame before opening it. If another async task holds this arena, give each task its own arena.',
    );
  }

  #contended(on: Space<K>): ContendedError {
    return new ContendedError(
      `Cannot open a frame on ${String(on)}: ${String(this.#top)} is open on this arena, ` +
        "and the caller is not inside that frame's block, so the new frame would interleave with it (contended). " +
        'Give each concurrent task its own arena, or open nested frames on the innermost frame: scratchspace(frame, ...) ' +
        'or scratchspace(...) inside its block. The open frame and its arrays are untouched.',
    );
  }

  #closeOrder(frame: FrameImpl<K>): FrameOrderError {
    return new FrameOrderError(
      `Cannot close ${frame}: ${String(this.#top)} was opened inside it and is still open, and closing the outer frame ` +
        'would release the inner one\'s bytes under it. Close frames innermost first (scratchspace blocks and "using" do this for you). ' +
        'Nothing was closed.',
    );
  }

  #resetOrder(): FrameOrderError {
    return new FrameOrderError(
      `Cannot reset ${this}: ${this.#depth} frame${this.#depth === 1 ? ' is' : 's are'} open on it, and a reset would release their bytes under them. ` +
        'Close every frame first (reset between steps, outside any scratchspace block).',
    );
  }

  #badMark(m: unknown): Error {
    if (!(m instanceof MarkImpl)) {
      return new InvalidArgumentError(`retract needs a Mark from mark(arena), got ${describeValue(m)}.`);
    }
    if (m.arena !== (this as ArenaImpl<Kind>)) {
      return new ForeignMarkError(
        `Cannot retract ${this} to ${m}: the mark was taken on another arena, ${m.arena}. Retract an arena only to its own marks.`,
      );
    }
    if (m.epoch !== this.#epoch) {
      return new StaleMarkError(
        `Cannot retract ${this} to ${m}: the mark was taken in epoch ${m.epoch}, and reset has since moved the arena to epoch ${this.#epoch}, ` +
          'so its offset means nothing now. Take a new mark after the reset.',
      );
    }
    if (m.offset > this.#offset) {
      return new MarkAboveOffsetError(
        `Cannot retract ${this} to ${m}: the mark is above the current offset ${this.#offset}, and retract only moves the offset back. ` +
          'An earlier retract already released everything past it.',
      );
    }
    if (this.#released(m)) {
      return new StaleMarkError(
        `Cannot retract ${this} to ${m}: a retract below the mark has happened since it was taken, and the bytes above it have been carved again, ` +
          'so retracting to it would release arrays that are still in use. Take a new mark.',
      );
    }
    const top = this.#top;
    return new FrameOrderError(
      `Cannot retract ${this} to ${m}: the mark was taken before ${String(top)} opened, which is still open, and the retract would release its bytes under it. ` +
        'Close the frame first, or retract only to marks taken inside it.',
    );
  }

  static {
    friends.alloc = <K extends Kind, D extends DType>(
      arena: ArenaImpl<K>,
      frame: FrameImpl<K>,
      dtype: D,
      dims: readonly number[],
      fallible: boolean,
    ): ArrayOf<K, D> | undefined => {
      if (arena.#top !== frame) throw arena.#allocOrder(frame, dtype, dims);
      return arena.#bump(dtype, dims, fallible);
    };
    friends.open = <K extends Kind>(arena: ArenaImpl<K>, on: FrameImpl<K>): FrameImpl<K> => {
      if (arena.#top !== on) throw arena.#contended(on);
      return arena.#openFrame(on);
    };
    friends.close = <K extends Kind>(arena: ArenaImpl<K>, frame: FrameImpl<K>): void => {
      if (arena.#top !== frame) throw arena.#closeOrder(frame);
      arena.#top = frame.outer;
      arena.#depth--;
      arena.#release(frame.start, frame.clock, 'frame');
    };
    friends.notify = (arena: ArenaImpl<Kind>, kind: 'retract' | 'reset'): void => arena.#notify(kind);
  }
}

class FrameImpl<K extends Kind> implements ArenaFrame<K> {
  readonly [spaceKey]: K;
  declare readonly [frameKey]: true;
  // Invariant: open exactly while this frame is on its arena's chain of open frames.
  #open = true;

  constructor(
    readonly arena: ArenaImpl<K>,
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
    return friends.alloc(this.arena, this, dtype, dims, false) as ArrayOf<K, D>;
  }

  tryAlloc<D extends DType>(dtype: D, dims: readonly number[]): ArrayOf<K, D> | undefined {
    if (!this.#open) throw this.#closed(`allocate ${dtype}[${describeDims(dims)}]`);
    return friends.alloc(this.arena, this, dtype, dims, true);
  }

  [openFrameKey](): ArenaFrame<K> {
    if (!this.#open) throw this.#closed('open a nested frame');
    return friends.open(this.arena, this);
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
    friends.close(this.arena, this); // throws, changing nothing, unless this is the innermost frame
    this.#open = false;
    friends.notify(this.arena as ArenaImpl<Kind>, 'retract');
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
// Messages name values by their class ("got a Mark"): name the classes as users know them.
Object.defineProperty(ArenaImpl, 'name', { value: 'Arena' });
Object.defineProperty(FrameImpl, 'name', { value: 'ArenaFrame' });
Object.defineProperty(MarkImpl, 'name', { value: 'Mark' });

function describeDims(dims: unknown): string {
  return Array.isArray(dims) ? dims.join(', ') : describeValue(dims);
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
export function arenaOf(x: unknown): ArenaImpl<Kind> | undefined {
  if (x instanceof ArenaImpl) return x as ArenaImpl<Kind>;
  if (x instanceof FrameImpl) return x.arena as ArenaImpl<Kind>;
  return undefined;
}

/** Whether `x` is an arena frame. */
export function isArenaFrame(x: unknown): x is ArenaFrame {
  return x instanceof FrameImpl;
}
