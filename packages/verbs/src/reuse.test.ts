// What a verb remembers between calls (the spaces it was called on first, and what each plan made
// last from each space) against a verb that remembers nothing: random sequences of calls on two
// arenas, a frame of one, Similar and the ambient space, with throws and retracts in between, must
// give the same arrays, the same errors and the same arena states as the same calls each made
// through a new verb (whose every call is its first), and every object a verb hands out must stay
// as it was handed out.
import { Arena, mark, retract } from '@pol/arena';
import { describe, type HostArray, hostArray, Similar, type Space, scratchspace, Undef, withspace } from '@pol/core';
import fc from 'fast-check';
import { expect, describe as group, test } from 'vitest';
import { Allocating } from './allocating.js';
import { KnownSpaces, type Made } from './reuse.js';

type F32 = HostArray<'float32'>;
type AnyVerb = (...args: unknown[]) => Record<string, unknown>;

class Refused extends Error {}

// Three kernels, described as softmax is (an output, and scratch or a checkpoint), one of which
// throws on a negative first element: the call then rolls back.
const kernels = [
  describe(
    function copyInto(out: { y: F32 }, x: F32, options: { tmp: F32 }): void {
      options.tmp.data.set(x.data);
      out.y.data.set(options.tmp.data);
    },
    { outputs: (x: F32) => ({ y: Undef(x) }), scratch: (x: F32) => ({ tmp: Undef(x) }) },
  ),
  describe(
    function doubleInto(out: { y: F32 }, x: F32, options: { saved: F32 }): void {
      for (let i = 0; i < x.data.length; i++) out.y.data[i] = 2 * (x.data[i] ?? 0);
      options.saved.data.set(x.data);
    },
    { outputs: (x: F32) => ({ y: Undef(x) }), checkpoints: (x: F32) => ({ saved: Undef(x) }) },
  ),
  describe(
    function refuseNegativeInto(out: { y: F32; z: F32 }, x: F32, options: { tmp: F32 }): void {
      if ((x.data[0] ?? 0) < 0) throw new Refused('negative');
      options.tmp.data.fill(1);
      out.y.data.set(x.data);
      out.z.data.fill(3);
    },
    {
      outputs: (x: F32) => ({ y: Undef(x), z: Undef('float32', [2]) }),
      scratch: (x: F32) => ({ tmp: Undef(x) }),
    },
  ),
];

type Where = 'arena0' | 'arena1' | 'frame0' | 'ambient1' | 'similar';
type Op =
  | { readonly kind: 'call'; readonly verb: number; readonly where: Where; readonly input: number; readonly own: boolean }
  | { readonly kind: 'retract'; readonly arena: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('call' as const),
      verb: fc.integer({ min: 0, max: kernels.length - 1 }),
      where: fc.constantFrom<Where>('arena0', 'arena1', 'frame0', 'ambient1', 'similar'),
      input: fc.integer({ min: 0, max: 3 }),
      own: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('retract' as const), arena: fc.integer({ min: 0, max: 1 }) }) },
);

// The inputs: two shapes, and a negative first element (which one kernel refuses).
const inputs = [[1, 2, 3], [4, 5, 6, 7, 8], [-1, 2, 3], [9]].map((v) => hostArray(Float32Array.from(v)));

/** One world: its arenas and their start marks, and how it makes the verb for a call. */
function world(verbFor: (k: number) => AnyVerb) {
  const arenas = [new Arena(new ArrayBuffer(1 << 12), { alignment: 16 }), new Arena(new ArrayBuffer(1 << 12), { alignment: 16 })];
  const starts = arenas.map((a) => mark(a));
  // The caller's own buffer for `y`, one per input shape: passed by name when `own`.
  const own = inputs.map((x) => hostArray(new Float32Array(x.data.length)));
  const run = (op: Op): unknown => {
    if (op.kind === 'retract') {
      retract(arenas[op.arena] as Arena<'host'>, starts[op.arena] as ReturnType<typeof mark>);
      return 'retracted';
    }
    const verb = verbFor(op.verb);
    const x = inputs[op.input] as F32;
    const args: unknown[] = op.own ? [x, { y: own[op.input] }] : [x];
    const on = (space: Space) => verb(space, ...args);
    try {
      switch (op.where) {
        case 'arena0':
          return on(arenas[0] as Arena<'host'>);
        case 'arena1':
          return on(arenas[1] as Arena<'host'>);
        case 'frame0':
          // Twice on one frame: the second is a steady call on the frame.
          return scratchspace(arenas[0] as Arena<'host'>, (frame) => {
            on(frame);
            return on(frame);
          });
        case 'ambient1':
          return withspace(arenas[1] as Arena<'host'>, () => verb(...args));
        default:
          return on(Similar(x));
      }
    } catch (error) {
      return error;
    }
  };
  const state = () => arenas.map((a) => ({ ...a.describe(), frameMarks: [...a.describe().frameMarks] }));
  return { run, state, arenas };
}

// What a call returned, as the two worlds can compare it: each array's place in its slab (or that
// it is not in one), its dims and its values; or the error's class and message.
function observed(value: unknown, arenas: readonly Arena<'host'>[]): unknown {
  if (value instanceof Error) return { error: value.constructor.name, message: value.message };
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [name, a] of Object.entries(value as Record<string, F32>)) {
    const slab = arenas.findIndex((arena) => arena.slab === a.data.buffer);
    out[name] = { slab, offset: slab < 0 ? -1 : a.data.byteOffset, dims: [...a.dims], data: Array.from(a.data) };
  }
  return out;
}

group('what a verb remembers between calls', () => {
  test('random calls, throws and retracts give what a verb that remembers nothing gives, and handed-out objects never change', () => {
    fc.assert(
      fc.property(fc.array(opArb, { minLength: 1, maxLength: 40 }), (ops) => {
        const kept = kernels.map((k) => Allocating(k) as unknown as AnyVerb);
        const steady = world((k) => kept[k] as AnyVerb);
        const fresh = world((k) => Allocating(kernels[k] as never) as unknown as AnyVerb);
        const handedOut: { readonly object: Record<string, unknown>; readonly entries: [string, unknown][] }[] = [];
        for (const op of ops) {
          const a = steady.run(op);
          const b = fresh.run(op);
          expect(observed(a, steady.arenas)).toEqual(observed(b, fresh.arenas));
          expect(steady.state()).toEqual(fresh.state());
          if (op.kind === 'call' && !(a instanceof Error)) {
            const object = a as Record<string, unknown>;
            handedOut.push({ object, entries: Object.entries(object) });
            // On Similar every result is a fresh object.
            if (op.where === 'similar') expect(handedOut.filter((h) => h.object === object)).toHaveLength(1);
          }
        }
        for (const { object, entries } of handedOut) expect(Object.entries(object)).toEqual(entries);
      }),
      { numRuns: 200 },
    );
  });
});

group('KnownSpaces', () => {
  test('remembers a space with the plan and Made record of its last call, weakly, and nothing else', () => {
    const known = new KnownSpaces();
    const arena = new Arena(new ArrayBuffer(256));
    const plan = {};
    const made: Made = { result: undefined, returned: undefined, options: undefined, optionKeys: [] };
    expect(known.get(arena)).toBeUndefined();
    expect(known.get(42)).toBeUndefined();
    expect(known.get(undefined)).toBeUndefined();
    known.add(arena, plan, made, false);
    const record = known.get(arena);
    expect(record?.plan).toBe(plan);
    expect(record?.made).toBe(made);
    expect(known.get(new Arena(new ArrayBuffer(256)))).toBeUndefined();
  });

  test('a verb recognises a space it was called on before by identity, on every calling convention after', () => {
    const verb = Allocating(kernels[0] as never) as unknown as AnyVerb;
    const arena = new Arena(new ArrayBuffer(1 << 12));
    const start = mark(arena);
    const x = inputs[0] as F32;
    const first = verb(arena, x);
    retract(arena, start);
    expect(verb(arena, x)).toBe(first); // the same arrays: the same object
    retract(arena, start);
    // Ambient and unscoped calls of the same verb still resolve their space on every call.
    const ambient = withspace(arena, () => verb(x));
    expect(ambient.y).toBe(first.y);
    retract(arena, start);
    expect((verb(x).y as F32).data.buffer).not.toBe(arena.slab);
  });
});
