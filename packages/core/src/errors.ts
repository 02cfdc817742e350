/**
 * Every error Pol throws is a {@link PolError}: one class per kind of mistake, each with a stable
 * `code` so that callers can branch on it even when two copies of `@pol/core` are installed (where
 * `instanceof` would fail across copies).
 *
 * Messages say what was wrong and what to do instead. An operation that throws one of these has
 * changed nothing: no space, frame or capture is left half-updated.
 *
 * @module
 */

/**
 * The base of every error Pol throws.
 *
 * @example
 * ```ts
 * import { PolError, Undef } from '@pol/core';
 * try {
 *   Undef('float32', -1);
 * } catch (e) {
 *   if (e instanceof PolError) console.log(e.code); // 'POL_INVALID_SHAPE'
 * }
 * ```
 */
export class PolError extends Error {
  /** A stable, machine-readable identifier of the kind of error, such as `'POL_INVALID_SHAPE'`. */
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/**
 * Dims that do not describe an array: negative, fractional, not finite, or so large that the byte
 * size is no longer exactly representable (`Number.MAX_SAFE_INTEGER`).
 *
 * @example
 * ```ts
 * import { InvalidShapeError, Undef } from '@pol/core';
 * try {
 *   Undef('float32', 2.5);
 * } catch (e) {
 *   console.log(e instanceof InvalidShapeError, (e as InvalidShapeError).code); // true 'POL_INVALID_SHAPE'
 * }
 * ```
 */
export class InvalidShapeError extends PolError {
  constructor(message: string) {
    super('POL_INVALID_SHAPE', message);
  }
}

/**
 * A dtype name Pol does not know, or one this runtime has no TypedArray for (`float16`).
 *
 * @example
 * ```ts
 * import { type DType, UnknownDTypeError, Undef } from '@pol/core';
 * try {
 *   Undef('complex64' as DType, 2);
 * } catch (e) {
 *   console.log(e instanceof UnknownDTypeError, (e as UnknownDTypeError).code); // true 'POL_UNKNOWN_DTYPE'
 * }
 * ```
 */
export class UnknownDTypeError extends PolError {
  constructor(message: string) {
    super('POL_UNKNOWN_DTYPE', message);
  }
}

/**
 * Something was passed where a {@link Space} was required.
 *
 * @example
 * ```ts
 * import { NotASpaceError } from '@pol/core';
 * import { assertSpace } from '@pol/core/backend';
 * try {
 *   assertSpace(new ArrayBuffer(8), 'my verb'); // a slab is not a space: wrap it in an Arena
 * } catch (e) {
 *   console.log(e instanceof NotASpaceError, (e as NotASpaceError).code); // true 'POL_NOT_A_SPACE'
 * }
 * ```
 */
export class NotASpaceError extends PolError {
  constructor(message: string) {
    super('POL_NOT_A_SPACE', message);
  }
}

/**
 * A spec holds a value that is neither an Undef, a nested spec, nor an array. The message names the key path.
 *
 * @example
 * ```ts
 * import { alloc, InvalidSpecError, Similar, Undef } from '@pol/core';
 * try {
 *   alloc(Similar(new Float32Array(0)), { layers: { w: Undef('float32', 2), b: 3 as never } });
 * } catch (e) {
 *   console.log((e as InvalidSpecError).code, (e as InvalidSpecError).path); // 'POL_INVALID_SPEC' 'layers.b'
 * }
 * ```
 */
export class InvalidSpecError extends PolError {
  /** The key path of the offending value, such as `'layers.w'`. */
  readonly path: string;

  constructor(path: string, message: string) {
    super('POL_INVALID_SPEC', message);
    this.path = path;
  }
}

/**
 * `ambientspace()` was called with no enclosing `withspace` or `scratchspace` block.
 *
 * @example
 * ```ts
 * import { ambientspace, NoAmbientSpaceError } from '@pol/core';
 * try {
 *   ambientspace(); // outside every withspace and scratchspace block
 * } catch (e) {
 *   console.log(e instanceof NoAmbientSpaceError, (e as NoAmbientSpaceError).code); // true 'POL_NO_AMBIENT_SPACE'
 * }
 * ```
 */
export class NoAmbientSpaceError extends PolError {
  constructor(message: string) {
    super('POL_NO_AMBIENT_SPACE', message);
  }
}

/**
 * An async callback was given to `withspace` or `scratchspace` on a runtime that cannot carry the
 * ambient space across `await` (no AsyncLocalStorage or AsyncContext).
 *
 * @example
 * ```ts
 * import { AsyncScopeUnsupportedError, Similar, withspace } from '@pol/core';
 * import { setAmbientStore, syncStore } from '@pol/core/backend';
 * const previous = setAmbientStore(syncStore()); // as on a runtime without AsyncLocalStorage
 * try {
 *   await withspace(Similar(new Float32Array(0)), async () => {}); // an async callback's refusal is a rejection
 * } catch (e) {
 *   console.log(e instanceof AsyncScopeUnsupportedError, (e as AsyncScopeUnsupportedError).code); // true 'POL_ASYNC_SCOPE_UNSUPPORTED'
 * } finally {
 *   setAmbientStore(previous);
 * }
 * ```
 */
export class AsyncScopeUnsupportedError extends PolError {
  constructor(message: string) {
    super('POL_ASYNC_SCOPE_UNSUPPORTED', message);
  }
}

/**
 * Something other than a {@link Frame} was passed where scratch lifetime requires one.
 *
 * @example
 * ```ts
 * import { NotAFrameError, scratch, Similar, Undef } from '@pol/core';
 * function sum(o: object, x: Float32Array) {}
 * scratch.define(sum, (x: Float32Array) => ({ tmp: Undef(x) }));
 * try {
 *   scratch(Similar(new Float32Array(0)) as never, sum, new Float32Array(4)); // a space, not a frame
 * } catch (e) {
 *   console.log(e instanceof NotAFrameError, (e as NotAFrameError).code); // true 'POL_NOT_A_FRAME'
 * }
 * ```
 */
export class NotAFrameError extends PolError {
  constructor(message: string) {
    super('POL_NOT_A_FRAME', message);
  }
}

/**
 * A describer registered for a kernel returned something that is not a spec, or is not a function.
 *
 * @example
 * ```ts
 * import { InvalidDescriptionError, outputs } from '@pol/core';
 * function kernel(o: object, x: Float32Array) {}
 * try {
 *   outputs.define(kernel, 'y' as never); // a describer is a function returning a spec
 * } catch (e) {
 *   console.log(e instanceof InvalidDescriptionError, (e as InvalidDescriptionError).code); // true 'POL_INVALID_DESCRIPTION'
 * }
 * ```
 */
export class InvalidDescriptionError extends PolError {
  constructor(message: string) {
    super('POL_INVALID_DESCRIPTION', message);
  }
}

/**
 * Something other than an array was passed where an exemplar array was required.
 *
 * @example
 * ```ts
 * import { NotAnArrayError, Similar } from '@pol/core';
 * try {
 *   Similar([1, 2, 3] as never); // a JavaScript array is not a typed array
 * } catch (e) {
 *   console.log(e instanceof NotAnArrayError, (e as NotAnArrayError).code); // true 'POL_NOT_AN_ARRAY'
 * }
 * ```
 */
export class NotAnArrayError extends PolError {
  constructor(message: string) {
    super('POL_NOT_AN_ARRAY', message);
  }
}

/**
 * A frame was used (to allocate, or to open a nested frame) after it had closed.
 *
 * @example
 * ```ts
 * import { alloc, FrameClosedError, scratchspace, Similar } from '@pol/core';
 * const frame = scratchspace(Similar(new Float32Array(0)), (f) => f); // escapes its block: closed
 * try {
 *   alloc(frame, 'float32', 4);
 * } catch (e) {
 *   console.log(e instanceof FrameClosedError, (e as FrameClosedError).code); // true 'POL_FRAME_CLOSED'
 * }
 * ```
 */
export class FrameClosedError extends PolError {
  constructor(message: string) {
    super('POL_FRAME_CLOSED', message);
  }
}

/**
 * A GC-owned buffer (a `Similar` allocation, or any brand-new device buffer) was requested while the
 * device backing it was recording a graph capture.
 *
 * The allocation itself would succeed, which is the trouble. A captured graph replays the
 * commands it recorded against the exact buffers bound while it recorded. A buffer created
 * during capture belongs to that one eager run: its frame destroys it when the run ends, so the
 * first replay binds a destroyed buffer (or, if it was kept alive, every replay reads and writes a
 * buffer nobody else can see). Nothing fails during capture or on the eager run; the failure
 * surfaces on replay, the one operation the capture exists for, with a validation message that
 * names no array of yours.
 *
 * An arena is capture-safe: a carve is offset arithmetic over a slab allocated before capture
 * began, so it creates nothing, and the same allocation sequence gives the same offsets on every
 * run, which replay depends on. Warm up eagerly, read the arena's watermark, size the slab from it,
 * then capture.
 *
 * @example
 * ```ts
 * import { CaptureViolation } from '@pol/core';
 * // What a backend throws when a GC allocation is asked for while its device records a capture:
 * const e = new CaptureViolation('A new float32[1024] array', 'Similar(float32[1024] on gpu)');
 * console.log(e.code, e.attempted); // 'POL_CAPTURE_VIOLATION' 'A new float32[1024] array'
 * ```
 */
export class CaptureViolation extends PolError {
  /** What was refused, as the call that threw wrote it: `'A new float32[4] array'`, `'device.createBuffer'`. */
  readonly attempted: string;

  /**
   * @param attempted - what was refused, such as `'A new float32[4] array'` (kept as {@link CaptureViolation.attempted}).
   * @param space - the space or device it was requested from.
   * @param explanation - for a backend refusing something other than an allocation under capture
   *   (a shader compile, a wait): the whole message, saying what was attempted, where, and what to
   *   do instead. By default the message says why allocating now breaks replay, and what to use.
   */
  constructor(attempted: string, space: string, explanation?: string) {
    super(
      'POL_CAPTURE_VIOLATION',
      explanation ??
        `${attempted} was refused: the device of ${space} is recording a capture, and a buffer made now would belong to ` +
          'this one eager run, so replay would bind it after it is gone. ' +
          'Pass an arena (or a frame on one) made before capture(), warmed up by running the step eagerly on it and sized from its ' +
          'watermark: a carve creates nothing and gives the same offsets on every run.',
    );
    this.attempted = attempted;
  }
}

/**
 * An argument of the wrong type where no more specific kind applies (a callback that is not a function, say).
 *
 * @example
 * ```ts
 * import { InvalidArgumentError, Similar, withspace } from '@pol/core';
 * try {
 *   withspace(Similar(new Float32Array(0)), 42 as never); // the callback must be a function
 * } catch (e) {
 *   console.log(e instanceof InvalidArgumentError, (e as InvalidArgumentError).code); // true 'POL_INVALID_ARGUMENT'
 * }
 * ```
 */
export class InvalidArgumentError extends PolError {
  constructor(message: string) {
    super('POL_INVALID_ARGUMENT', message);
  }
}

/**
 * An array was to be zeroed (a Shadow, `zeroArray`) but its family has no `zero` method: the
 * backend that made it does not know how to fill its memory with zeros.
 *
 * @example
 * ```ts
 * import { ZeroUnsupportedError } from '@pol/core';
 * // What zeroArray throws for an array whose family has no zero(array) method:
 * const e = new ZeroUnsupportedError("Cannot zero float32[4] tracked: its family ('tracked') has no zero(array) method.");
 * console.log(e instanceof ZeroUnsupportedError, e.code); // true 'POL_ZERO_UNSUPPORTED'
 * ```
 */
export class ZeroUnsupportedError extends PolError {
  constructor(message: string) {
    super('POL_ZERO_UNSUPPORTED', message);
  }
}
