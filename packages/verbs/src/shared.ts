// Internal, temporary: the helpers `@pol/core/backend` is about to provide under these exact names
// and signatures. Until that subpath is on main, verbs keeps one copy of each here (imported by every
// module of the package, never pasted); switching is an import change and deleting this file.

import { describeValue, InvalidArgumentError } from '@pol/core';
import { ZeroUnsupportedError } from './errors.js';

export { describeValue };

/** Whether `x` looks like a promise. */
export function isThenable(x: unknown): x is PromiseLike<unknown> {
  return (typeof x === 'object' || typeof x === 'function') && x !== null && typeof (x as { then?: unknown }).then === 'function';
}

/** Attach `secondary` to `error` as `error.suppressed`, without replacing the error or an earlier one. */
export function attachSuppressed(error: unknown, secondary: unknown): void {
  if (typeof error !== 'object' || error === null || 'suppressed' in error) return;
  try {
    Object.defineProperty(error, 'suppressed', { value: secondary, configurable: true, writable: true });
  } catch {
    // A frozen error keeps only itself: throwing here would replace it.
  }
}

/** Close `closable`, attaching a failure to close to `error` rather than throwing it. */
export function closeAfterFailure(closable: { close(): void }, error: unknown): void {
  try {
    closable.close();
  } catch (closeError) {
    attachSuppressed(error, closeError);
  }
}

/** Whether two dims arrays are equal. */
export function sameDims(a: readonly number[], b: readonly number[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** `float32[3, 4]`. */
export function shapeText(dtype: string, dims: readonly number[]): string {
  return `${dtype}[${dims.join(', ')}]`;
}

/** Fill a host array (or a bare TypedArray) with zeros. */
export function zeroArray<A>(array: A): A {
  const data = ArrayBuffer.isView(array) ? array : (array as { readonly data?: unknown }).data;
  if (!ArrayBuffer.isView(data) || data instanceof DataView) {
    throw new ZeroUnsupportedError(
      `Cannot zero ${describeValue(array)}: it has no host data. @pol/verbs zeroes host arrays (a HostArray or a TypedArray) only, ` +
        'until @pol/core dispatches zeroing to array families. Shadow host arrays, or clear device buffers with your backend ' +
        '(e.g. encoder.clearBuffer on WebGPU) and pass them to the verb as your own buffers.',
    );
  }
  if (data instanceof BigInt64Array || data instanceof BigUint64Array) data.fill(0n);
  else (data as Float32Array).fill(0);
  return array;
}

/**
 * Read a call's trailing options object against the keys it knows: `undefined` reads as no
 * options; anything but a plain object, or an unknown key, throws `InvalidArgumentError` naming the
 * call and the known keys.
 */
export function readOptions<const K extends string>(call: string, options: unknown, known: readonly K[]): { readonly [P in K]?: unknown } {
  if (options === undefined) return {};
  const list = known.map((k) => `'${k}'`).join(', ');
  if (typeof options !== 'object' || options === null || Array.isArray(options) || ArrayBuffer.isView(options)) {
    throw new InvalidArgumentError(`${call} takes an options object, got ${describeValue(options)}. Its options are ${list}; leave them out for the defaults.`);
  }
  for (const key in options) {
    if (Object.hasOwn(options, key) && !known.includes(key as K)) {
      throw new InvalidArgumentError(`${call} has no option '${key}'. Its options are ${list}.`);
    }
  }
  return options as { readonly [P in K]?: unknown };
}
