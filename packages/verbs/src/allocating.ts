import {
  type AnyArray,
  ambientspace,
  checkpoints,
  describeValue,
  type Frame,
  isPlainObject,
  isSpace,
  type Kernel,
  type Kind,
  type Materialize,
  outputs,
  Similar,
  type Space,
  type Spec,
  type SpecOf,
  scratch,
  scratchspace,
  withspace,
} from '@pol/core';
import { attachSuppressed, checkSupplied, EMPTY, fill, firstArray, rollback, savepoint, UNBOUND } from './buffers.js';
import { DescriptionConflictError, NoSpaceError, NotAKernelError } from './errors.js';

// ---------------------------------------------------------------------------------------------
// Types: everything a verb's signature says is computed from the kernel's own signature and, when
// the kernel came from core's `describe`, from its describers' types.
// ---------------------------------------------------------------------------------------------

type Lifetime = 'outputs' | 'checkpoints' | 'scratch';

/** Flatten an intersection for readable hovers. */
type Simplify<T> = { [K in keyof T]: T[K] } & {};

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
export type KernelOutputs<F> = F extends (outs: infer O, ...rest: never) => unknown ? (unknown extends O ? object : O) : object;

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

/** Split the parameters after the destinations into inputs and the trailing options object. */
type SplitRest<R extends readonly unknown[]> = R extends readonly []
  ? Split<[], undefined, true>
  : R extends readonly [...infer I, infer L]
    ? IsOptions<L> extends true
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
export type KernelInputs<F> = SplitRest<RestOf<F>>['inputs'];

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
export type KernelOptions<F> = SplitRest<RestOf<F>>['options'] extends infer O extends object ? O : Empty;

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
type OptionsRequired<F> = SplitRest<RestOf<F>>['optional'] extends true
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
    : [...KernelInputs<F>, options?: OptionsParam<VerbOptions<F>>];

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
export type VerbResult<F> = Simplify<
  KernelOutputs<F> & { [N in DescribedNames<F, 'checkpoints'>]: BufferOf<F, N, 'checkpoints'> }
>;

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
export type VerbReturn<F> = F extends (...args: never[]) => infer R
  ? R extends PromiseLike<unknown>
    ? Promise<VerbResult<F>>
    : VerbResult<F>
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
  (space: Space, ...args: VerbArgs<F>): VerbReturn<F>;
  /** The same, against the ambient space, or `Similar` of the first array input when none is bound. */
  (...args: VerbArgs<F>): VerbReturn<F>;
  /** The mutating kernel this verb calls. */
  readonly kernel: F;
}

// ---------------------------------------------------------------------------------------------
// Runtime.
// ---------------------------------------------------------------------------------------------

type Registry = ((...args: unknown[]) => unknown) & { has(kernel: Kernel): boolean };
const describeOutputs = outputs as unknown as Registry;
const describeCheckpoints = checkpoints as unknown as Registry;
const describeScratch = scratch as unknown as Registry;

function kernelLabel(f: Kernel): string {
  return `Allocating(${f.name === '' ? 'anonymous kernel' : f.name})`;
}

/**
 * Turn a mutating kernel `f(outs, ...inputs, options)` into a functional verb that materializes
 * the buffers `f` describes, calls it, and returns its outputs and checkpoints.
 *
 * - `verb(space, ...inputs, options?)`: outputs and checkpoints are materialized from `space`
 *   (they belong to the caller); scratch from a frame the verb opens on `space` and closes
 *   however `f` exits (return, throw, rejected promise; an async `f` is awaited first).
 * - `verb(...inputs, options?)`: the same against the ambient space (`withspace`,
 *   `scratchspace`), or, with none bound, against `Similar` of the first array input.
 * - `options`: the kernel's own options, plus, under any described name, a buffer of the caller's
 *   that is checked (dtype and dims), used as is and not materialized.
 * - The result is one object: `{ ...outputs, ...checkpoints }`, or a promise of it for an async `f`.
 *
 * The last argument is taken as the options object when it is a plain object and the call fills
 * every parameter the kernel declares after its destinations (`f.length - 1` of them); anything
 * else (an array, a number, `undefined`) is an input.
 *
 * @throws {NotAKernelError} when `f` is not a function.
 * @example
 * ```ts
 * import { describe, Undef, Similar, withspace, type HostArray } from '@pol/core';
 * import { Allocating } from '@pol/verbs';
 * type F32 = HostArray<'float32'>;
 * const scaleInto = describe(
 *   function scaleInto(o: { y: F32 }, x: F32, opts: { by: number }) {
 *     for (let i = 0; i < x.data.length; i++) o.y.data[i] = (x.data[i] ?? 0) * opts.by;
 *   },
 *   { outputs: (x: F32) => ({ y: Undef(x) }) },
 * );
 * const scale = Allocating(scaleInto);
 * const x = Similar(new Float32Array(0)).alloc('float32', [3]);
 * x.data.set([1, 2, 3]);
 * const { y } = scale(x, { by: 2 }); // unscoped: y from Similar(x); [2, 4, 6]
 * const space = Similar(x);
 * scale(space, x, { by: 3 }).y; // space-first
 * withspace(space, () => scale(x, { by: 4 }).y); // ambient
 * scale(x, { by: 5, y }); // into your own buffer: the result's y is that very array
 * ```
 */
export function Allocating<F extends Kernel>(f: F): Verb<F> {
  if (typeof f !== 'function') {
    throw new NotAKernelError(
      `Allocating(f) needs the mutating kernel function f(outs, ...inputs, options), got ${describeValue(f)}. ` +
        'Pass the kernel itself (ideally as returned by describe(kernel, { outputs, checkpoints, scratch })), not its result.',
    );
  }
  const core = new VerbCore(f as unknown as (...args: unknown[]) => unknown, kernelLabel(f), f.length - 1);
  const verb = (...args: unknown[]): unknown => invoke(core, args);
  Object.defineProperty(verb, 'name', { value: f.name, configurable: true });
  Object.defineProperty(verb, 'kernel', { value: f, enumerable: true });
  return verb as unknown as Verb<F>;
}

const OUTPUTS = 1;
const CHECKPOINTS = 2;
const SCRATCH = 4;
const ALL = OUTPUTS | CHECKPOINTS | SCRATCH;

/** What one verb keeps between calls. */
class VerbCore {
  // Which lifetimes the kernel is known to describe. Registries only ever add describers (define
  // replaces, nothing removes), so a lifetime once seen stays described and is not asked again;
  // one not seen yet is asked on every call, so a describer registered after Allocating(f) counts.
  described = 0;
  // The kernel is called inside `withspace(frame, this.run)`, which calls `run` synchronously
  // before anything else can run, so handing it its arguments through these fields is
  // reentrancy-safe and spares a closure and an argument array per call. The kernel's arguments
  // are `[outs, ...inputs, kernelOptions?]`: `outs`, then `inputs` values of `source` from
  // `from`, then `undefined` up to the options slot `slot` (-1: none) holding `options`;
  // `count` of them in all.
  outs: unknown;
  source: readonly unknown[] = [];
  from = 0;
  inputs = 0;
  slot = -1;
  options: unknown;
  count = 0;
  readonly run: () => unknown;

  constructor(
    readonly kernel: (...args: unknown[]) => unknown,
    readonly label: string,
    // The parameters the kernel declares after its destinations, as JavaScript counts them (up to
    // the first default or rest parameter).
    readonly declared: number,
  ) {
    // The common arities are direct calls: an argument array would be the call's only garbage.
    this.run = () => {
      switch (this.count) {
        case 1: {
          const a = this.outs;
          this.release();
          return kernel(a);
        }
        case 2: {
          const a = this.outs;
          const b = this.argument(1);
          this.release();
          return kernel(a, b);
        }
        case 3: {
          const a = this.outs;
          const b = this.argument(1);
          const c = this.argument(2);
          this.release();
          return kernel(a, b, c);
        }
        case 4: {
          const a = this.outs;
          const b = this.argument(1);
          const c = this.argument(2);
          const d = this.argument(3);
          this.release();
          return kernel(a, b, c, d);
        }
        case 5: {
          const a = this.outs;
          const b = this.argument(1);
          const c = this.argument(2);
          const d = this.argument(3);
          const e = this.argument(4);
          this.release();
          return kernel(a, b, c, d, e);
        }
        case 6: {
          const a = this.outs;
          const b = this.argument(1);
          const c = this.argument(2);
          const d = this.argument(3);
          const e = this.argument(4);
          const g = this.argument(5);
          this.release();
          return kernel(a, b, c, d, e, g);
        }
        default: {
          const args: unknown[] = [];
          for (let i = 0; i < this.count; i++) args.push(this.argument(i));
          this.release();
          return kernel.apply(undefined, args);
        }
      }
    };
  }

  /** The kernel's argument `i` of the pending call. */
  argument(i: number): unknown {
    if (i === 0) return this.outs;
    if (i <= this.inputs) return this.source[this.from + i - 1];
    return i === this.slot ? this.options : undefined;
  }

  /** Drop the pending call's references once its arguments are read. */
  release(): void {
    this.outs = undefined;
    this.source = EMPTY_ARGS;
    this.options = undefined;
  }

  /** Which lifetimes the kernel describes now. */
  lifetimes(): number {
    let described = this.described;
    if (described === ALL) return described;
    const kernel = this.kernel;
    if ((described & OUTPUTS) === 0 && describeOutputs.has(kernel)) described |= OUTPUTS;
    if ((described & CHECKPOINTS) === 0 && describeCheckpoints.has(kernel)) described |= CHECKPOINTS;
    if ((described & SCRATCH) === 0 && describeScratch.has(kernel)) described |= SCRATCH;
    this.described = described;
    return described;
  }

  /**
   * Call the kernel in `frame` with `outs`, the `inputs` values of `source` from `from`, and
   * `options` (when defined) in the options slot: right after the inputs, and never before the
   * kernel's last declared parameter (so an omitted optional input stays undefined).
   */
  call(frame: Frame, outs: unknown, source: readonly unknown[], from: number, inputs: number, options: unknown): unknown {
    this.outs = outs;
    this.source = source;
    this.from = from;
    this.inputs = inputs;
    this.options = options;
    if (options === undefined) {
      this.slot = -1;
      this.count = 1 + inputs;
    } else {
      const slot = Math.max(inputs + 1, this.declared);
      this.slot = slot;
      this.count = slot + 1;
    }
    return withspace(frame, this.run);
  }
}

const EMPTY_ARGS: readonly unknown[] = Object.freeze([]);

// The describers' arguments are `(f, ...inputs, options?)`: `args` after the space, if any, with
// the kernel first. The common counts are direct calls, so that `args` need not grow.
function describeWith(registry: Registry, kernel: Kernel, args: unknown[], from: number): Spec {
  switch (args.length - from) {
    case 0:
      return registry(kernel) as Spec;
    case 1:
      return registry(kernel, args[from]) as Spec;
    case 2:
      return registry(kernel, args[from], args[from + 1]) as Spec;
    case 3:
      return registry(kernel, args[from], args[from + 1], args[from + 2]) as Spec;
    case 4:
      return registry(kernel, args[from], args[from + 1], args[from + 2], args[from + 3]) as Spec;
    case 5:
      return registry(kernel, args[from], args[from + 1], args[from + 2], args[from + 3], args[from + 4]) as Spec;
    default:
      return registry(kernel, ...args.slice(from)) as Spec;
  }
}

// One call of a verb. `args` is the verb's own rest array, read and never changed. Per call this
// allocates the result object, the kernel's options object when it has described checkpoints or
// scratch (a copy of the caller's, when the caller passed options), and whatever the describers,
// the space and the frame do; no closures, and no argument arrays for up to five arguments after
// the destinations.
function invoke(core: VerbCore, args: unknown[]): unknown {
  const { kernel, label, declared } = core;
  const spaceFirst = isSpace(args[0]);
  const start = spaceFirst ? 1 : 0;
  let inputs = args.length - start;
  let options: Record<string, unknown> | undefined;
  const last = args[args.length - 1];
  if (inputs > 0 && inputs >= declared && isPlainObject(last)) {
    options = last;
    inputs--;
  }
  const space = spaceFirst ? (args[0] as Space) : resolveSpace(label, args, inputs);

  // Describe everything before allocating anything: a describer that throws changes nothing.
  const described = core.lifetimes();
  const hasOutputs = (described & OUTPUTS) !== 0;
  const hasCheckpoints = (described & CHECKPOINTS) !== 0;
  const hasScratch = (described & SCRATCH) !== 0;
  const outSpec = hasOutputs ? describeWith(describeOutputs, kernel, args, start) : EMPTY;
  const ckptSpec = hasCheckpoints ? describeWith(describeCheckpoints, kernel, args, start) : EMPTY;
  const scratchSpec = hasScratch ? describeWith(describeScratch, kernel, args, start) : EMPTY;
  if (hasCheckpoints || hasScratch) checkConflicts(label, outSpec, ckptSpec, scratchSpec);
  if (options !== undefined) {
    checkSupplied(label, outSpec, options);
    checkSupplied(label, ckptSpec, options);
    checkSupplied(label, scratchSpec, options);
  }

  // Outputs and checkpoints, from the unframed space, all or nothing.
  const result: Record<string, unknown> = {};
  // A savepoint only when something is allocated from the space (it costs the arena an object).
  const token = hasOutputs || hasCheckpoints ? savepoint(space) : NO_SAVEPOINT;
  let frame: Frame | undefined;
  try {
    fill(space, outSpec, options, result);
    fill(space, ckptSpec, options, result);
    frame = scratchspace(space);
  } catch (error) {
    undo(space, token, error);
    throw error;
  }

  // The kernel's options: the caller's, with every checkpoint and scratch buffer under its name.
  let kernelOptions: Record<string, unknown> | undefined = options;
  try {
    if (hasCheckpoints || hasScratch) {
      kernelOptions = options === undefined ? {} : { ...options };
      for (const key in ckptSpec) kernelOptions[key] = result[key];
      fill(frame, scratchSpec, options, kernelOptions);
    }
    const returned = core.call(frame, result, args, start, inputs, kernelOptions);
    if (isThenable(returned)) return settle(returned, frame, space, token, result);
  } catch (error) {
    closeAfterFailure(frame, error);
    undo(space, token, error);
    throw error;
  }
  frame.close();
  return result;
}

const NO_SAVEPOINT: unique symbol = Symbol('no savepoint');

function undo(space: Space, token: unknown, error: unknown): void {
  if (token !== NO_SAVEPOINT) rollback(space, token, error);
}

function resolveSpace(label: string, args: readonly unknown[], inputs: number): Space {
  const bound = ambientspace(UNBOUND);
  if (bound !== UNBOUND) return bound;
  const exemplar = firstArray(args, 0, inputs);
  if (exemplar !== undefined) return Similar(exemplar);
  throw new NoSpaceError(
    `${label} was called with no space, outside every withspace/scratchspace block, and with no array among its inputs, ` +
      'so there is nowhere to allocate its outputs. Pass a space first (an Arena, a Frame, Similar(x)), ' +
      'or call it inside withspace(space, () => ...).',
  );
}

function checkConflicts(label: string, outSpec: Spec, ckptSpec: Spec, scratchSpec: Spec): void {
  for (const key in ckptSpec) {
    if (Object.hasOwn(outSpec, key)) throw new DescriptionConflictError(label, key, 'outputs', 'checkpoints');
  }
  for (const key in scratchSpec) {
    if (Object.hasOwn(outSpec, key)) throw new DescriptionConflictError(label, key, 'outputs', 'scratch');
    if (Object.hasOwn(ckptSpec, key)) throw new DescriptionConflictError(label, key, 'checkpoints', 'scratch');
  }
}

function isThenable(x: unknown): x is PromiseLike<unknown> {
  return (typeof x === 'object' || typeof x === 'function') && x !== null && typeof (x as { then?: unknown }).then === 'function';
}

// An async kernel: the frame stays open until its promise settles, then closes; on rejection the
// outputs and checkpoints are rolled back as for a synchronous throw.
function settle(
  returned: PromiseLike<unknown>,
  frame: Frame,
  space: Space,
  token: unknown,
  result: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  return Promise.resolve(returned).then(
    () => {
      frame.close();
      return result;
    },
    (error: unknown) => {
      closeAfterFailure(frame, error);
      undo(space, token, error);
      throw error;
    },
  );
}

function closeAfterFailure(frame: Frame | undefined, error: unknown): void {
  if (frame === undefined) return;
  try {
    frame.close();
  } catch (closeError) {
    attachSuppressed(error, closeError);
  }
}
