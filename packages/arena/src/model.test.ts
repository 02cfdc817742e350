import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { setDenseLimits } from './carve-cache.js';
import { setClockLimit } from './clock.js';
import { type Config, type Op, outcomes, runProgram, type Shape } from './test-support/model.js';
import { slabNames } from './test-support/slabs.js';

// The default run checks 10,000 programs; POL_SOAK=1 checks 300,000, POL_SOAK=<n> checks n.
const soak = process.env.POL_SOAK;
const programs = soak === undefined || soak === '' || soak === '0' ? 10_000 : soak === '1' ? 300_000 : Number(soak);

const shape: fc.Arbitrary<Shape> = fc.record({
  dtype: fc.constantFrom('float32', 'float64', 'int8', 'uint8', 'int16', 'uint16', 'int32', 'uint32'),
  // Mostly small arrays; now and then one that leaves a gap of many windows before the next carve.
  dims: fc.oneof(
    { weight: 9, arbitrary: fc.array(fc.integer({ min: 0, max: 6 }), { maxLength: 3 }) },
    { weight: 1, arbitrary: fc.tuple(fc.integer({ min: 40, max: 160 })) },
  ),
});

const config: fc.Arbitrary<Config> = fc.record({
  slab: fc.constantFrom(...slabNames),
  base: fc.integer({ min: 0, max: 9 }),
  capacity: fc.integer({ min: 0, max: 1536 }),
  alignment: fc.constantFrom(1, 2, 4, 8, 16, 64, 256),
  checked: fc.boolean(),
  forgetful: fc.boolean(),
  region: fc.boolean(),
  // Up to sixteen shapes, so that one offset holds many (the cache keeps them all). Capacities up
  // to 1,536 with alignments down to 1 have more aligned offsets than a first level's first 256
  // slots, so carves spread over them remake it (its windows follow their spacing).
  palette: fc.array(shape, { minLength: 1, maxLength: 16 }),
});

const target = fc.oneof({ weight: 4, arbitrary: fc.constant(-3) }, fc.constant(-1), fc.integer({ min: 0, max: 5 }));

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant('alloc'),
      via: target,
      shape: fc.nat(15),
      fallible: fc.boolean(),
      byLength: fc.boolean(),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('spec'), via: target, shapes: fc.array(fc.nat(15), { maxLength: 4 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('save'), via: target }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('rollback'), token: fc.nat(20), via: target }) },
  { weight: 3, arbitrary: fc.constant({ kind: 'mark' } as const) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('retract'), mark: fc.nat(9) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'foreign' } as const) },
  { weight: 1, arbitrary: fc.constant({ kind: 'reset' } as const) },
  { weight: 1, arbitrary: fc.constant({ kind: 'forget' } as const) },
  { weight: 1, arbitrary: fc.constant({ kind: 'grow' } as const) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('open'),
      on: target,
      ambient: fc.oneof({ weight: 3, arbitrary: fc.constant(-3) }, fc.constant(-2), target),
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('close'), frame: target }) },
);

// Run `runs` random programs against the model; then check that each of `outcomes` happened more
// than `atLeast` times (so that the programs reached what the test says they test).
function checkPrograms(runs: number, expected: readonly string[], atLeast: number): void {
  outcomes.clear();
  fc.assert(
    fc.property(config, fc.array(op, { minLength: 4, maxLength: 40, size: 'max' }), (c, ops) => runProgram(c, ops)),
    { numRuns: runs },
  );
  for (const outcome of expected) expect(outcomes.get(outcome) ?? 0, outcome).toBeGreaterThan(atLeast);
}

describe('model-based: random programs against a reference model', () => {
  test(
    `${programs} programs of alloc, tryAlloc, specs, marks, retracts, resets, frames, savepoints, forgetting the cache and memory grows, on whole slabs and regions, agree with the model and never touch a byte outside the region`,
    () => {
      // Every kind of outcome actually happened, many times over.
      checkPrograms(
        programs,
        [
          'alloc',
          'alloc by length',
          'spec',
          'retract',
          'reset',
          'forget',
          'open',
          'open nested',
          'close',
          'tryAlloc undefined',
          'refused POL_ARENA_FULL',
          'refused POL_FRAME_ORDER',
          'refused POL_FRAME_CLOSED',
          'refused POL_CONTENDED',
          'refused POL_STALE_MARK',
          'refused POL_MARK_ABOVE_OFFSET',
          'refused POL_FOREIGN_MARK',
          'save',
          'rollback',
          'refused POL_INVALID_ARGUMENT',
          'grow',
          'region intact',
        ],
        programs / 100,
      );
    },
    soak === undefined ? undefined : 24 * 3600 * 1000,
  );

  test.each([
    [2, 1],
    [3, 1],
    [5, 2],
    [32, 4],
  ])(
    'random programs agree with the model when the cache has at most %i windows and refines them past %i table entries, so that carves rebuild its first level',
    (windows, refineAt) => {
      // A cache's first level is made again when a carve reaches past its end at a new spacing,
      // past the most windows it may have, or when most entries are in the table (carve-cache.ts),
      // with an armed savepoint's rollback kept exact. Small slabs and limits make that frequent.
      const before = setDenseLimits(windows, refineAt);
      try {
        checkPrograms(Math.ceil(programs / 5), ['alloc', 'spec', 'retract', 'rollback', 'forget'], programs / 500);
      } finally {
        setDenseLimits(...before);
      }
    },
    soak === undefined ? undefined : 24 * 3600 * 1000,
  );

  test.each([1, 3, 40])(
    'random programs agree with the model when the clock renumbers its readings once past %i',
    (ticks) => {
      // An arena renumbers every clock reading it holds when its clock reaches the limit, and marks
      // carry theirs forward when next used (clock.ts). With a limit of 1 every tick renumbers; with
      // 3 or 40, every few ticks. The order of readings across renumberings then decides every
      // staleness, frame-order and rollback refusal, and every checked death.
      const before = setClockLimit(ticks);
      try {
        checkPrograms(
          Math.ceil(programs / 5),
          ['retract', 'rollback', 'refused POL_FRAME_ORDER', 'refused POL_STALE_MARK', 'refused POL_INVALID_ARGUMENT'],
          programs / 500,
        );
      } finally {
        setClockLimit(before);
      }
    },
    soak === undefined ? undefined : 24 * 3600 * 1000,
  );
});
