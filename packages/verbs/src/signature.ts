// The types of a verb: everything its signature says, computed from the kernel's own signature
// and, when the kernel came from core's `describe`, from its describers' types. No `any`.

import type { AnyArray, ArrayOf, DType, Kernel, Kind, Materialize, Space, SpecOf } from '@pol/core';

type Lifetime = 'outputs' | 'checkpoints' | 'scratch';

/** Flatten an intersection for readable hovers. */
type Simplify<T> = { [K in keyof T]: T[K] } & {};

/**
 * Whether `T` is `any`: what every parameter of an unannotated JavaScript kernel is (see core's
 * `Kernel`). Such a parameter says nothing, so the verb's types fall back on what the describers
 * say (their names) and on what the call may pass (anything, and the trailing ones optional).
 */
type IsAny<T> = 0 extends 1 & T ? true : false;

/** The kernel's parameters after its destinations. */
type RestOf<F> = F extends (outs: never, ...rest: infer R) => unknown ? R : [];

/**
 * The destinations object a kernel takes first.
 *
 * @example
 * ```ts
 * import type { KernelOutputs } from '@pol/verbs';
 * import type { rmsNormBackwardInto } from '@pol/verbs/examples';
 * type Grads = KernelOutputs<typeof rmsNormBackwardInto>; // { dx: F32; dw: F32 }
 * ```
 */
export type KernelOutputs<F, K extends Kind = Kind> = F extends (outs: infer O, ...rest: never) => unknown
  ? IsAny<O> extends true
    ? DescribedOutputs<F, K>
    : unknown extends O
      ? object
      : O
  : object;

/**
 * The outputs the describers name, materialized in a space of kind `K` (the space a call passes, or
 * the kind of its first array input): an unannotated kernel's destinations.
 */
type DescribedOutputs<F, K extends Kind> = { [N in DescribedNames<F, 'outputs'>]: Materialize<SpecOf<F, 'outputs'>[N], K> };

/** The kind of arrays `X` is (`'host'` for a HostArray), or never for anything else. */
type KindOfArray<X> = IsAny<X> extends true ? never : { [K in Kind]: X extends ArrayOf<K, DType> ? K : never }[Kind];

/** The kind of a call's first array argument, which an unscoped call allocates like (Similar); every kind when none says. */
type KindOfArgs<A extends readonly unknown[]> = A extends readonly [infer H, ...infer T]
  ? [KindOfArray<H>] extends [never]
    ? KindOfArgs<T>
    : KindOfArray<H>
  : Kind;

/** Whether a parameter type is the kernel's options object: an object that is neither an array nor a function. */
type IsOptions<L> = [NonNullable<L>] extends [never]
  ? false
  : NonNullable<L> extends AnyArray | readonly unknown[] | ((...args: never[]) => unknown)
    ? false
    : NonNullable<L> extends object
      ? true
      : false;

interface Split<I extends readonly unknown[], O, Optional extends boolean> {
  readonly inputs: I;
  readonly options: O;
  readonly optional: Optional;
}

/**
 * Split the parameters after the destinations into inputs and the trailing options object. An
 * unannotated last parameter (`any`) is the options object when the kernel describes checkpoints
 * or scratch (the verb hands it one then), as at run time; otherwise it may be an input.
 */
type SplitRest<R extends readonly unknown[], F = unknown> = R extends readonly []
  ? Split<[], undefined, true>
  : R extends readonly [...infer I, infer L]
    ? IsAny<L> extends true
      ? [DescribedNames<F, 'checkpoints' | 'scratch'>] extends [never]
        ? Split<R, undefined, true>
        : Split<I, LooseOptions, true>
      : IsOptions<L> extends true
        ? Split<I, NonNullable<L>, undefined extends L ? true : false>
        : Split<R, undefined, true>
    : R extends readonly [...infer I, (infer L)?]
      ? IsOptions<L> extends true
        ? Split<I, NonNullable<L>, true>
        : Split<R, undefined, true>
      : Split<R, undefined, true>;

/**
 * The inputs of a kernel: its parameters between the destinations and the options object.
 *
 * @example
 * ```ts
 * import type { KernelInputs } from '@pol/verbs';
 * import type { rmsNormInto } from '@pol/verbs/examples';
 * type Inputs = KernelInputs<typeof rmsNormInto>; // [x: F32, w: F32]
 * ```
 */
export type KernelInputs<F> = SplitRest<RestOf<F>, F>['inputs'];

/** An unannotated kernel's options object: any options by name (what it reads is not known). */
type LooseOptions = { readonly [option: string]: unknown };

/** The inputs as a call passes them: the trailing unannotated (`any`) ones may be left out, as JavaScript may. */
type CallInputs<T extends readonly unknown[]> = T extends readonly [...infer H, infer L]
  ? IsAny<L> extends true
    ? [...CallInputs<H>, L?]
    : T
  : T;

/**
 * The options object a kernel declares last (an empty object type when it declares none).
 *
 * @example
 * ```ts
 * import type { KernelOptions } from '@pol/verbs';
 * import type { rmsNormInto } from '@pol/verbs/examples';
 * type Options = KernelOptions<typeof rmsNormInto>; // { eps?: number; rstd: F32 }
 * ```
 */
export type KernelOptions<F> = SplitRest<RestOf<F>, F>['options'] extends infer O extends object ? O : Empty;

/** The empty object type (spelled so that it admits no properties rather than any non-nullish value). */
type Empty = Record<never, never>;

/**
 * The names a kernel statically describes for lifetime `L` (`never` when its describers are not
 * known statically).
 *
 * @example
 * ```ts
 * import type { DescribedNames } from '@pol/verbs';
 * import type { rmsNormInto } from '@pol/verbs/examples';
 * type Saved = DescribedNames<typeof rmsNormInto, 'checkpoints'>; // 'rstd'
 * ```
 */
export type DescribedNames<F, L extends Lifetime> = L extends Lifetime
  ? string extends keyof SpecOf<F, L>
    ? never
    : Extract<keyof SpecOf<F, L>, string>
  : never;

/** Whether `F` came from core's `describe`, so that every described name is known statically. */
type Known<F> = string extends keyof SpecOf<F, 'outputs'> | keyof SpecOf<F, 'checkpoints'> | keyof SpecOf<F, 'scratch'>
  ? false
  : true;

/** The type of the buffer described as `N`: what the kernel declares for it, else the materialized description. */
type BufferOf<F, N extends string, L extends Lifetime> = N extends keyof KernelOutputs<F>
  ? KernelOutputs<F>[N]
  : N extends keyof KernelOptions<F>
    ? KernelOptions<F>[N]
    : N extends keyof SpecOf<F, L>
      ? Materialize<SpecOf<F, L>[N], Kind>
      : never;

type Supplied<F, L extends Lifetime> = { [N in DescribedNames<F, L>]?: BufferOf<F, N, L> | undefined };

/**
 * The options a verb takes: the kernel's own options, without the names the verb materializes,
 * plus an optional caller buffer under each described name (outputs, checkpoints and scratch).
 * For a kernel whose describers are not known statically (registered with `outputs.define`), every
 * destination and every array-valued (or group-valued) kernel option becomes optional, since any of
 * them may be described; scalar options keep their types.
 *
 * @example
 * ```ts
 * import type { VerbOptions } from '@pol/verbs';
 * import type { rmsNormInto } from '@pol/verbs/examples';
 * type Options = VerbOptions<typeof rmsNormInto>; // { eps?: number; rstd?: F32 | undefined; y?: F32 | undefined }
 * ```
 */
export type VerbOptions<F> =
  Known<F> extends true
    ? Simplify<
        Omit<KernelOptions<F>, DescribedNames<F, Lifetime>> &
          Supplied<F, 'outputs'> &
          Supplied<F, 'checkpoints'> &
          Supplied<F, 'scratch'>
      >
    : Simplify<
        Omit<KernelOptions<F>, BufferKeys<KernelOptions<F>>> &
          Partial<Pick<KernelOptions<F>, BufferKeys<KernelOptions<F>>>> &
          Partial<KernelOutputs<F>>
      >;

/** The keys of an options type that could name described buffers: arrays and groups, not scalars or callbacks. */
type BufferKeys<P> = {
  [K in keyof P]-?: NonNullable<P[K]> extends AnyArray
    ? K
    : NonNullable<P[K]> extends (...args: never[]) => unknown
      ? never
      : NonNullable<P[K]> extends object
        ? K
        : never;
}[keyof P];

/**
 * Whether the verb's options argument is required: never when the kernel's options parameter is
 * optional (or absent); otherwise when some remaining kernel option is required, or when the kernel
 * would not otherwise receive an options object (it describes no checkpoints or scratch).
 */
type OptionsRequired<F> = SplitRest<RestOf<F>, F>['optional'] extends true
  ? false
  : Empty extends VerbOptions<F>
    ? [DescribedNames<F, 'checkpoints' | 'scratch'>] extends [never]
      ? Known<F>
      : false
    : true;

/**
 * The arguments a verb takes after its optional leading space: the kernel's inputs, then its options.
 *
 * @example
 * ```ts
 * import type { VerbArgs } from '@pol/verbs';
 * import type { softmaxInto } from '@pol/verbs/examples';
 * type Args = VerbArgs<typeof softmaxInto>; // [x: F32, options?: { tmp?: F32 | undefined; y?: F32 | undefined }]
 * ```
 */
export type VerbArgs<F> =
  OptionsRequired<F> extends true
    ? [...KernelInputs<F>, options: VerbOptions<F>]
    : [...CallInputs<KernelInputs<F>>, options?: OptionsParam<VerbOptions<F>>];

/** An options type with no names at all admits only `{}` (an empty `{}` type would admit any object). */
type OptionsParam<O> = [keyof O] extends [never] ? { readonly [name: string]: never } : O;

/**
 * What a verb returns: its outputs and its checkpoints, side by side in one object.
 *
 * @example
 * ```ts
 * import type { VerbResult } from '@pol/verbs';
 * import type { rmsNormInto } from '@pol/verbs/examples';
 * type Result = VerbResult<typeof rmsNormInto>; // { y: F32; rstd: F32 }
 * ```
 */
export type VerbResult<F, K extends Kind = Kind> = Simplify<
  KernelOutputs<F, K> & { [N in DescribedNames<F, 'checkpoints'>]: BufferOf<F, N, 'checkpoints'> } & ReturnedOf<F>
>;

declare const returnedType: unique symbol;

/**
 * A kernel whose verb keeps its return value in the result, under `returned`, as the kernels
 * {@link outParameters} makes do (gl-matrix's `invert` says a matrix is singular by returning
 * `null`). Type-only: at runtime the kernel carries an internal mark.
 *
 * @example
 * ```ts
 * import type { HostArray } from '@pol/core';
 * import type { Returning, VerbResult } from '@pol/verbs';
 * type Kernel = ((out: { y: HostArray<'float32'> }) => boolean) & Returning<boolean>;
 * type Result = VerbResult<Kernel>; // { y: HostArray<'float32'>; returned: boolean }
 * ```
 */
export interface Returning<R> {
  readonly [returnedType]?: R;
}

type ReturnedOf<F> = F extends Returning<infer R> ? (unknown extends R ? Empty : { returned: Awaited<R> }) : Empty;

/**
 * The options of `Allocating(kernel, options)`.
 *
 * @example
 * ```ts
 * import type { AllocatingOptions } from '@pol/verbs';
 * const whileDeveloping: AllocatingOptions = { checked: true };
 * ```
 */
export interface AllocatingOptions {
  /**
   * Check the call-plan contract on every call: describe again and compare with the plan, so that
   * a describer that depends on more than its arguments' dtypes, dims and options is named. A verb
   * called on a checked arena (or a frame on one) is checked too. Default `false`.
   */
  readonly checked?: boolean;
}

/**
 * A verb's result, or a promise of it when the kernel is async.
 *
 * @example
 * ```ts
 * import type { HostArray } from '@pol/core';
 * import type { VerbReturn } from '@pol/verbs';
 * type Slow = (o: { y: HostArray<'float32'> }, x: HostArray<'float32'>) => Promise<void>;
 * type Returned = VerbReturn<Slow>; // Promise<{ y: HostArray<'float32'> }>
 * ```
 */
export type VerbReturn<F, K extends Kind = Kind> = F extends (...args: never[]) => infer R
  ? R extends PromiseLike<unknown>
    ? Promise<VerbResult<F, K>>
    : VerbResult<F, K>
  : never;

/**
 * The functional form of a mutating kernel, as made by {@link Allocating}: callable with a leading
 * space, or without one against the ambient space (and, unscoped, against `Similar` of its first
 * array input).
 *
 * @example
 * ```ts
 * import { hostArray } from '@pol/core';
 * import type { Verb } from '@pol/verbs';
 * import { softmax, type softmaxInto } from '@pol/verbs/examples';
 * const verb: Verb<typeof softmaxInto> = softmax;
 * verb.kernel; // softmaxInto
 * verb(hostArray(Float32Array.from([0, 0]))).y; // [0.5, 0.5]
 * ```
 */
export interface Verb<F extends Kernel> {
  /** Outputs and checkpoints from `space`; scratch from a frame on it, closed before returning. */
  <K extends Kind>(space: Space<K>, ...args: VerbArgs<F>): VerbReturn<F, K>;
  /** The same, against the ambient space, or `Similar` of the first array input when none is bound. */
  <A extends VerbArgs<F>>(...args: A): VerbReturn<F, KindOfArgs<A>>;
  /** The mutating kernel this verb calls. */
  readonly kernel: F;
}
