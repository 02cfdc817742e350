import type { Arena } from '@pol/arena';
import { type ArrayOf, type DType, describe, type HostArray, type Kind, outputs, type Space, Undef } from '@pol/core';
import { expectTypeOf, describe as group, test } from 'vitest';
import { Allocating } from './allocating.js';
import { rmsNorm, rmsNormBackward, softmax, type softmaxInto, trainStep } from './examples/index.js';
import { outParameters } from './out-parameters.js';
import type { Verb, VerbOptions, VerbResult } from './signature.js';
import './test-support/device-kind.js';

type F32 = HostArray<'float32'>;
type F64 = HostArray<'float64'>;
declare const arena: Arena<'host'>;
declare const space: Space;
declare const x: F32;
declare const w: F32;
declare const x64: F64;
declare const deviceSpace: Space<'device'>;

group('a verb derived from a described kernel', () => {
  test('space-first, ambient and unscoped calls return the outputs, typed', () => {
    expectTypeOf(softmax(arena, x)).toEqualTypeOf<{ y: F32 }>();
    expectTypeOf(softmax(space, x)).toEqualTypeOf<{ y: F32 }>();
    expectTypeOf(softmax(x)).toEqualTypeOf<{ y: F32 }>();
    expectTypeOf(softmax(x).y).toEqualTypeOf<F32>();
  });

  test('options: every described name is optional and typed; the kernel options keep their types', () => {
    expectTypeOf<VerbOptions<typeof softmaxInto>>().toEqualTypeOf<{ tmp?: F32 | undefined; y?: F32 | undefined }>();
    softmax(x, { y: x });
    softmax(arena, x, { tmp: x, y: undefined });
    rmsNorm(x, w, { eps: 1e-6 });
    rmsNorm(arena, x, w, { rstd: w, y: x });
  });

  test('checkpoints are returned beside the outputs', () => {
    expectTypeOf(rmsNorm(arena, x, w)).toEqualTypeOf<{ y: F32; rstd: F32 }>();
    expectTypeOf(rmsNormBackward(arena, x, x, w, w)).toEqualTypeOf<{ dx: F32; dw: F32 }>();
    expectTypeOf(trainStep).parameter(0).not.toBeAny();
  });

  test('wrong inputs and options do not compile', () => {
    // @ts-expect-error: a string is not an input
    softmax('x');
    // @ts-expect-error: a number is not an input
    softmax(arena, 1);
    // @ts-expect-error: the input is missing
    softmax(arena);
    // @ts-expect-error: a float64 array where the kernel takes float32
    softmax(x64);
    // @ts-expect-error: too many inputs
    rmsNorm(x, w, x, w);
    // @ts-expect-error: a float64 buffer for a float32 output
    softmax(x, { y: x64 });
    // @ts-expect-error: an option the kernel does not take
    softmax(x, { nope: 1 });
    // @ts-expect-error: an option of the wrong type
    rmsNorm(x, w, { eps: 'small' });
    // @ts-expect-error: an array where the options object goes
    softmax(x, x);
    // @ts-expect-error: not a function
    Allocating(42);
  });

  test('the verb keeps its kernel, and nothing in its signature is any', () => {
    expectTypeOf(softmax.kernel).toEqualTypeOf<typeof softmaxInto>();
    expectTypeOf(softmax).toEqualTypeOf<Verb<typeof softmaxInto>>();
    expectTypeOf<VerbResult<typeof softmaxInto>>().not.toBeAny();
    expectTypeOf<VerbOptions<typeof softmaxInto>>().not.toBeAny();
    expectTypeOf(softmax).parameters.not.toBeAny();
  });
});

group('kernel shapes', () => {
  test('an async kernel gives a verb returning a promise of the result', () => {
    const slow = Allocating(describe(async (_o: { y: F32 }, _x: F32) => {}, { outputs: (x: F32) => ({ y: Undef(x) }) }));
    expectTypeOf(slow(x)).toEqualTypeOf<Promise<{ y: F32 }>>();
  });

  test('required kernel options (nothing described to fill them) make the options argument required', () => {
    const sgd = Allocating((_o: object, _p: F32, _g: F32, _opts: { lr: number; momentum?: F32 }) => {});
    sgd(x, w, { lr: 0.1 });
    // @ts-expect-error: lr is required
    sgd(x, w);
    // @ts-expect-error: lr is required
    sgd(x, w, {});
    expectTypeOf(sgd(x, w, { lr: 1 })).toEqualTypeOf<Record<never, never>>();
  });

  test('a kernel that declares no options takes only caller buffers', () => {
    const copy = Allocating(describe((_o: { y: F32 }, _x: F32) => {}, { outputs: (x: F32) => ({ y: Undef(x) }) }));
    copy(x, { y: x });
    // @ts-expect-error: no such option
    copy(x, { eps: 1 });
  });

  test('a kernel with no descriptions: empty result; options admit nothing but {}', () => {
    const touch = Allocating((_o: object, _x: F32) => {});
    expectTypeOf(touch(x)).toEqualTypeOf<Record<never, never>>();
    touch(x, {});
    // @ts-expect-error: nothing to pass
    touch(x, { y: x });
  });

  test('a kernel described through the registries (types unknown): every buffer name becomes optional', () => {
    const k = (_o: { y: F32 }, _x: F32, _opts: { eps: number; tmp: F32 }) => {};
    outputs.define(k, (x: F32) => ({ y: Undef(x) }));
    const verb = Allocating(k);
    expectTypeOf(verb(x, { eps: 1 })).toEqualTypeOf<{ y: F32 }>();
    verb(x, { tmp: x, eps: 1, y: x });
    // @ts-expect-error: a scalar option stays required
    verb(x);
    // @ts-expect-error: still typed
    verb(x, { eps: 'one' });
  });

  test('an optional input before the options', () => {
    const biased = Allocating(
      describe((_o: { y: F32 }, _x: F32, _bias?: F32, _opts?: { scale?: number }) => {}, {
        outputs: (x: F32) => ({ y: Undef(x) }),
      }),
    );
    biased(x);
    biased(x, w);
    biased(x, undefined, { scale: 2 });
    biased(x, w, { scale: 2, y: x });
  });
});

declare function multiply2(out: Float32Array, a: Float32Array, b: Float32Array): Float32Array;
declare function invert2(out: Float32Array, a: Float32Array): Float32Array | null;
declare function minmax(lo: Float64Array, hi: Float64Array, a: Float64Array, scale?: number): void;

group('outParameters', () => {
  test('the verb takes the inputs after the outputs (host arrays too) and keeps the return value', () => {
    const multiply = Allocating(outParameters(multiply2, { outputs: (a: Float32Array) => ({ out: Undef(a) }) }));
    expectTypeOf(multiply(arena, x.data, x)).toEqualTypeOf<{ out: F32; returned: Float32Array }>();
    const invert = Allocating(outParameters(invert2, { outputs: (a: Float32Array) => ({ out: Undef(a) }) }));
    expectTypeOf(invert(x).returned).toEqualTypeOf<Float32Array | null>();
    invert(x, { out: x });
    // @ts-expect-error: an input too many
    invert(x, x);
    // @ts-expect-error: a float64 array where the function takes float32
    multiply(x64, x);
  });

  test('several outputs are dropped from the function’s parameters, in order', () => {
    const bounds = Allocating(outParameters(minmax, { outputs: (a: Float64Array) => ({ lo: Undef(a), hi: Undef(a) }) }));
    expectTypeOf(bounds(x64).lo).toEqualTypeOf<F64>();
    bounds(x64, 2);
    expectTypeOf(bounds(x64, 2).returned).toEqualTypeOf<void>();
  });
});

group('Allocating options', () => {
  test('checked is a boolean', () => {
    Allocating(softmax.kernel, { checked: true });
    // @ts-expect-error: not an option
    Allocating(softmax.kernel, { chekced: true });
    expectTypeOf(Allocating(softmax.kernel, {})).toEqualTypeOf<Verb<typeof softmaxInto>>();
  });
});

// What a kernel written in plain JavaScript, without annotations, looks like to TypeScript (with
// checkJs, or in an editor): every parameter is `any` (core's Kernel is the contextual type).
group('an unannotated kernel (plain JavaScript)', () => {
  // biome-ignore lint/suspicious/noExplicitAny: this is the type an unannotated JavaScript parameter has.
  type Any = any;

  test('its parameters are any, not never: its body type-checks', () => {
    describe(
      function softmaxInto(out, x, { tmp }) {
        expectTypeOf(out).toBeAny();
        expectTypeOf(x).toBeAny();
        expectTypeOf(tmp).toBeAny();
      },
      { outputs: (x) => ({ y: Undef(x) }), scratch: (x) => ({ tmp: Undef(x) }) },
    );
  });

  test('with scratch described, its last parameter is the options object: verb(x), verb(space, x), verb(x, { tmp })', () => {
    const jsSoftmax = Allocating(
      describe((_out: Any, _x: Any, _options: Any) => {}, {
        outputs: (x: Any) => ({ y: Undef(x) }),
        scratch: (x: Any) => ({ tmp: Undef(x) }),
      }),
    );
    expectTypeOf(jsSoftmax(x)).toHaveProperty('y');
    // A host or GPU array (the space is not known from an untyped call): here a HostArray<any> or GpuArray<any>.
    expectTypeOf(jsSoftmax(arena, x).y).toMatchTypeOf<ArrayOf<Kind, DType>>();
    jsSoftmax(arena, x, { tmp: x });
    expectTypeOf(jsSoftmax(x)).not.toHaveProperty('tmp');
  });

  test('the result is as precise as the describers make it: the names and dtypes, in arrays of the kind the call implies', () => {
    const jsCast = Allocating(
      describe((_out: Any, _x: Any) => {}, { outputs: (x: Any) => ({ y: Undef('float64', x.dims), n: Undef('int32', 1) }) }),
    );
    // Unscoped: Similar of the first array input, a host array.
    expectTypeOf(jsCast(x)).toEqualTypeOf<{ y: F64; n: HostArray<'int32'> }>();
    // On a space: its kind.
    expectTypeOf(jsCast(arena, x)).toEqualTypeOf<{ y: F64; n: HostArray<'int32'> }>();
    expectTypeOf(jsCast(deviceSpace, x).y).toEqualTypeOf<ArrayOf<'device', 'float64'>>();
    // Nothing says: any kind.
    expectTypeOf(jsCast(space, x).y).toEqualTypeOf<ArrayOf<Kind, 'float64'>>();
    expectTypeOf(jsCast(3).y).toEqualTypeOf<ArrayOf<Kind, 'float64'>>();
  });

  test('without scratch or checkpoints, trailing unannotated parameters may be passed or left out', () => {
    const jsScale = Allocating(describe((_out: Any, _x: Any, _k: Any) => {}, { outputs: (x: Any) => ({ y: Undef(x) }) }));
    jsScale(x);
    jsScale(x, 2);
    jsScale(arena, x, 2);
    expectTypeOf(jsScale(x)).toHaveProperty('y');
  });

  test('annotated kernels keep their precise signatures', () => {
    // @ts-expect-error: softmax takes a host array, not a number
    softmax(arena, 3);
    expectTypeOf(softmax(x)).toEqualTypeOf<{ y: F32 }>();
  });
});
