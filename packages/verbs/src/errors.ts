/**
 * The errors `@pol/verbs` throws. Each extends `@pol/core`'s {@link PolError} with a stable `code`,
 * and each is thrown before anything is allocated (or after what was allocated has been rolled
 * back), so a refused call leaves every space, arena and frame as it was.
 *
 * @module
 */
import { PolError } from '@pol/core';

/**
 * `Allocating(f)` was given something that is not a function.
 *
 * @example
 * ```ts
 * import { Allocating, NotAKernelError } from '@pol/verbs';
 * try {
 *   Allocating(42 as never);
 * } catch (e) {
 *   console.log(e instanceof NotAKernelError, (e as NotAKernelError).code); // true 'POL_NOT_A_KERNEL'
 * }
 * ```
 */
export class NotAKernelError extends PolError {
  constructor(message: string) {
    super('POL_NOT_A_KERNEL', message);
  }
}

/**
 * A verb was called without a space, outside every `withspace`/`scratchspace` block, and with no
 * array among its inputs to make a `Similar` space from: there is nowhere to allocate.
 *
 * @example
 * ```ts
 * import { describe, Undef } from '@pol/core';
 * import { Allocating, NoSpaceError } from '@pol/verbs';
 * const fill = Allocating(describe((_o: object, n: number) => {}, { outputs: (n: number) => ({ y: Undef('float32', [n]) }) }));
 * try {
 *   fill(3); // no space given, none bound, and no array to make Similar(x) from
 * } catch (e) {
 *   console.log((e as NoSpaceError).code); // 'POL_NO_SPACE'
 * }
 * ```
 */
export class NoSpaceError extends PolError {
  constructor(message: string) {
    super('POL_NO_SPACE', message);
  }
}

/**
 * A buffer the caller passed under a described name does not fit its description: not an array,
 * or another dtype or dims, or a name inside a described group that the kernel does not describe.
 *
 * @example
 * ```ts
 * import { BufferMismatchError } from '@pol/verbs';
 * const e = new BufferMismatchError('y', 'float32[4]', 'float64[4]', 'y is float64[4]; pass a float32[4] array.');
 * console.log(e.code, e.path, e.expected, e.got); // 'POL_BUFFER_MISMATCH' 'y' 'float32[4]' 'float64[4]'
 * ```
 */
export class BufferMismatchError extends PolError {
  /** The described name, as a key path (`'y'`, or `'grads.w1'` inside a described group). */
  readonly path: string;
  /** What the kernel describes under that name, such as `'float32[3, 4]'`. */
  readonly expected: string;
  /** What the caller passed, such as `'float64[3, 4]'` or `'a plain object'`. */
  readonly got: string;

  constructor(path: string, expected: string, got: string, message: string) {
    super('POL_BUFFER_MISMATCH', message);
    this.path = path;
    this.expected = expected;
    this.got = got;
  }
}

/**
 * A kernel describes the same name under two lifetimes (an output and a checkpoint, say). Verbs
 * return outputs and checkpoints side by side and read caller buffers for every lifetime from one
 * options object, so each described name must be unique.
 *
 * @example
 * ```ts
 * import { DescriptionConflictError } from '@pol/verbs';
 * const e = new DescriptionConflictError('norm', 'rstd', 'outputs', 'checkpoints');
 * console.log(e.code, e.described); // 'POL_DESCRIPTION_CONFLICT' 'rstd'
 * ```
 */
export class DescriptionConflictError extends PolError {
  /** The name described twice. */
  readonly described: string;

  constructor(verb: string, name: string, first: string, second: string) {
    super(
      'POL_DESCRIPTION_CONFLICT',
      `${verb}: the kernel describes '${name}' both in its ${first} and in its ${second}. A verb returns outputs and checkpoints ` +
        'in one object and reads caller buffers for every lifetime from one options object, so each described name must be unique: rename one of them.',
    );
    this.described = name;
  }
}

/**
 * Something in a structure of primals is neither an array nor a plain object of primals, so it
 * cannot be shadowed.
 *
 * @example
 * ```ts
 * import { shadowSpec, NotAPrimalError } from '@pol/verbs';
 * try {
 *   shadowSpec({ w: new Float32Array(2), lr: 0.1 } as never);
 * } catch (e) {
 *   console.log((e as NotAPrimalError).path); // 'lr'
 * }
 * ```
 */
export class NotAPrimalError extends PolError {
  /** The key path of the offending value (`''` for the top level). */
  readonly path: string;

  constructor(path: string, message: string) {
    super('POL_NOT_A_PRIMAL', message);
    this.path = path;
  }
}

/**
 * Primals and shadows walked together do not pair up: a name present in one and missing in the
 * other, or a shadow whose dtype or dims differ from its primal's.
 *
 * @example
 * ```ts
 * import { walkShadows, ShadowMismatchError } from '@pol/verbs';
 * try {
 *   walkShadows({ w: new Float32Array(2) }, { v: new Float32Array(2) } as never, () => {});
 * } catch (e) {
 *   console.log((e as ShadowMismatchError).path); // 'w'
 * }
 * ```
 */
export class ShadowMismatchError extends PolError {
  /** The key path where the structures part (`''` for the top level). */
  readonly path: string;

  constructor(path: string, message: string) {
    super('POL_SHADOW_MISMATCH', message);
    this.path = path;
  }
}

/**
 * What the argument errors of a verb call share: the verb, and the parameter the call got wrong.
 * Each kind is its own class below; catch this one to handle them all.
 *
 * @example
 * ```ts
 * import { hostArray } from '@pol/core';
 * import { VerbArgumentError } from '@pol/verbs';
 * import { softmax } from '@pol/verbs/examples';
 * try {
 *   (softmax as (...args: unknown[]) => unknown)(hostArray(Float32Array.of(1, 2)), hostArray(Float32Array.of(3)));
 * } catch (e) {
 *   const error = e as VerbArgumentError;
 *   console.log(error instanceof VerbArgumentError, error.verb, error.argument); // true 'softmaxInto' 2
 * }
 * ```
 */
export abstract class VerbArgumentError extends PolError {
  /** The verb, as `Allocating(kernel)` names it: the kernel's name. */
  readonly verb: string;
  /** The kernel parameter the argument would go to, or how the verb counts it (`'input 2'`). */
  readonly parameter: string;
  /** The argument's position in the call as written, counting from 1 (the space included). */
  readonly argument: number;

  constructor(code: string, verb: string, parameter: string, argument: number, message: string, cause?: unknown) {
    super(code, message, cause === undefined ? undefined : { cause });
    this.verb = verb;
    this.parameter = parameter;
    this.argument = argument;
  }
}

/**
 * A space was passed somewhere other than first: `softmax(x, arena)`. A verb takes its space
 * first, or none at all (then the ambient space, or `Similar` of its first array input).
 *
 * @example
 * ```ts
 * import { Arena } from '@pol/arena';
 * import { hostArray } from '@pol/core';
 * import { MisplacedSpaceError } from '@pol/verbs';
 * import { softmax } from '@pol/verbs/examples';
 * const arena = new Arena(new ArrayBuffer(1024));
 * try {
 *   (softmax as (...args: unknown[]) => unknown)(hostArray(Float32Array.of(1, 2)), arena);
 * } catch (e) {
 *   console.log(e instanceof MisplacedSpaceError, (e as MisplacedSpaceError).argument); // true 2
 * }
 * ```
 */
export class MisplacedSpaceError extends VerbArgumentError {
  constructor(verb: string, parameter: string, argument: number, message: string) {
    super('POL_MISPLACED_SPACE', verb, parameter, argument, message);
  }
}

/**
 * A verb was called with more inputs than its kernel takes: `softmax(arena, x, x)`, or
 * `softmax(arena, x, undefined, {})` (an `undefined` with an argument after it is an input; a
 * trailing one is no argument).
 *
 * @example
 * ```ts
 * import { hostArray } from '@pol/core';
 * import { ExtraInputError } from '@pol/verbs';
 * import { softmax } from '@pol/verbs/examples';
 * const x = hostArray(Float32Array.of(1, 2));
 * try {
 *   (softmax as (...args: unknown[]) => unknown)(x, x);
 * } catch (e) {
 *   console.log(e instanceof ExtraInputError, (e as ExtraInputError).parameter); // true 'input 2'
 * }
 * ```
 */
export class ExtraInputError extends VerbArgumentError {
  constructor(verb: string, parameter: string, argument: number, message: string) {
    super('POL_EXTRA_INPUT', verb, parameter, argument, message);
  }
}

/**
 * A verb was called with fewer inputs than its kernel takes, and its describers or its kernel
 * failed for it: `softmax(arena)`. The original failure is the error's `cause`.
 *
 * @example
 * ```ts
 * import { Arena } from '@pol/arena';
 * import { MissingInputError } from '@pol/verbs';
 * import { softmax } from '@pol/verbs/examples';
 * try {
 *   (softmax as (...args: unknown[]) => unknown)(new Arena(new ArrayBuffer(1024)));
 * } catch (e) {
 *   console.log(e instanceof MissingInputError, (e as MissingInputError).parameter); // true 'x'
 * }
 * ```
 */
export class MissingInputError extends VerbArgumentError {
  constructor(verb: string, parameter: string, argument: number, message: string, cause?: unknown) {
    super('POL_MISSING_INPUT', verb, parameter, argument, message, cause);
  }
}

/**
 * A bare TypedArray was passed where the kernel reads a host array (`x.data`, `x.dims`), and the
 * kernel (or a describer) failed on it: `softmax(Float32Array.of(1, 2))`. Wrap it with
 * `hostArray(x)`. The original failure is the error's `cause`.
 *
 * @example
 * ```ts
 * import { BareTypedArrayError } from '@pol/verbs';
 * import { softmax } from '@pol/verbs/examples';
 * try {
 *   (softmax as (...args: unknown[]) => unknown)(Float32Array.of(1, 2));
 * } catch (e) {
 *   console.log(e instanceof BareTypedArrayError, (e as BareTypedArrayError).parameter); // true 'x'
 * }
 * ```
 */
export class BareTypedArrayError extends VerbArgumentError {
  constructor(verb: string, parameter: string, argument: number, message: string, cause: unknown) {
    super('POL_BARE_TYPED_ARRAY', verb, parameter, argument, message, cause);
  }
}

/**
 * A verb's kernel has no describers at all (no outputs, checkpoints or scratch), so the verb would
 * materialize nothing and return an empty object. Describe the kernel (`describe(kernel, {
 * outputs })`), or call it directly.
 *
 * @example
 * ```ts
 * import { type HostArray, hostArray } from '@pol/core';
 * import { Allocating, UndescribedKernelError } from '@pol/verbs';
 * const touch = Allocating(function touch(_o: object, _x: HostArray) {});
 * try {
 *   touch(hostArray(Float32Array.of(1)));
 * } catch (e) {
 *   console.log(e instanceof UndescribedKernelError, (e as UndescribedKernelError).verb); // true 'touch'
 * }
 * ```
 */
export class UndescribedKernelError extends PolError {
  /** The verb, named after its kernel. */
  readonly verb: string;

  constructor(verb: string, message: string) {
    super('POL_UNDESCRIBED_KERNEL', message);
    this.verb = verb;
  }
}

/**
 * A kernel assigned to its outputs object instead of writing into the buffers in it: what a
 * positional out-parameter function (gl-matrix's `mat4.multiply(out, a, b)`) does when it is
 * handed the outputs object as `out`. The call is rolled back. Wrap such a function with
 * {@link outParameters}.
 *
 * @example
 * ```ts
 * import { describe, Undef } from '@pol/core';
 * import { Allocating, OutputsWrittenError } from '@pol/verbs';
 * // A function in gl-matrix's positional style, described as if it were a Pol kernel:
 * function negate(out: Float32Array, a: Float32Array): Float32Array {
 *   for (let i = 0; i < a.length; i++) out[i] = -(a[i] ?? 0);
 *   return out;
 * }
 * const verb = Allocating(describe(negate, { outputs: (a: Float32Array) => ({ out: Undef(a) }) }));
 * try {
 *   verb(Float32Array.of(1, 2)); // negate writes out[0], out[1] onto the outputs object
 * } catch (e) {
 *   console.log(e instanceof OutputsWrittenError, (e as OutputsWrittenError).key); // true '0'
 * }
 * ```
 */
export class OutputsWrittenError extends PolError {
  /** The verb, named after its kernel. */
  readonly verb: string;
  /** A key the kernel wrote onto (or removed from) its outputs object. */
  readonly key: string;

  constructor(verb: string, key: string, message: string) {
    super('POL_OUTPUTS_WRITTEN', message);
    this.verb = verb;
    this.key = key;
  }
}

/**
 * In checked mode, a describer returned something other than what it returned before for
 * arguments of the same dtypes, dims and options: it breaks the contract a call plan relies on
 * (describers are pure functions of those), for example by reading an array's data or a global.
 *
 * @example
 * ```ts
 * import { DescriberContractError } from '@pol/verbs';
 * const e = new DescriberContractError('grow', 'outputs', 'y', 'Undef(float32[1])', 'Undef(float32[2])', 'grow: ...');
 * console.log(e.code, e.lifetime, e.path); // 'POL_DESCRIBER_CONTRACT' 'outputs' 'y'
 * ```
 */
export class DescriberContractError extends PolError {
  /** The verb, named after its kernel. */
  readonly verb: string;
  /** The describer's lifetime: `'outputs'`, `'checkpoints'` or `'scratch'`. */
  readonly lifetime: string;
  /** Where its spec changed, as a key path (`''` for the whole spec). */
  readonly path: string;
  /** What the plan holds there. */
  readonly expected: string;
  /** What the describer returned this time. */
  readonly got: string;

  constructor(verb: string, lifetime: string, path: string, expected: string, got: string, message: string) {
    super('POL_DESCRIBER_CONTRACT', message);
    this.verb = verb;
    this.lifetime = lifetime;
    this.path = path;
    this.expected = expected;
    this.got = got;
  }
}

/**
 * A function wrapped with {@link outParameters} writes into TypedArrays, but an output (or an
 * input) it would be handed has no host data: a device array, say.
 *
 * @example
 * ```ts
 * import { HostDataRequiredError } from '@pol/verbs';
 * const e = new HostDataRequiredError('multiply', 'out', 'multiply: ...');
 * console.log(e.code, e.buffer); // 'POL_HOST_DATA_REQUIRED' 'out'
 * ```
 */
export class HostDataRequiredError extends PolError {
  /** The verb, named after the wrapped function. */
  readonly verb: string;
  /** The output's name, or the input's parameter. */
  readonly buffer: string;

  constructor(verb: string, buffer: string, message: string) {
    super('POL_HOST_DATA_REQUIRED', message);
    this.verb = verb;
    this.buffer = buffer;
  }
}

/**
 * `Shadows(primals)` (no space given) makes each shadow of its primal's own kind, as its type
 * says, but the space it would allocate from is of another kind (a device arena bound around host
 * primals), or the primals mix kinds. Pass the space: `Shadows(space, primals)`.
 *
 * @example
 * ```ts
 * import { KindMismatchError } from '@pol/verbs';
 * const e = new KindMismatchError('w', 'host', 'gpu', 'Shadows: ...');
 * console.log(e.code, e.path, e.expected, e.got); // 'POL_KIND_MISMATCH' 'w' 'host' 'gpu'
 * ```
 */
export class KindMismatchError extends PolError {
  /** The key path of the primal whose kind differs. */
  readonly path: string;
  /** The primal's kind. */
  readonly expected: string;
  /** The kind of the space, or of the first primal. */
  readonly got: string;

  constructor(path: string, expected: string, got: string, message: string) {
    super('POL_KIND_MISMATCH', message);
    this.path = path;
    this.expected = expected;
    this.got = got;
  }
}
