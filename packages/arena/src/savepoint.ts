/**
 * Savepoints: what an arena remembers before a spec allocation, so that one failing part-way can
 * be rolled back and leave the arena as it was. A token is a number, and the records live in small
 * reused rings, one per frame depth, so taking a savepoint allocates nothing once a loop is steady.
 *
 * @module
 */

import type { CarveCache } from './carve-cache.js';
import type { ClockReadings } from './clock.js';
import type { ReleaseLog } from './release-log.js';

/** Records kept per frame depth: how many savepoints at one depth a rollback can reach back over. */
export const SAVEPOINT_RING = 8;

/**
 * Where tokens' sequence numbers wrap: they run 1 … TOKEN_PERIOD − 1. A token is `sequence * SAVEPOINT_RING + slot`, at
 * most 2^30 − 1: a small integer on every V8 build (31-bit Smis where pointers are compressed), so
 * taking a savepoint never allocates. An unbounded count would pass 2^31 after about 270 million
 * savepoints, and every token after that would be a heap number, 16 B per savepoint.
 */
export const TOKEN_PERIOD = 2 ** 27;

/**
 * The sequence number after `last`: 1, 2, …, TOKEN_PERIOD − 1, then 1 again. One sequence for the
 * whole process, so a token never names a record of another arena (until the numbering wraps
 * around, after 134 million savepoints).
 */
export function nextSequence(last: number): number {
  return last === TOKEN_PERIOD - 1 ? 1 : last + 1;
}

let issued = 0;

/** What a savepoint remembers. Reused: `token` says which savepoint it holds now. */
export class SavepointRecord {
  token = 0;
  offset = 0;
  watermark = 0;
  epoch = 0;
  clock = 0; // the arena's clock when taken: a rollback releases carves made at or after it
  frameClock = 0; // the clock of the innermost open frame when taken (0: none)
  era = 0; // the carve cache's undo-log era when taken
  undoFrom = 0; // where this savepoint's part of the undo log starts
}

/** The records of one frame depth, all made with the ring, and the slot the next savepoint takes. */
class SavepointRing {
  next = 0;
  readonly records: readonly SavepointRecord[] = Array.from({ length: SAVEPOINT_RING }, () => new SavepointRecord());
}

/**
 * The savepoint records of one arena. A savepoint can only be rolled back while the frame that was
 * innermost when it was taken is still innermost, so records are kept per frame depth: the scratch
 * savepoints a verb takes inside its frame never overwrite the savepoint of its outputs, taken one
 * depth out. At one depth the last {@link SAVEPOINT_RING} savepoints stay valid; an older token is
 * refused, never confused with a newer savepoint (unless it is kept while the process takes another
 * {@link TOKEN_PERIOD} savepoints, and the numbering comes round to it again).
 */
export class Savepoints implements ClockReadings {
  // One ring per frame depth reached so far. Taking a savepoint is on every verb call's path: one
  // index, the ring's own slot counter, and records that are always there.
  readonly #rings: SavepointRing[] = [];

  /**
   * Take a savepoint at frame depth `depth` of an arena at `offset`, `watermark` and `epoch`, whose
   * clock now reads `clock` and whose innermost open frame opened at `frameClock` (0: none), arming
   * its carve cache's undo log (none in checked mode). Returns the token.
   */
  take(
    depth: number,
    offset: number,
    watermark: number,
    epoch: number,
    clock: number,
    frameClock: number,
    cache: CarveCache | undefined,
  ): number {
    const ring = this.#rings[depth] ?? this.#grow(depth);
    const slot = ring.next;
    ring.next = (slot + 1) % SAVEPOINT_RING;
    const record = ring.records[slot] as SavepointRecord;
    issued = nextSequence(issued);
    record.token = issued * SAVEPOINT_RING + slot;
    record.offset = offset;
    record.watermark = watermark;
    record.epoch = epoch;
    record.clock = clock;
    record.frameClock = frameClock;
    record.undoFrom = cache === undefined ? 0 : cache.arm();
    record.era = cache === undefined ? 0 : cache.era;
    return record.token;
  }

  // The ring of `depth`, made with those of every depth below it.
  #grow(depth: number): SavepointRing {
    const rings = this.#rings;
    while (rings.length <= depth) rings.push(new SavepointRing());
    return rings[depth] as SavepointRing;
  }

  /** Push the clock readings of every record onto `into` (for the clock's renumbering). */
  readings(into: number[]): void {
    for (const ring of this.#rings) for (const record of ring.records) into.push(record.clock, record.frameClock);
  }

  /** Take the clock's new numbering, which keeps the order (`to` maps each reading to its new value). */
  renumber(to: (reading: number) => number): void {
    for (const ring of this.#rings) {
      for (const record of ring.records) {
        record.clock = to(record.clock);
        record.frameClock = to(record.frameClock);
      }
    }
  }

  /**
   * The record `token` names at frame depth `depth`, if it still holds that savepoint and an arena
   * at `offset` in `epoch`, whose innermost open frame opened at `frameClock` (0: none) and whose
   * releases are `releases`, may roll back to it: else undefined.
   */
  find(
    depth: number,
    token: unknown,
    epoch: number,
    frameClock: number,
    offset: number,
    releases: ReleaseLog,
  ): SavepointRecord | undefined {
    if (typeof token !== 'number' || !Number.isSafeInteger(token) || token <= 0) return undefined;
    const record = this.#rings[depth]?.records[token % SAVEPOINT_RING];
    if (
      record === undefined ||
      record.token !== token ||
      record.epoch !== epoch ||
      record.frameClock !== frameClock ||
      record.offset > offset ||
      // Like a stale mark: a release below it since, and carves there, which it would not release.
      releases.wentBelow(record.offset, record.clock)
    ) {
      return undefined;
    }
    return record;
  }
}
