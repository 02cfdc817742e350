// biome-ignore-all lint/complexity/noArguments: the wrappers forward `arguments` as received, so each call keeps its arity and the steady path allocates no rest array.
/**
 * Observing one command encoder, or one compute pass, for the hooks that are on when it is made:
 * checked mode's usage-scope check and a capture's recording. Each method an observer needs gets
 * one wrapper on that object, which asks every observer before forwarding and tells every
 * observer after. An encoder made while no hook is on is left exactly as the device made it.
 *
 * @module
 */

import type { Args, CommandObserver } from './hooks.js';
import { define, type Method, methodNames } from './patch.js';

/** Put `observers`' wrappers on `target` (an encoder, or a compute pass). */
export function observe(target: object, observers: readonly CommandObserver[]): void {
  if (observers.length === 0) return;
  const everything = observers.some((o) => o.methods === undefined);
  const names = everything ? methodNames(target) : [...new Set(observers.flatMap((o) => [...(o.methods ?? [])]))];
  for (const name of names) {
    const original = (target as Record<string, unknown>)[name];
    if (typeof original !== 'function') continue;
    const watching = observers.filter((o) => o.methods === undefined || o.methods.has(name));
    define(target, name, forwarder(name, original as Method, watching));
  }
}

function forwarder(name: string, original: Method, observers: readonly CommandObserver[]): Method {
  const beginsPass = name === 'beginComputePass';
  return function (this: unknown) {
    const args: Args = arguments;
    for (const o of observers) o.before?.(name, args);
    const result = original.apply(this, arguments as unknown as unknown[]);
    if (beginsPass && result !== null && typeof result === 'object') {
      const inner: CommandObserver[] = [];
      for (const o of observers) {
        const p = o.pass?.(args[0]);
        if (p !== undefined) inner.push(p);
      }
      observe(result, inner);
    }
    for (const o of observers) o.after?.(name, args, result);
    return result;
  };
}
