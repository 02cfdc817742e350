// Plain-JavaScript mistakes, made as a newcomer makes them (the types are cast away: TypeScript
// refuses every one of these calls). Each is a typed error naming the verb and the parameter, and
// each leaves the arena exactly as it was.
import { Arena } from '@pol/arena';
import { describe, type HostArray, hostArray, InvalidArgumentError, InvalidDescriptionError, PolError, Undef } from '@pol/core';
import { expect, describe as group, test } from 'vitest';
import { Allocating } from './allocating.js';
import {
  BareTypedArrayError,
  ExtraInputError,
  MisplacedSpaceError,
  MissingInputError,
  NoSpaceError,
  VerbArgumentError,
} from './errors.js';
import { linear, relu, softmax } from './examples/index.js';
import { caught } from './test-support/caught.js';

type F32 = HostArray<'float32'>;
type Loose = (...args: unknown[]) => unknown;
const js = (verb: unknown): Loose => verb as Loose;
const f32 = (values: number[], dims?: number[]): F32 => hostArray(Float32Array.from(values), dims);

function arenaState(arena: Arena) {
  const d = arena.describe();
  return { offset: d.offset, watermark: d.watermark, openFrames: d.openFrames };
}

/** Run `call`, expect a `type` naming `verb`, `parameter` and `argument`, and an arena left as it was. */
function refused<E extends VerbArgumentError>(
  arena: Arena,
  call: () => unknown,
  type: new (...args: never[]) => E,
  code: string,
  where: { readonly verb: string; readonly parameter: string; readonly argument: number },
  ...fragments: string[]
): E {
  const before = arenaState(arena);
  const error = caught(() => call());
  expect(error).toBeInstanceOf(type);
  expect(error).toBeInstanceOf(VerbArgumentError);
  expect(error).toBeInstanceOf(PolError);
  const e = error as E;
  expect({ code: e.code, verb: e.verb, parameter: e.parameter, argument: e.argument }).toEqual({ code, ...where });
  for (const fragment of fragments) expect(e.message).toContain(fragment);
  expect(arenaState(arena)).toEqual(before);
  return e;
}

group('a space in the wrong place', () => {
  test('softmax(x, arena): the space names where it went, and that it goes first', () => {
    const arena = new Arena(new ArrayBuffer(1 << 12));
    refused(
      arena,
      () => js(softmax)(f32([1, 2]), arena),
      MisplacedSpaceError,
      'POL_MISPLACED_SPACE',
      {
        verb: 'softmaxInto',
        parameter: 'options',
        argument: 2,
      },
      'Allocating(softmaxInto) got a space',
      'takes its space first',
    );
  });

  test('refused on every call, not only the first with that shape', () => {
    const arena = new Arena(new ArrayBuffer(1 << 12));
    const x = f32([1, 2]);
    softmax(arena, x);
    for (let i = 0; i < 2; i++) {
      refused(arena, () => js(softmax)(x, arena), MisplacedSpaceError, 'POL_MISPLACED_SPACE', {
        verb: 'softmaxInto',
        parameter: 'options',
        argument: 2,
      });
    }
  });
});

group('an extra input', () => {
  test('softmax(arena, x, x)', () => {
    const arena = new Arena(new ArrayBuffer(1 << 12));
    const x = f32([1, 2]);
    refused(
      arena,
      () => js(softmax)(arena, x, x),
      ExtraInputError,
      'POL_EXTRA_INPUT',
      {
        verb: 'softmaxInto',
        parameter: 'input 2',
        argument: 3,
      },
      'called with 2 inputs',
      'takes 1 input (x) and an options object',
      'float32[2]',
    );
  });

  test('softmax(arena, x, undefined) is softmax(arena, x): a trailing undefined is no argument; one with an argument after it is an input', () => {
    const arena = new Arena(new ArrayBuffer(1 << 12));
    const x = f32([1, 2]);
    const a = softmax(arena, x).y;
    arena.reset();
    expect(js(softmax)(arena, x, undefined, undefined)).toEqual({ y: a });
    arena.reset();
    refused(arena, () => js(softmax)(arena, x, undefined, {}), ExtraInputError, 'POL_EXTRA_INPUT', {
      verb: 'softmaxInto',
      parameter: 'input 2',
      argument: 3,
    });
  });

  test('a kernel without options: relu(arena, x, x)', () => {
    const arena = new Arena(new ArrayBuffer(1 << 12));
    const x = f32([1, 2]);
    refused(arena, () => js(relu)(arena, x, x), ExtraInputError, 'POL_EXTRA_INPUT', {
      verb: 'reluInto',
      parameter: 'input 2',
      argument: 3,
    });
  });

  test('not refused: an optional input, a kernel that takes any number of arguments, options after the inputs', () => {
    const arena = new Arena(new ArrayBuffer(1 << 12));
    const x = f32([1, 2]);
    const biased = Allocating(
      describe((out: { y: F32 }, x: F32, _bias?: F32) => out.y.data.set(x.data), { outputs: (x: F32) => ({ y: Undef(x) }) }),
    );
    expect(js(biased)(arena, x, undefined)).toMatchObject({ y: { dims: [2] } });
    const sum = (out: { y: F32 }, ...xs: F32[]) => out.y.data.fill(xs.length);
    const variadic = Allocating(describe(sum, { outputs: (x: F32) => ({ y: Undef(x) }) }));
    expect(Array.from((js(variadic)(arena, x, x, x) as { y: F32 }).y.data)).toEqual([3, 3]);
    expect(softmax(arena, x, { y: f32([0, 0]) }).y.dims).toEqual([2]);
  });

  test('a call with more than eight arguments reaches the kernel whole', () => {
    const seen: unknown[] = [];
    const many = Allocating(
      describe(
        (out: { y: F32 }, ...xs: number[]) => {
          seen.push(...xs);
          out.y.data.fill(xs.length);
        },
        { outputs: () => ({ y: Undef('float32', [1]) }) },
      ),
    );
    const arena = new Arena(new ArrayBuffer(1 << 12));
    const args = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
    expect(Array.from((js(many)(arena, ...args) as { y: F32 }).y.data)).toEqual([10]);
    expect(seen).toEqual(args);
  });

  test('a call of twelve arguments or more is refused with InvalidArgumentError: a verb reads eleven', () => {
    const arena = new Arena(new ArrayBuffer(1 << 12));
    const many = Allocating(
      describe((out: { y: F32 }, ..._xs: number[]) => out.y.data.fill(1), { outputs: () => ({ y: Undef('float32', [1]) }) }),
    );
    const eleven = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11];
    const before = arenaState(arena);
    for (const extra of [[], [12]]) {
      const e = caught(() => js(many)(arena, ...eleven, ...extra));
      expect(e).toBeInstanceOf(InvalidArgumentError);
      expect(e).toBeInstanceOf(PolError);
      expect((e as Error).message).toMatch(/takes at most 11 arguments .*Pass the inputs grouped/);
      expect(arenaState(arena)).toEqual(before);
    }
  });
});

group('too few inputs', () => {
  test('softmax(arena): the missing input is named, with what the describer said', () => {
    const arena = new Arena(new ArrayBuffer(1 << 12));
    const e = refused(
      arena,
      () => js(softmax)(arena),
      MissingInputError,
      'POL_MISSING_INPUT',
      {
        verb: 'softmaxInto',
        parameter: 'x',
        argument: 2,
      },
      "its input 'x' (argument 2) is missing",
      'takes 1 input (x) and an options object',
    );
    expect(e.cause).toBeInstanceOf(PolError);
  });

  test('softmax(arena, undefined) (no input: a trailing undefined is no argument), softmax() and relu(arena)', () => {
    const arena = new Arena(new ArrayBuffer(1 << 12));
    refused(
      arena,
      () => js(softmax)(arena, undefined),
      MissingInputError,
      'POL_MISSING_INPUT',
      {
        verb: 'softmaxInto',
        parameter: 'x',
        argument: 2,
      },
      "its input 'x' (argument 2) is missing",
    );
    refused(arena, () => js(softmax)(), MissingInputError, 'POL_MISSING_INPUT', {
      verb: 'softmaxInto',
      parameter: 'x',
      argument: 1,
    });
    refused(arena, () => js(relu)(arena), MissingInputError, 'POL_MISSING_INPUT', {
      verb: 'reluInto',
      parameter: 'x',
      argument: 2,
    });
  });

  test('a describer that returns no spec is the error, not the options parameter it looks like an input without', () => {
    // (out, x, options) with only outputs described: the verb cannot tell `options` from an input.
    const arena = new Arena(new ArrayBuffer(1 << 12));
    const before = arena.describe();
    const notASpec = Allocating(
      describe(function notASpec(_out: { y: F32 }, _x: F32, _options: object) {}, { outputs: () => 42 as never }),
    );
    const e = caught(() => js(notASpec)(arena, f32([1, 2])));
    expect(e).toBeInstanceOf(InvalidDescriptionError);
    expect((e as Error).message).toMatch(
      /The outputs describer of kernel 'notASpec' returned something that is not a spec: .*got 42/,
    );
    const badValue = Allocating(
      describe(function badValue(_out: { y: F32 }, _x: F32, _options: object) {}, { outputs: () => ({ y: 5 }) as never }),
    );
    expect((caught(() => js(badValue)(arena, f32([1, 2]))) as Error).message).toMatch(/y is 5, but a spec value must be/);
    expect(arena.describe()).toEqual(before);
  });

  test('not refused: an optional input the describers do without', () => {
    const biased = Allocating(
      describe((out: { y: F32 }, x: F32, bias?: F32) => out.y.data.set(x.data.map((v, i) => v + (bias?.data[i] ?? 0))), {
        outputs: (x: F32) => ({ y: Undef(x) }),
      }),
    );
    expect(Array.from(biased(f32([1, 2])).y.data)).toEqual([1, 2]);
  });

  test('no input, no space, nothing ambient, but nothing missing either: NoSpaceError', () => {
    const zeros = Allocating(
      describe((out: { y: F32 }) => out.y.data.fill(0), { outputs: () => ({ y: Undef('float32', [2]) }) }),
    );
    expect(() => zeros()).toThrow(NoSpaceError);
  });
});

group('a bare TypedArray where the kernel reads a host array', () => {
  test('softmax(Float32Array.of(1, 2)): named, with the kernel’s TypeError as the cause', () => {
    const arena = new Arena(new ArrayBuffer(1 << 12));
    const e = refused(
      arena,
      () => js(softmax)(Float32Array.of(1, 2)),
      BareTypedArrayError,
      'POL_BARE_TYPED_ARRAY',
      {
        verb: 'softmaxInto',
        parameter: 'x',
        argument: 1,
      },
      'is a bare Float32Array(2)',
      'hostArray(x)',
    );
    expect(e.cause).toBeInstanceOf(TypeError);
  });

  test('on an arena: the output the call took is rolled back', () => {
    const arena = new Arena(new ArrayBuffer(1 << 12));
    refused(arena, () => js(softmax)(arena, Float32Array.of(1, 2)), BareTypedArrayError, 'POL_BARE_TYPED_ARRAY', {
      verb: 'softmaxInto',
      parameter: 'x',
      argument: 2,
    });
  });

  test('inside a plain-object input, when the describers fail on it', () => {
    const arena = new Arena(new ArrayBuffer(1 << 12));
    const layer = { w: f32([1, 2], [2, 1]), b: Float32Array.of(0) };
    refused(
      arena,
      () => js(linear)(arena, layer, f32([1, 2], [1, 2])),
      BareTypedArrayError,
      'POL_BARE_TYPED_ARRAY',
      {
        verb: 'linearInto',
        parameter: 'layer.b',
        argument: 2,
      },
      'the describers failed',
    );
  });

  test('not refused: a kernel that takes bare TypedArrays; and a kernel’s own failure is its own', () => {
    const double = Allocating(
      describe((out: { y: F32 }, x: Float32Array) => out.y.data.set(x.map((v) => 2 * v)), {
        outputs: (x: Float32Array) => ({ y: Undef(x) }),
      }),
    );
    expect(Array.from(double(Float32Array.of(1, 2)).y.data)).toEqual([2, 4]);
    const failing = Allocating(
      describe(
        (_out: { y: F32 }, _x: Float32Array) => {
          throw new RangeError('mine');
        },
        { outputs: (x: Float32Array) => ({ y: Undef(x) }) },
      ),
    );
    expect(() => failing(Float32Array.of(1))).toThrow(RangeError);
  });
});
