import { expect, describe as group, it } from 'vitest';
import { scopeFrame } from './backend.js';
import {
  alloc,
  checkpoints,
  type Describer,
  describe,
  type HostArray,
  hostArray,
  InvalidArgumentError,
  InvalidDescriptionError,
  isUndef,
  type Kernel,
  NotAFrameError,
  NotASpaceError,
  outputs,
  type PolError,
  Similar,
  type Space,
  type Spec,
  scratch,
  scratchspace,
  Undef,
} from './index.js';
import { countingSpace, InjectedFailure, transactionalSpace } from './test-support/fixtures.js';

type F32 = HostArray<'float32'>;
const host = Similar(new Float32Array(0));

/** A fresh kernel each time: the registries are keyed by function identity. */
function makeKernel(): (o: { y: F32 }, x: F32, opts: { tmp?: F32; rstd?: F32 }) => void {
  return function kernel(o, x, opts) {
    o.y.data.set(x.data);
    void opts;
  };
}

/** A kernel whose inputs are not typed, for tests that register describers with `define`. */
function looseKernel(): (...args: unknown[]) => void {
  return function kernel(): void {};
}

group('describe-only forms', () => {
  it('outputs, checkpoints and scratch return the spec their describer gives for the inputs', () => {
    const kernel = describe(makeKernel(), {
      outputs: (x: F32) => ({ y: Undef(x) }),
      checkpoints: (x: F32) => ({ rstd: Undef('float32', x.dims[0] ?? 0) }),
      scratch: (x: F32, opts: { width: number }) => ({ tmp: Undef(x.dtype, opts.width) }),
    });
    const x = hostArray(new Float32Array(6), [3, 2]);
    const out = outputs(kernel, x);
    expect(isUndef(out.y)).toBe(true);
    expect(out.y.dims).toEqual([3, 2]);
    expect(checkpoints(kernel, x).rstd.dims).toEqual([3]);
    expect(scratch(kernel, x, { width: 5 }).tmp.dims).toEqual([5]);
  });

  it('a kernel with no describer for a lifetime has an empty spec', () => {
    const kernel = describe(makeKernel(), { outputs: (x: F32) => ({ y: Undef(x) }) });
    const x = hostArray(new Float32Array(2));
    expect(checkpoints(kernel, x, {})).toEqual({});
    expect(scratch(kernel, x, {})).toEqual({});
    const bare = looseKernel();
    expect(outputs(bare, hostArray(new Float32Array(1)))).toEqual({});
    expect(outputs.has(bare)).toBe(false);
  });

  it('arrays in a returned spec pass through untouched, and specs nest', () => {
    const mine = hostArray(new Float32Array(2));
    const kernel = looseKernel();
    outputs.define(kernel, (x: F32) => ({ y: mine, group: { a: Undef(x), b: { c: Undef('int8', 1) } } }));
    const spec = outputs(kernel, mine) as { y: F32; group: { a: Undef; b: { c: Undef } } };
    expect(spec.y).toBe(mine);
    expect(spec.group.a.dims).toEqual([2]);
    expect(spec.group.b.c.dtype).toBe('int8');
  });

  it('passes every argument after the kernel to the describer', () => {
    const kernel = looseKernel();
    const seen: unknown[][] = [];
    checkpoints.define(kernel, ((...args: unknown[]) => {
      seen.push(args);
      return {};
    }) as Describer);
    const x = new Float32Array(1);
    checkpoints(kernel, x, { eps: 1e-5 }, 7);
    checkpoints(host, kernel, x, 'more');
    expect(seen).toEqual([
      [x, { eps: 1e-5 }, 7],
      [x, 'more'],
    ]);
  });
});

group('materializing forms', () => {
  it('outputs(space, f, ...) and checkpoints(space, f, ...) materialize into any space', () => {
    const kernel = describe(makeKernel(), {
      outputs: (x: F32) => ({ y: Undef(x) }),
      checkpoints: (x: F32) => ({ rstd: Undef('float32', x.dims[0] ?? 0), saved: { m: Undef('float64', 1) } }),
    });
    const space = countingSpace();
    const x = hostArray(new Float32Array(4), [4]);
    const { y } = outputs(space, kernel, x);
    expect(y.dims).toEqual([4]);
    expect(y.data).toBeInstanceOf(Float32Array);
    const cp = checkpoints(space, kernel, x);
    expect(cp.rstd.dims).toEqual([4]);
    expect(cp.saved.m.data).toBeInstanceOf(Float64Array);
    expect(space.calls).toEqual([
      { dtype: 'float32', dims: [4] },
      { dtype: 'float32', dims: [4] },
      { dtype: 'float64', dims: [1] },
    ]);
    // the kernel runs on what was materialized
    x.data.set([1, 2, 3, 4]);
    kernel({ y }, x, {});
    expect([...y.data]).toEqual([1, 2, 3, 4]);
  });

  it('scratch(frame, f, ...) materializes into a frame', () => {
    const kernel = describe(makeKernel(), { scratch: (x: F32) => ({ tmp: Undef(x) }) });
    const x = hostArray(new Float32Array(3));
    let tmp: F32 | undefined;
    scratchspace(host, (frame) => {
      tmp = scratch(frame, kernel, x).tmp;
      expect(tmp.dims).toEqual([3]);
    });
    expect(tmp?.data).toBeInstanceOf(Float32Array);
    const frame = scopeFrame(countingSpace());
    expect(scratch(frame, kernel, x).tmp.dims).toEqual([3]);
    frame.close();
  });

  it('passes arrays through by identity when materializing', () => {
    const mine = hostArray(new Float32Array(2));
    const kernel = looseKernel();
    outputs.define(kernel, (x: F32) => ({ y: mine, nested: { z: Undef(x) } }));
    const space = countingSpace();
    const out = outputs(space, kernel, mine) as { y: F32; nested: { z: F32 } };
    expect(out.y).toBe(mine);
    expect(out.nested.z).not.toBe(mine);
    expect(space.calls).toHaveLength(1);
  });

  it('a kernel with no describer materializes to an empty object, allocating nothing', () => {
    const space = countingSpace();
    const bare = looseKernel();
    expect(outputs(space, bare)).toEqual({});
    expect(checkpoints(space, bare)).toEqual({});
    scratchspace(space, (frame) => {
      expect(scratch(frame, bare)).toEqual({});
    });
    expect(space.calls).toEqual([]);
  });

  it('is all or nothing: a failure part-way rolls back on a space with savepoints', () => {
    const kernel = looseKernel();
    outputs.define(kernel, () => ({ a: Undef('int8', 1), b: Undef('int8', 2), c: Undef('int8', 3) }));
    const space = transactionalSpace();
    space.failAt(3);
    expect(() => outputs(space, kernel)).toThrow(InjectedFailure);
    expect(space.live).toEqual([]);
  });
});

group('define, has, describe', () => {
  it('define registers, has answers, and define again replaces', () => {
    const kernel = looseKernel();
    expect(outputs.has(kernel)).toBe(false);
    outputs.define(kernel, () => ({ y: Undef('float32', 1) }));
    expect(outputs.has(kernel)).toBe(true);
    expect(checkpoints.has(kernel)).toBe(false);
    expect(scratch.has(kernel)).toBe(false);
    outputs.define(kernel, () => ({ y: Undef('int8', 2) }));
    expect((outputs(kernel) as { y: Undef }).y.dtype).toBe('int8');
  });

  it('each registry knows its lifetime', () => {
    expect(outputs.lifetime).toBe('outputs');
    expect(checkpoints.lifetime).toBe('checkpoints');
    expect(scratch.lifetime).toBe('scratch');
  });

  it('describe registers each given lifetime and returns the kernel itself', () => {
    const kernel = looseKernel();
    const described = describe(kernel, { outputs: () => ({}), scratch: () => ({}) });
    expect(described).toBe(kernel);
    expect(outputs.has(kernel)).toBe(true);
    expect(checkpoints.has(kernel)).toBe(false);
    expect(scratch.has(kernel)).toBe(true);
  });

  it('describe again replaces the lifetimes it names and keeps the others', () => {
    const kernel = looseKernel();
    describe(kernel, { outputs: () => ({ y: Undef('float32', 1) }), scratch: () => ({ t: Undef('float32', 1) }) });
    describe(kernel, { outputs: () => ({ y: Undef('float64', 1) }) });
    expect((outputs(kernel) as { y: Undef }).y.dtype).toBe('float64');
    expect((scratch(kernel) as { t: Undef }).t.dtype).toBe('float32');
  });
});

group('bad input', () => {
  it.each([
    ['a number', 5, /returned something that is not a spec: a spec must be a plain object/],
    ['null', null, /a spec must be a plain object of Undefs, arrays and nested specs, got null/],
    ['an Undef instead of a spec of them', Undef('float32', 1), /got an Undef/],
    ['an array', [Undef('float32', 1)], /got an array of length 1/],
    ['a spec with a bad value', { y: Undef('float32', 1), layers: { w: 'big' } }, /layers\.w is 'big'/],
  ])('a describer returning %s throws InvalidDescriptionError, allocating nothing', (_what, returned, message) => {
    const kernel = function badKernel(): void {};
    outputs.define(kernel, (() => returned) as unknown as Describer);
    const space = countingSpace();
    expect(() => outputs(kernel)).toThrow(InvalidDescriptionError);
    expect(() => outputs(kernel)).toThrow(message);
    expect(() => outputs(kernel)).toThrow(
      /The outputs describer of kernel 'badKernel' returned something that is not a spec.*A describer returns a plain object of Undefs, arrays and nested specs, such as \{ y: Undef\(x\) \}/,
    );
    expect(() => outputs(space, kernel)).toThrow(InvalidDescriptionError);
    expect(space.calls).toEqual([]);
    try {
      outputs(kernel);
      expect.unreachable();
    } catch (error) {
      expect((error as PolError).code).toBe('POL_INVALID_DESCRIPTION');
      expect((error as PolError).name).toBe('InvalidDescriptionError');
    }
  });

  it('names an anonymous kernel as such', () => {
    const kernel = ((): (() => void) => () => {})();
    scratch.define(kernel, (() => 3) as unknown as Describer);
    expect(() => scratch(kernel)).toThrow(/The scratch describer of an anonymous kernel returned/);
  });

  it('scratch materializes into a Frame only: NotAFrameError for an ordinary space or a plain object', () => {
    const kernel = looseKernel();
    scratch.define(kernel, () => ({ tmp: Undef('float32', 2) }));
    const space = countingSpace();
    for (const notAFrame of [space, host, {}, 42, null]) {
      expect(() => scratch(notAFrame as never, kernel)).toThrow(NotAFrameError);
    }
    expect(() => scratch(host as never, kernel)).toThrow(
      /scratch\(frame, f, \.\.\.\) materializes only into a Frame, got Similar\(float32\[0\] on host\): scratch lifetime is frame lifetime\. Open one with scratchspace\(space, \(frame\) => scratch\(frame, f, \.\.\.args\)\)/,
    );
    expect(() => scratch({} as never, kernel)).toThrow(/got a plain object/);
    expect(space.calls).toEqual([]);
    try {
      scratch(space as never, kernel);
      expect.unreachable();
    } catch (error) {
      expect((error as PolError).code).toBe('POL_NOT_A_FRAME');
    }
  });

  it('outputs and checkpoints refuse a first argument that is neither a kernel nor a space', () => {
    expect(() => outputs({} as Space, looseKernel())).toThrow(NotASpaceError);
    expect(() => checkpoints(42 as unknown as Space, looseKernel())).toThrow(/checkpoints needs a space, got 42/);
  });

  it('refuses a missing kernel after the space with InvalidArgumentError', () => {
    expect(() => outputs(host, 'kernel' as unknown as Kernel)).toThrow(InvalidArgumentError);
    expect(() => outputs(host, undefined as unknown as Kernel)).toThrow(
      /outputs\(space, f, \.\.\.args\) needs the kernel function as f, got undefined/,
    );
    scratchspace(host, (frame) => {
      expect(() => scratch(frame, 3 as unknown as Kernel)).toThrow(InvalidArgumentError);
    });
  });

  it('define refuses a kernel or describer that is not a function, keeping the old describer', () => {
    const kernel = looseKernel();
    const original = (): Spec => ({ y: Undef('float32', 1) });
    outputs.define(kernel, original);
    expect(() => outputs.define(kernel, 'nope' as unknown as Describer)).toThrow(InvalidDescriptionError);
    expect(() => outputs.define(kernel, undefined as unknown as Describer)).toThrow(
      /outputs\.define\(kernel 'kernel', describer\) needs a describer function, got undefined/,
    );
    expect(() => checkpoints.define({} as Kernel, original)).toThrow(
      /checkpoints\.define\(kernel, describer\) needs the kernel function first/,
    );
    expect((outputs(kernel) as { y: Undef }).y.dtype).toBe('float32');
  });

  it('describe with an unknown lifetime registers nothing, not even the valid lifetimes beside it', () => {
    const kernel = looseKernel();
    expect(() =>
      describe(kernel, { outputs: () => ({}), scratch: () => ({}), shadows: () => ({}) } as unknown as { outputs: Describer }),
    ).toThrow(InvalidDescriptionError);
    expect(() => describe(kernel, { output: () => ({}) } as unknown as { outputs: Describer })).toThrow(
      /got an unknown lifetime 'output'\. The lifetimes are 'outputs', 'checkpoints' and 'scratch'\./,
    );
    expect(outputs.has(kernel)).toBe(false);
    expect(checkpoints.has(kernel)).toBe(false);
    expect(scratch.has(kernel)).toBe(false);
  });

  it('describe with a describer that is not a function registers nothing, and keeps earlier ones', () => {
    const kernel = looseKernel();
    describe(kernel, { checkpoints: () => ({ r: Undef('int8', 1) }) });
    expect(() => describe(kernel, { outputs: () => ({}), checkpoints: 5 } as unknown as { outputs: Describer })).toThrow(
      /got 5 for 'checkpoints'; each lifetime takes a describer function/,
    );
    expect(outputs.has(kernel)).toBe(false);
    expect((checkpoints(kernel) as { r: Undef }).r.dtype).toBe('int8');
  });

  it('describe with a describer that reads badly (a getter that throws) registers nothing', () => {
    const kernel = looseKernel();
    const failure = new InjectedFailure('cannot read scratch');
    const descriptions = {
      outputs: () => ({ y: Undef('float32', 1) }),
      checkpoints: () => ({ r: Undef('float32', 1) }),
      get scratch(): Describer {
        throw failure;
      },
    };
    expect(() => describe(kernel, descriptions)).toThrow(failure);
    expect(outputs.has(kernel)).toBe(false);
    expect(checkpoints.has(kernel)).toBe(false);
    expect(scratch.has(kernel)).toBe(false);
  });

  it('describe reads each lifetime once: a getter that answers differently on a second read cannot slip through', () => {
    const kernel = looseKernel();
    let reads = 0;
    const descriptions = {
      get outputs(): Describer {
        reads++;
        return (reads === 1 ? () => ({ y: Undef('int8', 1) }) : 'not a function') as Describer;
      },
    };
    describe(kernel, descriptions);
    expect(reads).toBe(1);
    expect((outputs(kernel) as { y: Undef }).y.dtype).toBe('int8');
  });

  it('describe checks inherited lifetimes too, registering nothing when one is not a function', () => {
    const kernel = looseKernel();
    const descriptions = Object.assign(Object.create({ scratch: 'tmp' }) as object, { outputs: () => ({}) });
    expect(() => describe(kernel, descriptions)).toThrow(/got 'tmp' for 'scratch'/);
    expect(outputs.has(kernel)).toBe(false);
    const inherited = Object.create({ outputs: () => ({ y: Undef('uint8', 2) }) }) as object;
    describe(kernel, inherited);
    expect((outputs(kernel) as { y: Undef }).y.dims).toEqual([2]);
  });

  it('describe with a proxy whose read throws part-way registers nothing', () => {
    const kernel = looseKernel();
    const target = { outputs: () => ({}), checkpoints: () => ({}), scratch: () => ({}) };
    const proxy = new Proxy(target, {
      get(t, key, receiver) {
        if (key === 'checkpoints') throw new InjectedFailure('revoked');
        return Reflect.get(t, key, receiver);
      },
    });
    expect(() => describe(kernel, proxy)).toThrow(InjectedFailure);
    expect(outputs.has(kernel) || checkpoints.has(kernel) || scratch.has(kernel)).toBe(false);
  });

  it('describe refuses a kernel that is not a function, and descriptions that are not an object', () => {
    expect(() => describe('k' as unknown as Kernel, {})).toThrow(InvalidDescriptionError);
    expect(() => describe('k' as unknown as Kernel, {})).toThrow(
      /describe\(kernel, descriptions\) needs the kernel function first, got 'k'/,
    );
    const kernel = looseKernel();
    expect(() => describe(kernel, null as unknown as object)).toThrow(
      /needs an object such as \{ outputs, checkpoints, scratch \}/,
    );
  });
});

group('the kernel convention end to end', () => {
  it('outputs from the unframed space outlive the frame that held scratch', () => {
    const softmaxInto = describe(
      function softmaxInto(o: { y: F32 }, x: F32, opts: { tmp: F32 }): void {
        let max = Number.NEGATIVE_INFINITY;
        for (const v of x.data) max = Math.max(max, v);
        let sum = 0;
        x.data.forEach((v, i) => {
          const e = Math.exp(v - max);
          opts.tmp.data[i] = e;
          sum += e;
        });
        opts.tmp.data.forEach((v, i) => {
          o.y.data[i] = v / sum;
        });
      },
      {
        outputs: (x: F32) => ({ y: Undef(x) }),
        scratch: (x: F32) => ({ tmp: Undef(x) }),
      },
    );
    const x = hostArray(new Float32Array([1, 2, 3]));
    const space = Similar(x);
    const outs = outputs(space, softmaxInto, x);
    const frameOut = scratchspace(space, (frame) => {
      const s = scratch(frame, softmaxInto, x);
      softmaxInto(outs, x, s);
      return frame;
    });
    expect(frameOut.isOpen).toBe(false);
    const total = outs.y.data.reduce((a, b) => a + b, 0);
    expect(total).toBeCloseTo(1, 5);
    expect(outs.y.data[2]).toBeGreaterThan(outs.y.data[1] ?? 1);
    expect(alloc(space, 'float32', 1).dims).toEqual([1]);
  });
});
