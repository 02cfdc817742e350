import { alloc, InvalidArgumentError, scratchspace, Undef } from '@pol/core';
import { openFrameKey, rollbackKey, savepointKey } from '@pol/core/backend';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import type { FrameOwner } from './frame.js';
import { Arena, type ArenaFrame, reset } from './index.js';
import { nextSequence, SAVEPOINT_RING, TOKEN_PERIOD } from './savepoint.js';
import { expectRefused } from './test-support/slabs.js';

// Typed as the arena's frames see it: the public Arena leaves core's savepoint protocol optional.
const fresh = () => new Arena(new ArrayBuffer(1 << 16), { alignment: 16 }) as FrameOwner<'host'>;

describe('savepoints', () => {
  test('a token is a number; a rollback restores the offset, the watermark and the cache', () => {
    const arena = fresh();
    const kept = arena.alloc('float32', [4]);
    reset(arena);
    const token = arena[savepointKey]();
    expect(typeof token).toBe('number');
    arena.alloc('float32', [8]); // a new shape at offset 0
    arena.alloc('float32', [1000]);
    arena[rollbackKey](token);
    expect(arena.describe()).toMatchObject({ offset: 0, watermark: 16, arraysCreated: 3 });
    expect(arena.alloc('float32', [4])).toBe(kept);
  });

  test('taking savepoints allocates no records once a loop is steady', () => {
    const arena = fresh();
    const tokens = new Set<unknown>();
    for (let i = 0; i < 100; i++) tokens.add(arena[savepointKey]());
    expect(tokens.size).toBe(100); // every token is new, though the records are reused
  });

  test('token sequence numbers wrap around before tokens leave the small integers, and never issue 0', () => {
    const issued = [TOKEN_PERIOD - 3];
    for (let i = 0; i < 4; i++) issued.push(nextSequence(issued[i] as number));
    expect(issued.slice(1)).toEqual([TOKEN_PERIOD - 2, TOKEN_PERIOD - 1, 1, 2]);
    // The largest token: a 31-bit small integer, which V8 keeps unboxed on every build.
    const largest = (TOKEN_PERIOD - 1) * SAVEPOINT_RING + (SAVEPOINT_RING - 1);
    expect(largest).toBeLessThan(2 ** 30);
    expect(nextSequence(0)).toBe(1);
  });

  test('tokens nest: an inner frame taking many savepoints never overwrites the outer one', () => {
    const arena = fresh();
    arena.alloc('uint8', [5]);
    const outer = arena[savepointKey]();
    const out = arena.alloc('float32', [4]); // the outputs
    scratchspace(arena, (frame) => {
      for (let i = 0; i < 3 * SAVEPOINT_RING; i++) {
        const inner = frame[savepointKey]?.();
        alloc(frame, 'float32', 2);
        frame[rollbackKey]?.(inner);
      }
    });
    expect(out.data.byteOffset).toBe(16);
    arena[rollbackKey](outer);
    expect(arena.describe()).toMatchObject({ offset: 5, openFrames: 0 });
  });

  test('the outer savepoint of a spec allocated through a frame still rolls back after the frame closes', () => {
    const arena = fresh();
    const outer = arena[savepointKey]();
    alloc(arena, { y: Undef('float32', 4) });
    scratchspace(arena, (frame) => {
      expect(() => alloc(frame, { a: Undef('float32', 4), b: Undef('float32', 1 << 20) })).toThrow();
      alloc(frame, { tmp: Undef('float32', 4) });
    });
    arena[rollbackKey](outer);
    // Everything since the savepoint is undone, the watermark the failed work reached included.
    expect(arena.describe()).toMatchObject({ offset: 0, watermark: 0, openFrames: 0 });
  });

  test(`a token overwritten by ${SAVEPOINT_RING} later savepoints at its depth is refused, changing nothing`, () => {
    const arena = fresh();
    const old = arena[savepointKey]();
    arena.alloc('uint8', [1]);
    for (let i = 0; i < SAVEPOINT_RING; i++) arena[savepointKey]();
    arena.alloc('uint8', [1]);
    const e = expectRefused(arena, 'POL_INVALID_ARGUMENT', () => arena[rollbackKey](old));
    expect(e).toBeInstanceOf(InvalidArgumentError);
    expect(e.message).toMatch(/cannot roll back to \d+: only to the savepoint of the allocation that just failed/);
  });

  test('refuses junk, a token of another arena, and a token whose frame has closed, changing nothing', () => {
    const arena = fresh();
    const other = fresh();
    const foreign = other[savepointKey]();
    const inFrame = scratchspace(arena, (frame) => frame[savepointKey]?.());
    arena.alloc('uint8', [1]);
    for (const token of [undefined, null, {}, 'token', -1, 0, 1.5, Number.NaN, foreign, inFrame]) {
      expectRefused(arena, 'POL_INVALID_ARGUMENT', () => arena[rollbackKey](token));
    }
    // A frame opened again at the same depth is another frame: the token stays refused.
    scratchspace(arena, (frame) => {
      expectRefused(arena, 'POL_INVALID_ARGUMENT', () => frame[rollbackKey]?.(inFrame));
    });
  });

  test('a savepoint that a later release went below is refused, like a stale mark', () => {
    const arena = fresh();
    const low = arena[savepointKey]();
    arena.alloc('uint8', [32]);
    const high = arena[savepointKey]();
    arena[rollbackKey](low); // back to 0
    arena.alloc('uint8', [64]); // the bytes above `high` are carved again
    expectRefused(arena, 'POL_INVALID_ARGUMENT', () => arena[rollbackKey](high));
  });

  test('a token from before a reset is refused', () => {
    const arena = fresh();
    const token = arena[savepointKey]();
    reset(arena);
    expectRefused(arena, 'POL_INVALID_ARGUMENT', () => arena[rollbackKey](token));
  });
});

describe('savepoint properties', () => {
  type Op =
    | { readonly kind: 'save' }
    | { readonly kind: 'alloc'; readonly n: number }
    | { readonly kind: 'open' }
    | { readonly kind: 'close' }
    | { readonly kind: 'rollback'; readonly which: number };
  const op: fc.Arbitrary<Op> = fc.oneof(
    { weight: 3, arbitrary: fc.constant({ kind: 'save' } as const) },
    { weight: 5, arbitrary: fc.record({ kind: fc.constant('alloc'), n: fc.integer({ min: 1, max: 64 }) }) },
    { weight: 1, arbitrary: fc.constant({ kind: 'open' } as const) },
    { weight: 1, arbitrary: fc.constant({ kind: 'close' } as const) },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('rollback'), which: fc.nat(40) }) },
  );

  test('tokens never confuse two savepoints: a rollback is accepted exactly when its savepoint is current, and restores it', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 80 }), (ops) => {
        const arena = fresh();
        interface Saved {
          readonly token: unknown;
          readonly depth: number;
          readonly frame: number; // which open of a frame it was taken under (-1: none)
          readonly seq: number; // savepoints taken at its depth before it
          readonly offset: number;
          readonly watermark: number;
          lowest: number; // the lowest offset the arena went back to since
        }
        const saved: Saved[] = [];
        const perDepth: number[] = [];
        const frames: { frame: ArenaFrame<'host'>; id: number; start: number }[] = [];
        const released = (to: number) => {
          for (const s of saved) s.lowest = Math.min(s.lowest, to);
        };
        let opens = 0;
        const depth = () => frames.length;
        const space = () => frames.at(-1)?.frame ?? arena;
        for (const o of ops) {
          switch (o.kind) {
            case 'save': {
              const d = depth();
              const seq = perDepth[d] ?? 0;
              perDepth[d] = seq + 1;
              const token = space()[savepointKey]?.();
              saved.push({
                token,
                depth: d,
                frame: frames.at(-1)?.id ?? -1,
                seq,
                offset: arena.offset,
                watermark: arena.watermark,
                lowest: arena.offset,
              });
              break;
            }
            case 'alloc':
              if (arena.offset + o.n <= arena.capacity) space().alloc('uint8', [o.n]);
              break;
            case 'open':
              frames.push({ frame: space()[openFrameKey]?.() as ArenaFrame<'host'>, id: opens++, start: arena.offset });
              break;
            case 'close': {
              const f = frames.pop();
              if (f === undefined) break;
              f.frame.close();
              released(f.start);
              break;
            }
            case 'rollback': {
              if (saved.length === 0) break;
              const s = saved[o.which % saved.length] as Saved;
              const current =
                s.depth === depth() &&
                s.frame === (frames.at(-1)?.id ?? -1) &&
                (perDepth[s.depth] ?? 0) - s.seq <= SAVEPOINT_RING &&
                s.offset <= arena.offset &&
                s.lowest >= s.offset; // no release below it since (it would be stale, like a mark)
              if (!current) {
                expectRefused(arena, 'POL_INVALID_ARGUMENT', () => space()[rollbackKey]?.(s.token));
                break;
              }
              space()[rollbackKey]?.(s.token);
              released(s.offset);
              expect(arena.offset).toBe(s.offset);
              expect(arena.watermark).toBe(s.watermark);
              break;
            }
          }
        }
      }),
      { numRuns: 2000 },
    );
  });
});
