/**
 * Telling values apart and naming them in messages: the few checks every Pol package makes on a
 * value of unknown type.
 *
 * @module
 */

/**
 * Whether `x` is a thenable (a promise, or anything with a `then` method): what a callback that
 * went async returns.
 *
 * @example
 * ```ts
 * import { isThenable } from '@pol/core/backend';
 * console.log(isThenable(Promise.resolve(1)), isThenable({ then: 1 }), isThenable(null)); // true false false
 * ```
 */
export function isThenable(x: unknown): x is PromiseLike<unknown> {
  return (typeof x === 'object' || typeof x === 'function') && x !== null && typeof (x as { then?: unknown }).then === 'function';
}

/**
 * Whether `x` is a plain object (a spec candidate), as opposed to an instance of some class.
 *
 * @example
 * ```ts
 * import { isPlainObject } from '@pol/core/backend';
 * console.log(isPlainObject({ a: 1 }), isPlainObject(new Float32Array(1)), isPlainObject(null)); // true false false
 * ```
 */
export function isPlainObject(x: unknown): x is Record<string, unknown> {
  if (typeof x !== 'object' || x === null) return false;
  const proto = Object.getPrototypeOf(x);
  return proto === Object.prototype || proto === null;
}

/**
 * A short, safe rendering of any value for an error message: it never calls the value's own
 * `toString`, which may throw or print a whole array.
 *
 * @example
 * ```ts
 * import { describeValue } from '@pol/core/backend';
 * console.log(describeValue(new ArrayBuffer(8)), describeValue(undefined)); // 'an ArrayBuffer' 'undefined'
 * ```
 */
export function describeValue(x: unknown): string {
  if (typeof x === 'string') return `'${x}'`;
  if (typeof x === 'bigint') return `${x}n`;
  if (typeof x === 'function') return `function ${x.name || '(anonymous)'}`;
  if (x === null || typeof x !== 'object') return String(x);
  if (Array.isArray(x)) return `an array of length ${x.length}`;
  const ctor = (x as { constructor?: { name?: unknown } }).constructor;
  const name = typeof ctor?.name === 'string' && ctor.name !== '' ? ctor.name : 'Object';
  if (name === 'Object') return 'a plain object';
  return /^(?:[AEIO]|U[np])/.test(name) ? `an ${name}` : `a ${name}`;
}
