import { engageFor } from './ambient.js';
import type { Kind } from './array.js';
import { InvalidArgumentError, InvalidDescriptionError, NotAFrameError } from './errors.js';
import { materializeChecked } from './materialize.js';
import { assertSpace, type Frame, isFrame, isSpace, type Space } from './space.js';
import { checkSpec, type Materialize, type Spec } from './spec.js';
import { describeValue } from './value.js';

/**
 * The three lifetimes a kernel describes its buffers by.
 *
 * @example
 * ```ts
 * import type { Lifetime } from '@pol/core';
 * const lifetimes: Lifetime[] = ['outputs', 'checkpoints', 'scratch'];
 * ```
 */
export type Lifetime = 'outputs' | 'checkpoints' | 'scratch';

/**
 * A kernel: any function. By convention a mutating kernel takes its destinations first (an object
 * of outputs), then its inputs, then one options object that carries both options and its
 * described buffers (checkpoints, scratch) by name.
 *
 * @example
 * ```ts
 * import type { HostArray, Kernel } from '@pol/core';
 * const negate: Kernel = (out: { y: HostArray<'float32'> }, x: HostArray<'float32'>) => out.y.data.set(x.data.map((v) => -v));
 * ```
 *
 * Its parameters are `any` on purpose: this type is the constraint of `describe(kernel, ...)`,
 * and a constraint is what an unannotated function passed there gets its parameter types from. A
 * plain JavaScript kernel (`function softmaxInto(out, x, { tmp }) { ... }`, checked with `checkJs`
 * or read by an editor) then has parameters it can use, where `never[]` would make every one
 * `never`. A TypeScript kernel keeps the types it declares.
 */
// biome-ignore lint/suspicious/noExplicitAny: the contextual type of an unannotated JavaScript kernel's parameters (see above).
export type Kernel = (...args: any[]) => unknown;

/**
 * A describer: given the kernel's inputs (and options), the spec of the buffers it needs.
 *
 * @example
 * ```ts
 * import { type Describer, type HostArray, Undef } from '@pol/core';
 * const like: Describer = (x: HostArray<'float32'>) => ({ y: Undef(x) });
 * ```
 */
// biome-ignore lint/suspicious/noExplicitAny: as for Kernel, what an unannotated JavaScript describer's parameters are typed by.
export type Describer = (...args: any[]) => Spec;

/**
 * The describers of one kernel, by lifetime. A lifetime without one describes nothing.
 *
 * @example
 * ```ts
 * import { type Descriptions, type HostArray, Undef } from '@pol/core';
 * type F32 = HostArray<'float32'>;
 * const descriptions = {
 *   outputs: (x: F32) => ({ y: Undef(x) }),
 *   scratch: (x: F32) => ({ tmp: Undef('float64', x.dims) }),
 * } satisfies Descriptions;
 * ```
 */
export interface Descriptions {
  /** What a pass produces; materialized unframed, owned by the caller. */
  readonly outputs?: Describer;
  /** What a forward pass saves for its backward pass; materialized unframed. */
  readonly checkpoints?: Describer;
  /** What a pass needs only while it runs; materialized against a frame only. */
  readonly scratch?: Describer;
}

declare const descriptionsType: unique symbol;

/**
 * A kernel carrying the types of its describers, as returned by {@link describe}: this is how
 * `outputs(f, ...)` knows the spec's type. At runtime it is the kernel itself, unchanged.
 *
 * @example
 * ```ts
 * import { type Described, describe, type HostArray, Undef } from '@pol/core';
 * type F32 = HostArray<'float32'>;
 * const kernel = (out: { y: F32 }, x: F32) => out.y.data.set(x.data);
 * const descriptions = { outputs: (x: F32) => ({ y: Undef(x) }) };
 * const copyInto: Described<typeof kernel, typeof descriptions> = describe(kernel, descriptions);
 * ```
 */
export type Described<F extends Kernel, D extends Descriptions> = F & { readonly [descriptionsType]?: D };

type DescriptionsOf<F> = F extends { readonly [descriptionsType]?: infer D } ? (unknown extends D ? undefined : D) : undefined;

/**
 * The describer type registered for lifetime `L` of kernel `F`, or `undefined` if unknown.
 *
 * @example
 * ```ts
 * import { type DescriberOf, describe, type HostArray, Undef } from '@pol/core';
 * type F32 = HostArray<'float32'>;
 * const copyInto = describe((out: { y: F32 }, x: F32) => out.y.data.set(x.data), { outputs: (x: F32) => ({ y: Undef(x) }) });
 * const describer: DescriberOf<typeof copyInto, 'outputs'> = (x: F32) => ({ y: Undef(x) });
 * const none: DescriberOf<typeof copyInto, 'scratch'> = undefined; // described without scratch
 * ```
 */
export type DescriberOf<F, L extends Lifetime> =
  DescriptionsOf<F> extends infer D ? (D extends Descriptions ? D[L] : undefined) : undefined;

/**
 * The arguments a kernel takes after its destinations: its inputs and, when it declares one, its
 * options object (`@pol/verbs`'s `KernelInputs` is the inputs alone).
 *
 * @example
 * ```ts
 * import type { HostArray, KernelArgs } from '@pol/core';
 * type F32 = HostArray<'float32'>;
 * function axpyInto(out: { y: F32 }, a: number, x: F32, options: { inPlace?: boolean }) {}
 * const args: KernelArgs<typeof axpyInto> = [2, {} as F32, {}]; // [a, x, options]
 * ```
 */
export type KernelArgs<F> = F extends (outs: never, ...rest: infer R) => unknown ? R : unknown[];

/**
 * The arguments the lifetime-`L` describer of `F` takes (the kernel's inputs when it has none).
 *
 * @example
 * ```ts
 * import { type DescribeArgs, describe, type HostArray, hostArray, outputs, Undef } from '@pol/core';
 * type F32 = HostArray<'float32'>;
 * const scaleInto = describe((out: { y: F32 }, x: F32, k: number) => out.y.data.set(x.data.map((v) => k * v)), {
 *   outputs: (x: F32, _k: number) => ({ y: Undef(x) }),
 * });
 * const args: DescribeArgs<typeof scaleInto, 'outputs'> = [hostArray(new Float32Array(2)), 3];
 * console.log(String(outputs(scaleInto, ...args).y)); // 'Undef(float32, [2])'
 * ```
 */
export type DescribeArgs<F, L extends Lifetime> = DescriberOf<F, L> extends (...args: infer A) => Spec ? A : KernelArgs<F>;

/**
 * The spec type the lifetime-`L` describer of `F` returns: an empty spec when `F` was described
 * without one, `Spec` when `F`'s descriptions are not known statically.
 *
 * @example
 * ```ts
 * import { describe, type HostArray, type SpecOf, Undef } from '@pol/core';
 * type F32 = HostArray<'float32'>;
 * const copyInto = describe((out: { y: F32 }, x: F32) => out.y.data.set(x.data), { outputs: (x: F32) => ({ y: Undef(x) }) });
 * const spec: SpecOf<typeof copyInto, 'outputs'> = { y: Undef('float32', 4) };
 * const nothing: SpecOf<typeof copyInto, 'scratch'> = {}; // described without scratch: an empty spec
 * ```
 */
export type SpecOf<F, L extends Lifetime> =
  DescriberOf<F, L> extends (...args: never[]) => infer S ? S : DescriptionsOf<F> extends undefined ? Spec : Record<never, never>;

/**
 * A registry of describers for one lifetime, keyed by kernel function, callable in a describe-only
 * and a materializing form.
 *
 * @example
 * ```ts
 * import { checkpoints, type DescriptionRegistry, outputs, scratch } from '@pol/core';
 * const registries: DescriptionRegistry<'outputs' | 'checkpoints' | 'scratch'>[] = [outputs, checkpoints, scratch];
 * console.log(registries.map((r) => r.lifetime)); // [ 'outputs', 'checkpoints', 'scratch' ]
 * ```
 */
export interface DescriptionRegistry<L extends Lifetime> {
  /** The spec kernel `f` describes for these arguments (an empty spec when it has no describer). */
  <F extends Kernel>(f: F, ...args: DescribeArgs<F, L>): SpecOf<F, L>;
  /** The spec, materialized: into any space for outputs and checkpoints, into a frame only for scratch. */
  <K extends Kind, F extends Kernel>(
    space: L extends 'scratch' ? Frame<K> : Space<K>,
    f: F,
    ...args: DescribeArgs<F, L>
  ): Materialize<SpecOf<F, L>, K>;
  /** Register (or replace) the describer of `kernel` for this lifetime. */
  define(kernel: Kernel, describer: Describer): void;
  /** Whether `kernel` has a describer for this lifetime. */
  has(kernel: Kernel): boolean;
  /** The lifetime this registry describes. */
  readonly lifetime: L;
}

const empty: Spec = Object.freeze({});

function kernelName(f: Kernel): string {
  return f.name === '' ? 'an anonymous kernel' : `kernel '${f.name}'`;
}

function registry<L extends Lifetime>(lifetime: L): DescriptionRegistry<L> {
  const describers = new WeakMap<Kernel, Describer>();

  // `args` are the describer's own arguments: the caller's rest array, applied without a copy
  // (describing runs on every verb call).
  function describeCall(f: unknown, args: unknown[], materializing: boolean): Spec {
    if (typeof f !== 'function') {
      throw new InvalidArgumentError(
        `${lifetime}(${materializing ? 'space, ' : ''}f, ...args) needs the kernel function as f, got ${describeValue(f)}.`,
      );
    }
    const describer = describers.get(f as Kernel);
    if (describer === undefined) return empty;
    const spec: unknown = Reflect.apply(describer, undefined, args);
    const bad = checkSpec(spec);
    if (bad !== undefined) {
      throw new InvalidDescriptionError(
        `The ${lifetime} describer of ${kernelName(f as Kernel)} returned something that is not a spec: ${bad.message}. ` +
          'A describer returns a plain object of Undefs, arrays and nested specs, such as { y: Undef(x) }.',
      );
    }
    return spec as Spec;
  }

  const call = (first: unknown, ...args: unknown[]): unknown => {
    if (typeof first === 'function') return describeCall(first, args, false);
    if (lifetime === 'scratch' && !isFrame(first)) {
      throw new NotAFrameError(
        `scratch(frame, f, ...) materializes only into a Frame, got ${isSpace(first) ? String(first) : describeValue(first)}: ` +
          'scratch lifetime is frame lifetime. Open one with scratchspace(space, (frame) => scratch(frame, f, ...args)).',
      );
    }
    assertSpace(first, lifetime);
    const f = args.shift();
    return materializeChecked(first, describeCall(f, args, true));
  };

  return Object.assign(call, {
    lifetime,
    define(kernel: Kernel, describer: Describer): void {
      if (typeof kernel !== 'function') {
        throw new InvalidDescriptionError(
          `${lifetime}.define(kernel, describer) needs the kernel function first, got ${describeValue(kernel)}.`,
        );
      }
      if (typeof describer !== 'function') {
        throw new InvalidDescriptionError(
          `${lifetime}.define(${kernelName(kernel)}, describer) needs a describer function, got ${describeValue(describer)}. ` +
            'Pass (...inputs) => ({ name: Undef(...) }).',
        );
      }
      describers.set(kernel, describer);
      // Code may call an async kernel under a binding made by a plain callback
      // (`scratchspace(space, (frame) => kernel(frame))`); engaging the ambient store now is what
      // lets that binding follow the kernel across its awaits. (A verb binds an async kernel as an
      // async callback, and needs no engagement in advance.)
      engageFor(kernel);
    },
    has(kernel: Kernel): boolean {
      return describers.has(kernel);
    },
  }) as unknown as DescriptionRegistry<L>;
}

/**
 * The arrays a pass produces (its destinations, first in the mutating signature), described by
 * the kernel. `outputs(f, ...inputs)` returns the spec; `outputs(space, f, ...inputs)` materializes
 * it, all or nothing. Outputs belong to the caller: materialize them from the unframed space,
 * before the scratchspace block they must outlive. Register with {@link describe} or
 * `outputs.define(f, describer)`.
 *
 * @example
 * ```ts
 * import { outputs, describe, Undef, Similar, hostArray, type HostArray } from '@pol/core';
 * const double = describe(
 *   (o: { y: HostArray<'float32'> }, x: HostArray<'float32'>) => o.y.data.set(x.data.map((v) => 2 * v)),
 *   { outputs: (x: HostArray<'float32'>) => ({ y: Undef(x) }) },
 * );
 * const x = hostArray(new Float32Array([1, 2, 3]));
 * outputs(double, x); // { y: Undef(float32, [3]) }
 * const { y } = outputs(Similar(x), double, x); // y: HostArray<'float32'>
 * double({ y }, x);
 * ```
 */
export const outputs: DescriptionRegistry<'outputs'> = registry('outputs');

/**
 * The buffers a forward pass saves for its backward pass (a norm's `rstd`, attention's `m`/`l`),
 * described by the kernel: `checkpoints(f, ...inputs)` returns the spec, `checkpoints(space, f,
 * ...inputs)` materializes it. Checkpoints bridge forward and backward, so they are materialized
 * unframed, like outputs. The described names are keys of the kernel's options object.
 *
 * @example
 * ```ts
 * import { checkpoints, Undef } from '@pol/core';
 * function norm(o: object, x: Float32Array, opts?: { rstd?: Float32Array }) {}
 * checkpoints.define(norm, (x: Float32Array) => ({ rstd: Undef('float32', 1) }));
 * console.log(String(checkpoints(norm, new Float32Array(4)).rstd)); // 'Undef(float32, [1])'
 * ```
 */
export const checkpoints: DescriptionRegistry<'checkpoints'> = registry('checkpoints');

/**
 * The buffers a pass needs only while it runs (workspace, partial reductions), described by the
 * kernel: `scratch(f, ...inputs)` returns the spec; `scratch(frame, f, ...inputs)` materializes it
 * against a Frame, and only a Frame, because scratch lifetime is frame lifetime.
 *
 * @throws {NotAFrameError} when materializing into anything but a frame.
 * @example
 * ```ts
 * import { scratch, scratchspace, Undef, Similar } from '@pol/core';
 * function sum(o: object, x: Float32Array, opts?: { tmp?: Float32Array }) {}
 * scratch.define(sum, (x: Float32Array) => ({ tmp: Undef(x) }));
 * scratchspace(Similar(new Float32Array(0)), (frame) => {
 *   const { tmp } = scratch(frame, sum, new Float32Array(8));
 * });
 * ```
 */
export const scratch: DescriptionRegistry<'scratch'> = registry('scratch');

const lifetimes: readonly Lifetime[] = ['outputs', 'checkpoints', 'scratch'];
const registries = { outputs, checkpoints, scratch } as const;

/**
 * Register a kernel's describers, by lifetime, and return the kernel typed with them, so that
 * `outputs(f, ...)`, `scratch(frame, f, ...)` and verbs built on `f` know the exact spec types.
 * The kernel itself is returned unchanged.
 *
 * @throws {InvalidDescriptionError} for a kernel or describer that is not a function, or an
 * unknown lifetime name.
 * @example
 * ```ts
 * import { describe, Undef, type HostArray } from '@pol/core';
 * type F32 = HostArray<'float32'>;
 * export const softmaxInto = describe(
 *   function softmaxInto(o: { y: F32 }, x: F32, opts: { tmp: F32 }) {
 *     let max = -Infinity;
 *     for (const v of x.data) max = Math.max(max, v);
 *     let sum = 0;
 *     x.data.forEach((v, i) => (sum += opts.tmp.data[i] = Math.exp(v - max)));
 *     opts.tmp.data.forEach((v, i) => (o.y.data[i] = v / sum));
 *   },
 *   {
 *     outputs: (x: F32) => ({ y: Undef(x) }),
 *     scratch: (x: F32) => ({ tmp: Undef(x) }),
 *   },
 * );
 * ```
 */
export function describe<F extends Kernel, const D extends Descriptions>(kernel: F, descriptions: D): Described<F, D> {
  if (typeof kernel !== 'function') {
    throw new InvalidDescriptionError(
      `describe(kernel, descriptions) needs the kernel function first, got ${describeValue(kernel)}.`,
    );
  }
  if (typeof descriptions !== 'object' || descriptions === null) {
    throw new InvalidDescriptionError(
      `describe(${kernelName(kernel)}, descriptions) needs an object such as { outputs, checkpoints, scratch } of describer functions, got ${describeValue(descriptions)}.`,
    );
  }
  for (const key of Object.keys(descriptions)) {
    if (!(lifetimes as readonly string[]).includes(key)) {
      throw new InvalidDescriptionError(
        `describe(${kernelName(kernel)}, ...) got an unknown lifetime '${key}'. The lifetimes are 'outputs', 'checkpoints' and 'scratch'.`,
      );
    }
  }
  // Each lifetime is read exactly once (a getter or a proxy could answer differently, or throw, on
  // a second read) and every answer is checked before the first is registered: all or nothing.
  const read = lifetimes.map((lifetime) => (descriptions as Record<string, unknown>)[lifetime]);
  read.forEach((describer, i) => {
    const named = describer !== undefined || Object.hasOwn(descriptions, lifetimes[i] as Lifetime);
    if (named && typeof describer !== 'function') {
      throw new InvalidDescriptionError(
        `describe(${kernelName(kernel)}, ...) got ${describeValue(describer)} for '${lifetimes[i]}'; each lifetime takes a describer function.`,
      );
    }
  });
  read.forEach((describer, i) => {
    if (describer !== undefined) registries[lifetimes[i] as Lifetime].define(kernel, describer as Describer);
  });
  return kernel as Described<F, D>;
}
