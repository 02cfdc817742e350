// Functions in the positional out-parameter style of gl-matrix, stdlib and ndarray ops, written
// here in that style (no library is a dependency): out first, inputs after, the out returned.
import { Arena, mark, retract } from '@pol/arena';
import {
  describe,
  type HostArray,
  hostArray,
  InvalidDescriptionError,
  type PolArray,
  PolError,
  type Space,
  Undef,
} from '@pol/core';
import { familyKey, hostFamily, rollbackKey, savepointKey, spaceKey } from '@pol/core/backend';
import { expect, describe as group, test } from 'vitest';
import { Allocating } from './allocating.js';
import { HostDataRequiredError, NotAKernelError, OutputsWrittenError } from './errors.js';
import { outParameters } from './out-parameters.js';
import { caught } from './test-support/caught.js';

/** gl-matrix's `mat2.multiply(out, a, b)`, column-major. */
function multiply2(out: Float32Array, a: Float32Array, b: Float32Array): Float32Array {
  const [a0 = 0, a1 = 0, a2 = 0, a3 = 0] = a;
  const [b0 = 0, b1 = 0, b2 = 0, b3 = 0] = b;
  out[0] = a0 * b0 + a2 * b1;
  out[1] = a1 * b0 + a3 * b1;
  out[2] = a0 * b2 + a2 * b3;
  out[3] = a1 * b2 + a3 * b3;
  return out;
}

/** gl-matrix's `mat2.invert(out, a)`: `null` when `a` is singular, and then `out` is left as it was. */
function invert2(out: Float32Array, a: Float32Array): Float32Array | null {
  const [a0 = 0, a1 = 0, a2 = 0, a3 = 0] = a;
  const det = a0 * a3 - a2 * a1;
  if (det === 0) return null;
  out[0] = a3 / det;
  out[1] = -a1 / det;
  out[2] = -a2 / det;
  out[3] = a0 / det;
  return out;
}

/** gl-matrix's `vec2.scaleAndAdd(out, a, b, scale)`: a scalar input. */
function scaleAndAdd(out: Float32Array, a: Float32Array, b: Float32Array, scale: number): Float32Array {
  for (let i = 0; i < out.length; i++) out[i] = (a[i] ?? 0) + (b[i] ?? 0) * scale;
  return out;
}

/** Two outputs, positionally: the elementwise minimum and maximum. */
function minmax(lo: Float64Array, hi: Float64Array, a: Float64Array, b: Float64Array): void {
  for (let i = 0; i < a.length; i++) {
    lo[i] = Math.min(a[i] ?? 0, b[i] ?? 0);
    hi[i] = Math.max(a[i] ?? 0, b[i] ?? 0);
  }
}

const mat2 = (...values: number[]) => Float32Array.from(values);
const like = (a: Float32Array) => ({ out: Undef(a) });

const multiply = Allocating(outParameters(multiply2, { outputs: like }));
const invert = Allocating(outParameters(invert2, { outputs: like }));
const axpy = Allocating(outParameters(scaleAndAdd, { outputs: like }));
const bounds = Allocating(outParameters(minmax, { outputs: (a: Float64Array) => ({ lo: Undef(a), hi: Undef(a) }) }));

group('outParameters', () => {
  test('passes the outputs’ data positionally and returns the outputs beside the function’s return value', () => {
    const { out, returned } = multiply(mat2(1, 2, 3, 4), mat2(5, 6, 7, 8));
    expect(Array.from(out.data)).toEqual([23, 34, 31, 46]);
    expect(returned).toBe(out.data);
  });

  test('keeps the return value: gl-matrix’s invert says a singular matrix is one by returning null', () => {
    expect(Array.from(invert(mat2(2, 0, 0, 4)).out.data)).toEqual([0.5, -0, -0, 0.25]);
    expect(invert(mat2(1, 2, 2, 4)).returned).toBe(null);
  });

  test('scalar inputs, several outputs in the order the spec names them, host arrays as inputs', () => {
    expect(Array.from(axpy(mat2(1, 1), mat2(2, 3), 10).out.data)).toEqual([21, 31]);
    const a = hostArray(Float64Array.from([1, 5]));
    const { lo, hi, returned } = bounds(a, Float64Array.from([3, 2]));
    expect([Array.from(lo.data), Array.from(hi.data), returned]).toEqual([[1, 2], [3, 5], undefined]);
  });

  test('on an arena, the outputs come from it, steady: the same arrays and the same result every call', () => {
    const arena = new Arena(new ArrayBuffer(1 << 12));
    const start = mark(arena);
    const a = hostArray(mat2(1, 2, 3, 4));
    const first = multiply(arena, a, a);
    retract(arena, start);
    const second = multiply(arena, a, a);
    expect(second).toBe(first);
    expect(Array.from(second.out.data)).toEqual([7, 10, 15, 22]);
  });

  test('an output of the caller’s, by name, a HostArray or a bare TypedArray', () => {
    const theirs = hostArray(new Float32Array(4));
    const { out, returned } = multiply(mat2(1, 0, 0, 1), mat2(1, 2, 3, 4), { out: theirs });
    expect(out).toBe(theirs);
    expect(returned).toBe(theirs.data);
    expect(Array.from(theirs.data)).toEqual([1, 2, 3, 4]);
    // In plain JavaScript a bare TypedArray of the described length does as well.
    const mine = new Float32Array(4);
    const loose = multiply as unknown as (...args: unknown[]) => { out: unknown; returned: unknown };
    expect(loose(mat2(1, 0, 0, 1), mat2(4, 3, 2, 1), { out: mine })).toEqual({ out: mine, returned: mine });
    expect(Array.from(mine)).toEqual([4, 3, 2, 1]);
  });

  test('an output without host data is refused, and what the call took is rolled back', () => {
    // A space whose arrays have no host data, as a device's would.
    let live = 0;
    const device: Space<'host'> = {
      [spaceKey]: 'host',
      alloc(dtype, dims) {
        live++;
        return { dtype, dims, [familyKey]: hostFamily } as PolArray as never;
      },
      [savepointKey]: () => live,
      [rollbackKey]: (token: unknown) => {
        live = token as number;
      },
    };
    const error = caught(() => multiply(device, mat2(1, 0, 0, 1), mat2(1, 2, 3, 4)));
    expect(error).toBeInstanceOf(HostDataRequiredError);
    expect((error as HostDataRequiredError).buffer).toBe('out');
    expect((error as Error).message).toContain("the output 'out'");
    expect(live).toBe(0);
  });

  test('refuses what is not a function, and descriptions other than outputs', () => {
    expect(() => outParameters(42 as never, { outputs: like })).toThrow(NotAKernelError);
    expect(() => outParameters(multiply2, {} as never)).toThrow(InvalidDescriptionError);
    expect(() => outParameters(multiply2, { outputs: like, scratch: like } as never)).toThrow(
      /takes outputs only, got 'scratch'/,
    );
  });

  test('an output named returned would collide with the return value: refused when described', () => {
    const verb = Allocating(outParameters(multiply2, { outputs: (a: Float32Array) => ({ returned: Undef(a) }) }));
    expect(() => verb(mat2(1, 0, 0, 1), mat2(1, 0, 0, 1))).toThrow(expect.objectContaining({ code: 'POL_DESCRIPTION_CONFLICT' }));
  });
});

group('without the adapter', () => {
  test('a positional function described as a Pol kernel writes onto the outputs object: refused, not zeros', () => {
    const arena = new Arena(new ArrayBuffer(1 << 12));
    const wrong = Allocating(describe(multiply2, { outputs: like }));
    const before = { offset: arena.offset, watermark: arena.watermark };
    const error = caught(() => wrong(arena, mat2(1, 2, 3, 4), mat2(5, 6, 7, 8)));
    expect(error).toBeInstanceOf(OutputsWrittenError);
    expect(error).toBeInstanceOf(PolError);
    expect((error as OutputsWrittenError).key).toBe('0');
    expect((error as Error).message).toContain('outParameters(fn, { outputs })');
    expect({ offset: arena.offset, watermark: arena.watermark }).toEqual(before);
    expect(arena.describe().openFrames).toBe(0);
  });

  test('checked mode also refuses a kernel that adds, replaces the order of, or removes names of its outputs object', () => {
    type Outs = { y?: HostArray<'float32'>; extra?: number };
    const adds = Allocating(
      describe(
        (out: Outs, _x: Float32Array) => {
          out.extra = 1;
        },
        { outputs: (x: Float32Array) => ({ y: Undef(x) }) },
      ),
      { checked: true },
    );
    expect(() => adds(mat2(1))).toThrow(expect.objectContaining({ code: 'POL_OUTPUTS_WRITTEN', key: 'extra' }));
    const removes = Allocating(
      describe((out: Outs, _x: Float32Array) => void delete out.y, { outputs: (x: Float32Array) => ({ y: Undef(x) }) }),
      { checked: true },
    );
    expect(() => removes(mat2(1))).toThrow(expect.objectContaining({ code: 'POL_OUTPUTS_WRITTEN', key: 'y' }));
  });
});
