/**
 * Replacing a method on one object (a device, a queue, an encoder, a prototype) and putting it
 * back exactly as it was. Every instrumentation in this package goes through here.
 *
 * @module
 */

/** A method, seen from outside: any `this`, any arguments. */
export type Method = (this: unknown, ...args: unknown[]) => unknown;

/**
 * Replace `target[name]` with `make(original)` as an own, non-enumerable property, and return a
 * function that restores the previous state exactly: the previous own property (descriptor and
 * all) if there was one, else no own property (so the prototype's method shows through again).
 * A name whose current value is not a function is left alone.
 */
export function patch(target: object, name: string, make: (original: Method) => Method): () => void {
  const own = Object.getOwnPropertyDescriptor(target, name);
  const original = (target as Record<string, unknown>)[name];
  if (typeof original !== 'function') return () => {};
  Object.defineProperty(target, name, {
    value: make(original as Method),
    writable: true,
    configurable: true,
    enumerable: false,
  });
  return () => {
    if (own !== undefined) Object.defineProperty(target, name, own);
    else delete (target as Record<string, unknown>)[name];
  };
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
