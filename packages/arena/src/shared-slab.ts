/**
 * Shared slabs: one SharedArrayBuffer laid out as regions that threads claim, each claim an arena
 * over its region. A small header at the slab's start holds one claim word and one generation word
 * per region; claiming and releasing are the only operations that touch them, with `Atomics`.
 *
 * @module
 */

import { InvalidArgumentError, type Kind } from '@pol/core';
import { describeValue, readOptions } from '@pol/core/backend';
import { type Arena, Arena as ArenaClass } from './arena.js';
import { type ClaimHooks, claimKey } from './claim-key.js';
import { ContendedError, InvalidRegionError, InvalidSlabError } from './errors.js';
import { isSharedArrayBuffer } from './host.js';

// The header, in 32-bit words. Word 0 marks the slab as one of ours, word 1 is the layout's version,
// and the claim and generation words of region i are at FIRST_REGION_WORD + 2i and + 2i + 1.
const MAGIC = 0x504f4c53; // 'POLS'
const VERSION = 1;
const W_MAGIC = 0;
const W_VERSION = 1;
const W_REGIONS = 2;
const W_REGION_BYTES = 3;
const W_FIRST_OFFSET = 4;
const W_STRIDE = 5;
const W_NEXT_TOKEN = 6;
const FIRST_REGION_WORD = 8;
// Regions start on multiples of this, so that an arena's default alignment is absolute there too.
const REGION_ALIGNMENT = 256;
// Claim tokens and generations stay below 2^30: small integers on every V8 build.
const COUNTER_LIMIT = 0x3fffffff;
// How many regions one slab may have: the header stays under 64 KiB.
const MAX_REGIONS = 8000;

/**
 * The layout of a shared slab, as `createSharedSlab` takes it and `describeSharedSlab` reports it.
 *
 * @example
 * ```ts
 * import { createSharedSlab, type SharedSlabLayout } from '@pol/arena';
 * const layout: SharedSlabLayout = { regions: 4, regionByteLength: 1 << 16 }; // one region per worker
 * const slab = createSharedSlab(layout);
 * ```
 */
export interface SharedSlabLayout {
  /** How many regions: one per thread that carves, typically. */
  readonly regions: number;
  /** Each region's size in bytes: the capacity of the arena that claims it. */
  readonly regionByteLength: number;
}

/**
 * What `describeSharedSlab` reports: the layout, where each region starts, and which are claimed
 * now (a snapshot: another thread may claim or release one the moment after).
 *
 * @example
 * ```ts
 * import { createSharedSlab, describeSharedSlab, type SharedSlabDescription } from '@pol/arena';
 * const d: SharedSlabDescription = describeSharedSlab(createSharedSlab({ regions: 2, regionByteLength: 1000 }));
 * console.log(d.byteOffsets, d.claimed); // [ 256, 1280 ] [ false, false ]
 * ```
 */
export interface SharedSlabDescription extends SharedSlabLayout {
  /** Where each region starts in the slab, in bytes: a multiple of 256. */
  readonly byteOffsets: readonly number[];
  /** Whether each region is claimed now. */
  readonly claimed: readonly boolean[];
  /** How many times each region has been claimed: the epoch the next claim's arena starts at, less one. */
  readonly generations: readonly number[];
}

const roundUp = (n: number, to: number) => Math.ceil(n / to) * to;

/**
 * A SharedArrayBuffer laid out as `regions` regions of `regionByteLength` bytes each, behind a
 * small header of claim words. Send it to workers (`postMessage` shares a SharedArrayBuffer, it
 * does not copy it); each claims a region with {@link claimRegion} and carves only from it.
 *
 * @throws {InvalidArgumentError} for a layout that is not a positive whole number of regions of a
 * positive whole number of bytes (below 2^31 each).
 * @example
 * ```ts
 * import { claimRegion, createSharedSlab } from '@pol/arena';
 * const slab = createSharedSlab({ regions: 2, regionByteLength: 4096 });
 * const mine = claimRegion(slab); // the first free region: in a worker, its own
 * const x = mine.alloc('float32', [16]);
 * console.log(x.data.buffer === slab, x.data.byteOffset); // true 256
 * mine.dispose(); // free for the next claim
 * ```
 */
export function createSharedSlab(layout: SharedSlabLayout): SharedArrayBuffer {
  const o = readOptions('createSharedSlab(layout)', layout, ['regions', 'regionByteLength']);
  const regions = o.regions;
  const bytes = o.regionByteLength;
  if (typeof regions !== 'number' || !Number.isInteger(regions) || regions < 1 || regions > MAX_REGIONS) {
    throw new InvalidArgumentError(
      `createSharedSlab: regions must be a whole number from 1 to ${MAX_REGIONS}, got ${describeValue(regions)}. ` +
        'Pass one region per thread that carves (each worker, and the main thread if it carves too).',
    );
  }
  if (typeof bytes !== 'number' || !Number.isInteger(bytes) || bytes < 1 || bytes > 0x7fffffff) {
    throw new InvalidArgumentError(
      `createSharedSlab: regionByteLength must be a whole number of bytes from 1 to 2^31 - 1, got ${describeValue(bytes)}. ` +
        "Size it from a warm-up's watermark (what one thread's step needs).",
    );
  }
  const headerBytes = 4 * (FIRST_REGION_WORD + 2 * regions);
  const firstOffset = roundUp(headerBytes, REGION_ALIGNMENT);
  const stride = roundUp(bytes, REGION_ALIGNMENT);
  const slab = new SharedArrayBuffer(firstOffset + regions * stride);
  const header = new Int32Array(slab, 0, FIRST_REGION_WORD + 2 * regions);
  header[W_VERSION] = VERSION;
  header[W_REGIONS] = regions;
  header[W_REGION_BYTES] = bytes;
  header[W_FIRST_OFFSET] = firstOffset;
  header[W_STRIDE] = stride;
  // Last, with a release store: a thread that sees the magic word sees the layout.
  Atomics.store(header, W_MAGIC, MAGIC);
  return slab;
}

/** The header of a shared slab, read and checked. */
interface Header {
  readonly words: Int32Array;
  readonly regions: number;
  readonly regionByteLength: number;
  readonly firstOffset: number;
  readonly stride: number;
}

function headerOf(slab: unknown, call: string): Header {
  const isShared = isSharedArrayBuffer(slab);
  const sab = slab as SharedArrayBuffer;
  if (!isShared || sab.byteLength < 4 * FIRST_REGION_WORD) throw notShared(slab, call);
  const head = new Int32Array(sab, 0, FIRST_REGION_WORD);
  if (Atomics.load(head, W_MAGIC) !== MAGIC || head[W_VERSION] !== VERSION) throw notShared(slab, call);
  const regions = head[W_REGIONS] as number;
  return {
    words: new Int32Array(sab, 0, FIRST_REGION_WORD + 2 * regions),
    regions,
    regionByteLength: head[W_REGION_BYTES] as number,
    firstOffset: head[W_FIRST_OFFSET] as number,
    stride: head[W_STRIDE] as number,
  };
}

function notShared(slab: unknown, call: string): InvalidSlabError {
  return new InvalidSlabError(
    `${call} needs a shared slab made by createSharedSlab, got ${describeValue(slab)}` +
      (isSharedArrayBuffer(slab) ? ' without its header' : '') +
      '. Make it once with createSharedSlab({ regions, regionByteLength }) and send that SharedArrayBuffer to every thread.',
  );
}

function checkIndex(header: Header, region: unknown, call: string): number {
  if (typeof region !== 'number' || !Number.isInteger(region) || region < 0 || region >= header.regions) {
    throw new InvalidRegionError(
      `${call}: region must be a whole number from 0 to ${header.regions - 1} (this slab has ${header.regions}), ` +
        `got ${describeValue(region)}. Leave it out to claim the first free region.`,
    );
  }
  return region;
}

/**
 * Options of {@link claimRegion}: which region, and the arena's own options.
 *
 * @example
 * ```ts
 * import { claimRegion, createSharedSlab, type ClaimOptions } from '@pol/arena';
 * const options: ClaimOptions = { region: 1, checked: true, alignment: 64 };
 * const arena = claimRegion(createSharedSlab({ regions: 2, regionByteLength: 1024 }), options);
 * ```
 */
export interface ClaimOptions {
  /** The region to claim; default: the first free one. */
  readonly region?: number;
  /** The arena's alignment, relative to the region's first byte (a multiple of 256 in the slab). Default 256. */
  readonly alignment?: number;
  /** Checked mode for the arena (see `new Arena`). */
  readonly checked?: boolean;
}

/**
 * Claim a region of a shared slab for this thread, and get an arena over it. The claim is one
 * `Atomics.compareExchange` on the region's claim word, so of any number of threads claiming one
 * region at once exactly one wins; the others are refused with `ContendedError`, and the winner is
 * untouched. The arena carves only from its region and takes no atomics on its hot path.
 * `arena.dispose()` releases the claim (another thread may claim the region then); a checked
 * arena's arrays die at that moment, so a view kept past the claim refuses reads. Each claim's arena
 * starts at a new epoch (the region's generation).
 *
 * @throws {InvalidSlabError} for a slab `createSharedSlab` did not make.
 * @throws {InvalidRegionError} for a region index outside the slab.
 * @throws {ContendedError} when the region (or, without one, every region) is claimed.
 * @example
 * ```ts
 * import { ContendedError, claimRegion, createSharedSlab } from '@pol/arena';
 * const slab = createSharedSlab({ regions: 1, regionByteLength: 1024 });
 * const holder = claimRegion(slab, { region: 0 });
 * try {
 *   claimRegion(slab, { region: 0 }); // another worker, say
 * } catch (e) {
 *   console.log(e instanceof ContendedError); // true
 * }
 * holder.dispose();
 * console.log(claimRegion(slab).epoch); // 2: the region's second claim
 * ```
 */
export function claimRegion(slab: SharedArrayBuffer, options?: ClaimOptions): Arena<'host'> {
  const call = 'claimRegion(slab, options)';
  const header = headerOf(slab, call);
  const o = readOptions(call, options, ['region', 'alignment', 'checked']);
  const words = header.words;
  // The region is checked before a token is taken: a refused call leaves the header as it was.
  const requested = o.region === undefined ? undefined : checkIndex(header, o.region, call);
  const token = nextToken(words);
  let region: number;
  if (requested !== undefined) {
    region = requested;
    const holder = Atomics.compareExchange(words, FIRST_REGION_WORD + 2 * region, 0, token);
    if (holder !== 0) throw claimed(region, header.regions, holder);
  } else {
    region = -1;
    for (let i = 0; i < header.regions; i++) {
      if (Atomics.compareExchange(words, FIRST_REGION_WORD + 2 * i, 0, token) === 0) {
        region = i;
        break;
      }
    }
    if (region < 0) {
      throw new ContendedError(
        `${call}: all ${header.regions} regions of this shared slab are claimed. ` +
          'Make the slab with a region per thread that carves, and dispose each arena when its thread is done with it.',
      );
    }
  }
  const claimWord = FIRST_REGION_WORD + 2 * region;
  // Only the holder of a claim writes its generation word, so a load and a later store suffice;
  // a refused arena (a bad option) leaves it as it was.
  const generation = (Atomics.load(words, claimWord + 1) % COUNTER_LIMIT) + 1;
  const release = (): void => {
    // Only a claim still ours: a region freed under a holder that died may have been claimed since.
    Atomics.compareExchange(words, claimWord, token, 0);
  };
  const hooks: ClaimHooks = { epoch: generation, release };
  let arena: Arena<'host'>;
  try {
    arena = new ArenaClass(slab, {
      byteOffset: header.firstOffset + region * header.stride,
      byteLength: header.regionByteLength,
      alignment: o.alignment as number | undefined,
      checked: o.checked as boolean | undefined,
      [claimKey]: hooks,
    } as never) as Arena<Kind> as Arena<'host'>;
  } catch (error) {
    release(); // a refused option: the claim is given back, and nothing changed
    throw error;
  }
  Atomics.store(words, claimWord + 1, generation);
  return arena;
}

function nextToken(words: Int32Array): number {
  return (Atomics.add(words, W_NEXT_TOKEN, 1) % COUNTER_LIMIT) + 1;
}

function claimed(region: number, regions: number, holder: number): ContendedError {
  return new ContendedError(
    `claimRegion: region ${region} of ${regions} of this shared slab is claimed by another holder (claim ${holder}), ` +
      'so another arena is carving from it. Claim another region (or leave the region out for the first free one), ' +
      'or wait until its holder disposes its arena; the holder is untouched.',
  );
}

/**
 * Free a region whose holder cannot: a worker that exited or threw while holding its claim (its
 * arena is gone with it, and its claim word stays set, so nobody could claim the region again). Only
 * for a holder that is known to be gone: the region's next claim may carve over what a live holder
 * still uses. Returns whether the region was claimed.
 *
 * @throws {InvalidSlabError} for a slab `createSharedSlab` did not make.
 * @throws {InvalidRegionError} for a region index outside the slab.
 * @example
 * ```ts
 * import { claimRegion, createSharedSlab, freeRegion } from '@pol/arena';
 * const slab = createSharedSlab({ regions: 1, regionByteLength: 1024 });
 * claimRegion(slab); // say, in a worker that then crashed
 * console.log(freeRegion(slab, 0), freeRegion(slab, 0)); // true false
 * ```
 */
export function freeRegion(slab: SharedArrayBuffer, region: number): boolean {
  const header = headerOf(slab, 'freeRegion(slab, region)');
  const i = checkIndex(header, region, 'freeRegion(slab, region)');
  return Atomics.exchange(header.words, FIRST_REGION_WORD + 2 * i, 0) !== 0;
}

/**
 * The layout of a shared slab and which of its regions are claimed now.
 *
 * @throws {InvalidSlabError} for a slab `createSharedSlab` did not make.
 * @example
 * ```ts
 * import { claimRegion, createSharedSlab, describeSharedSlab } from '@pol/arena';
 * const slab = createSharedSlab({ regions: 3, regionByteLength: 512 });
 * claimRegion(slab, { region: 1 });
 * const d = describeSharedSlab(slab);
 * console.log(d.regions, d.regionByteLength, d.claimed); // 3 512 [ false, true, false ]
 * ```
 */
export function describeSharedSlab(slab: SharedArrayBuffer): SharedSlabDescription {
  const header = headerOf(slab, 'describeSharedSlab(slab)');
  const byteOffsets: number[] = [];
  const claimedNow: boolean[] = [];
  const generations: number[] = [];
  for (let i = 0; i < header.regions; i++) {
    byteOffsets.push(header.firstOffset + i * header.stride);
    claimedNow.push(Atomics.load(header.words, FIRST_REGION_WORD + 2 * i) !== 0);
    generations.push(Atomics.load(header.words, FIRST_REGION_WORD + 2 * i + 1));
  }
  return Object.freeze({
    regions: header.regions,
    regionByteLength: header.regionByteLength,
    byteOffsets: Object.freeze(byteOffsets),
    claimed: Object.freeze(claimedNow),
    generations: Object.freeze(generations),
  });
}
