import {
  type Described,
  type Describer,
  type DType,
  describe,
  dtypeOfTypedArray,
  type HostArray,
  InvalidDescriptionError,
  isArray,
  type Materialize,
  type TypedArrayOf,
} from '@pol/core';
import { describeValue } from '@pol/core/backend';
import { HostDataRequiredError, NotAKernelError } from './errors.js';
import type { Returning } from './signature.js';

/** What a verb needs to know of a kernel made by {@link outParameters}. */
export interface Adapter {
  /** The result's name for the function's return value. */
  readonly returns: string;
}

const adapters = new WeakMap<object, Adapter>();
const ADAPTER: Adapter = Object.freeze({ returns: 'returned' });

/** The adapter facts of `kernel`, when `outParameters` made it. */
export function adapterOf(kernel: object): Adapter | undefined {
  return adapters.get(kernel);
}

/**
 * The describers an out-parameter function takes: its outputs, which it is handed positionally.
 *
 * @example
 * ```ts
 * import { Undef } from '@pol/core';
 * import type { OutParameterDescriptions } from '@pol/verbs';
 * const descriptions: OutParameterDescriptions = { outputs: () => ({ out: Undef('float32', 16) }) }; // a 4×4 matrix
 * ```
 */
export interface OutParameterDescriptions {
  /** The outputs, in the order the function takes them (first), as a spec of Undefs. */
  readonly outputs: Describer;
}

type UnionToIntersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;
type LastOf<U> = UnionToIntersection<U extends unknown ? () => U : never> extends () => infer R ? R : never;
/** How many members a union of names has. */
type CountOf<U, Counted extends unknown[] = []> = [U] extends [never]
  ? Counted['length']
  : CountOf<Exclude<U, LastOf<U>>, [...Counted, U]>;
/** `T` without its first `N` elements. */
type Drop<T extends readonly unknown[], N extends number, Dropped extends unknown[] = []> = Dropped['length'] extends N
  ? T
  : T extends readonly [unknown?, ...infer Rest]
    ? Drop<Rest, N, [...Dropped, unknown]>
    : T;
/** A host array whose data a parameter typed `P` accepts. */
type HostArrayFor<P> = { [D in DType]: TypedArrayOf<D> extends P ? HostArray<D> : never }[DType];
type Widen<T extends readonly unknown[]> = { [K in keyof T]: T[K] | HostArrayFor<T[K]> };

type Outputs<D extends OutParameterDescriptions> = Materialize<ReturnType<D['outputs']>, 'host'>;
/** `F`'s parameters after its outputs, each also accepting a host array of the TypedArray it takes. */
type InputsOf<F extends (...args: never[]) => unknown, D extends OutParameterDescriptions> =
  Drop<Parameters<F>, CountOf<keyof Outputs<D>>> extends infer I extends readonly unknown[] ? Widen<I> : never;

/**
 * The kernel {@link outParameters} makes from `F`: it takes the outputs object, then `F`'s
 * parameters after its outputs (a host array wherever `F` takes its TypedArray), and returns what
 * `F` returns, which its verb keeps under `returned`.
 *
 * @example
 * ```ts
 * import { Undef } from '@pol/core';
 * import type { OutParametersKernel } from '@pol/verbs';
 * declare function negate(out: Float32Array, a: Float32Array): Float32Array;
 * const descriptions = { outputs: (a: Float32Array) => ({ out: Undef(a) }) };
 * type Negate = OutParametersKernel<typeof negate, typeof descriptions>; // (outs: { out: HostArray<'float32'> }, a: Float32Array | HostArray<'float32'>) => Float32Array
 * ```
 */
export type OutParametersKernel<F extends (...args: never[]) => unknown, D extends OutParameterDescriptions> = Described<
  (outs: Outputs<D>, ...inputs: InputsOf<F, D>) => ReturnType<F>,
  { readonly outputs: D['outputs'] }
> &
  Returning<ReturnType<F>>;

/**
 * Adapt a function in the positional out-parameter style of many libraries (gl-matrix's
 * `mat4.multiply(out, a, b)`, ndarray-style ops) into a Pol kernel, for `Allocating`: the kernel
 * passes the `data` of each described output positionally, first and in the order the outputs
 * spec names them, then the verb's inputs (a host array as its `data`), and keeps what the
 * function returns. Its verb returns the outputs and, under `returned`, that return value
 * (gl-matrix's `invert` returns `null` for a singular matrix).
 *
 * The outputs must have host data (a HostArray or a TypedArray, from a host space or passed by the
 * caller). Only outputs can be described: a positional function has no options object to carry
 * checkpoints or scratch. For a function that takes its output elsewhere than first (stdlib's
 * BLAS), write the kernel yourself: `(outs, a, b) => gemm(..., a.data, b.data, outs.c.data, ...)`.
 *
 * @throws {NotAKernelError} when `fn` is not a function.
 * @throws {InvalidDescriptionError} for descriptions other than `{ outputs }`.
 * @example
 * ```ts
 * import { hostArray, Undef } from '@pol/core';
 * import { Allocating, outParameters } from '@pol/verbs';
 * // A 2×2 inverse in gl-matrix's style: null when the matrix is singular.
 * function invert2(out: Float32Array, a: Float32Array): Float32Array | null {
 *   const det = (a[0] ?? 0) * (a[3] ?? 0) - (a[1] ?? 0) * (a[2] ?? 0);
 *   if (det === 0) return null;
 *   out.set([(a[3] ?? 0) / det, -(a[1] ?? 0) / det, -(a[2] ?? 0) / det, (a[0] ?? 0) / det]);
 *   return out;
 * }
 * const invert = Allocating(outParameters(invert2, { outputs: (a: Float32Array) => ({ out: Undef(a) }) }));
 * const { out, returned } = invert(Float32Array.of(2, 0, 0, 4));
 * console.log(out.data, returned === out.data); // Float32Array(4) [ 0.5, -0, -0, 0.25 ] true
 * console.log(invert(hostArray(Float32Array.of(1, 2, 2, 4))).returned); // null
 * ```
 */
export function outParameters<F extends (...args: never[]) => unknown, const D extends OutParameterDescriptions>(
  fn: F,
  descriptions: D,
): OutParametersKernel<F, D> {
  if (typeof fn !== 'function') {
    throw new NotAKernelError(
      `outParameters(fn, descriptions) needs the out-parameter function fn(out, ...inputs), got ${describeValue(fn)}.`,
    );
  }
  const name = fn.name === '' ? 'anonymous function' : fn.name;
  const d: unknown = descriptions;
  if (typeof d !== 'object' || d === null || typeof (d as { outputs?: unknown }).outputs !== 'function') {
    throw new InvalidDescriptionError(
      `outParameters(${name}, descriptions) needs { outputs: (...inputs) => ({ out: Undef(...) }) }, got ${describeValue(d)}.`,
    );
  }
  for (const key of Object.keys(d)) {
    if (key !== 'outputs') {
      throw new InvalidDescriptionError(
        `outParameters(${name}, descriptions) takes outputs only, got '${key}': a positional function has no options object ` +
          'to receive checkpoints or scratch. Describe them as outputs it takes positionally, or write the kernel yourself.',
      );
    }
  }
  const target = fn as unknown as (...args: unknown[]) => unknown;
  // The function's arguments, in an array reused from call to call (a fresh one if the function
  // calls back into this kernel before returning).
  const spare: unknown[] = [];
  let busy = false;
  const kernel = (outs: Record<string, unknown>, ...inputs: unknown[]): unknown => {
    const args = busy ? [] : spare;
    const own = args === spare;
    busy = true;
    let n = 0;
    try {
      for (const key in outs) args[n++] = hostData(name, key, outs[key], 'output');
      for (let i = 0; i < inputs.length; i++) {
        const input = inputs[i];
        args[n++] = isArray(input) ? hostData(name, `input ${i + 1}`, input, 'input') : input;
      }
      args.length = n;
      return target.apply(undefined, args);
    } finally {
      for (let i = 0; i < n; i++) args[i] = undefined;
      if (own) busy = false;
    }
  };
  Object.defineProperty(kernel, 'name', { value: fn.name, configurable: true });
  describe(kernel, { outputs: (d as OutParameterDescriptions).outputs });
  adapters.set(kernel, ADAPTER);
  return kernel as unknown as OutParametersKernel<F, D>;
}

// The TypedArray to hand a positional function for `value`: itself, or a host array's data.
function hostData(fn: string, name: string, value: unknown, role: 'output' | 'input'): unknown {
  if (dtypeOfTypedArray(value) !== undefined) return value;
  const data = (value as { readonly data?: unknown }).data;
  if (dtypeOfTypedArray(data) !== undefined) return data;
  throw new HostDataRequiredError(
    fn,
    name,
    `Allocating(${fn}): the ${role} '${name}' is ${describeValue(value)}, which has no host data to pass to ${fn} positionally. ` +
      (role === 'output'
        ? 'Call the verb on a host space (an Arena over host memory, Similar of a host array), or pass a HostArray or TypedArray of your own under that name.'
        : 'Pass a HostArray or a TypedArray.'),
  );
}
