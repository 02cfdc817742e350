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
 * import { Allocating, NoSpaceError } from '@pol/verbs';
 * const fill = Allocating((_o: object, value: number) => {});
 * try {
 *   fill(1);
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
 * An array could not be zeroed from JavaScript: it has no host data (a GPU buffer, say). Shadows
 * start at zero, so `Shadows`, `zeroShadows` and verbs materializing shadow outputs need host arrays.
 *
 * @example
 * ```ts
 * import { ZeroUnsupportedError } from '@pol/verbs';
 * console.log(new ZeroUnsupportedError('x').code); // 'POL_ZERO_UNSUPPORTED'
 * ```
 */
export class ZeroUnsupportedError extends PolError {
  constructor(message: string) {
    super('POL_ZERO_UNSUPPORTED', message);
  }
}
