/**
 * Putting a wrapper on one object (a device, its queue, an encoder, a pass, a buffer, a pipeline)
 * as an own property. Only the instrumentation owner does it, once per object, and nothing takes
 * a wrapper off again: hooks switch on and off behind the wrappers instead.
 *
 * @module
 */

/** A method, seen from outside: any `this`, any arguments. */
export type Method = (this: unknown, ...args: unknown[]) => unknown;

/**
 * Replace `target[name]` with `make(original)`, as an own, non-enumerable property. A name whose
 * current value is not a function is left alone.
 */
export function wrap(target: object, name: string, make: (original: Method) => Method): void {
  const original = (target as Record<string, unknown>)[name];
  if (typeof original !== 'function') return;
  define(target, name, make(original as Method));
}

/** Define `target[name]` as an own, non-enumerable, writable and configurable method. */
export function define(target: object, name: string, value: Method): void {
  Object.defineProperty(target, name, { value, writable: true, configurable: true, enumerable: false });
}

/**
 * The names of the methods `x` has through its prototype chain (own and inherited, not those of
 * `Object.prototype`), read from property descriptors so that no getter runs.
 */
export function methodNames(x: object): string[] {
  const names = new Set<string>();
  for (let o: object | null = x; o !== null && o !== Object.prototype; o = Object.getPrototypeOf(o)) {
    for (const name of Object.getOwnPropertyNames(o)) {
      if (name === 'constructor') continue;
      const d = Object.getOwnPropertyDescriptor(o, name);
      if (d !== undefined && typeof d.value === 'function') names.add(name);
    }
  }
  return [...names];
}
