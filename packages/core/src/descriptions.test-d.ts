import { expectTypeOf, describe as group, it } from 'vitest';
import {
  checkpoints,
  type DescribeArgs,
  type Described,
  describe,
  type HostArray,
  outputs,
  Similar,
  type Spec,
  type SpecOf,
  scratch,
  scratchspace,
  Undef,
} from './index.js';

type F32 = HostArray<'float32'>;
const host = Similar(new Float32Array(0));

const norm = describe(
  function norm(o: { y: F32 }, x: F32, opts: { eps: number; rstd: F32; tmp: F32 }): void {
    void o;
    void x;
    void opts;
  },
  {
    outputs: (x: F32) => ({ y: Undef(x) }),
    checkpoints: (x: F32, opts: { eps: number }) => ({ rstd: Undef('float32', x.dims[0] ?? 0), eps: Undef('float64', opts.eps) }),
    scratch: (x: F32) => ({ tmp: Undef(x), parts: { p: Undef('int32', 4), keep: x } }),
  },
);

group('describe', () => {
  it('returns the kernel typed with its describers', () => {
    expectTypeOf(norm).toExtend<(o: { y: F32 }, x: F32, opts: { eps: number; rstd: F32; tmp: F32 }) => void>();
    expectTypeOf(norm).toExtend<Described<typeof norm, { outputs: (x: F32) => { y: Undef<'float32'> } }>>();
  });

  it('checks that describers are functions returning specs', () => {
    // @ts-expect-error a describer returns a spec
    describe((o: object) => o, { outputs: () => 5 });
    // @ts-expect-error an unknown lifetime
    describe((o: object) => o, { shadows: () => ({}) });
  });
});

group('describe-only forms', () => {
  const x = {} as F32;
  it('give the describer’s spec type', () => {
    expectTypeOf(outputs(norm, x)).toEqualTypeOf<{ y: Undef<'float32'> }>();
    expectTypeOf(checkpoints(norm, x, { eps: 1 })).toEqualTypeOf<{ rstd: Undef<'float32'>; eps: Undef<'float64'> }>();
    expectTypeOf(scratch(norm, x)).toEqualTypeOf<{ tmp: Undef<'float32'>; parts: { p: Undef<'int32'>; keep: F32 } }>();
  });

  it('check the describer’s argument types', () => {
    // @ts-expect-error the outputs describer takes an F32
    outputs(norm, new Float32Array(1));
    // @ts-expect-error the checkpoints describer needs its options
    checkpoints(norm, x);
    // @ts-expect-error eps is a number
    checkpoints(norm, x, { eps: 'small' });
  });

  it('a described kernel without a describer for a lifetime has an empty spec', () => {
    const only = describe((o: { y: F32 }, x: F32) => [o, x], { outputs: (x: F32) => ({ y: Undef(x) }) });
    expectTypeOf(scratch(only, x)).toEqualTypeOf<Record<never, never>>();
    expectTypeOf<SpecOf<typeof only, 'checkpoints'>>().toEqualTypeOf<Record<never, never>>();
  });

  it('an undescribed kernel has the general Spec type and takes the kernel’s inputs', () => {
    const plain = (o: { y: F32 }, x: F32, n: number): void => void [o, x, n];
    expectTypeOf(outputs(plain, x, 2)).toEqualTypeOf<Spec>();
    expectTypeOf<DescribeArgs<typeof plain, 'outputs'>>().toEqualTypeOf<[x: F32, n: number]>();
  });
});

group('materializing forms', () => {
  const x = {} as F32;
  it('outputs(space, f, ...) and checkpoints(space, f, ...) give arrays of the space’s kind', () => {
    expectTypeOf(outputs(host, norm, x)).toEqualTypeOf<{ y: F32 }>();
    expectTypeOf(checkpoints(host, norm, x, { eps: 1 })).toEqualTypeOf<{ rstd: F32; eps: HostArray<'float64'> }>();
  });

  it('scratch(frame, f, ...) gives arrays, passing arrays through with their own type', () => {
    scratchspace(host, (frame) => {
      expectTypeOf(scratch(frame, norm, x)).toEqualTypeOf<{ tmp: F32; parts: { p: HostArray<'int32'>; keep: F32 } }>();
    });
  });

  it('scratch materializes into a Frame only, and arguments are checked', () => {
    // @ts-expect-error a space is not a frame
    scratch(host, norm, x);
    // @ts-expect-error the outputs describer takes an F32
    outputs(host, norm, 'x');
    scratchspace(host, (frame) => {
      // @ts-expect-error the scratch describer takes an F32
      scratch(frame, norm, 3);
    });
  });
});

group('registries', () => {
  it('define takes a kernel and a describer; has answers a boolean; lifetime is literal', () => {
    expectTypeOf(outputs.lifetime).toEqualTypeOf<'outputs'>();
    expectTypeOf(scratch.has(norm)).toEqualTypeOf<boolean>();
    // @ts-expect-error a describer returns a spec
    outputs.define(norm, () => 3);
    // @ts-expect-error a kernel is a function
    outputs.define({}, () => ({}));
  });
});
