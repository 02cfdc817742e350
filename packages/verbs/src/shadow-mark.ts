// Internal: the mark `shadowSpec` puts on the Undefs it makes, so that whoever materializes one
// through this package zeroes it (gradients accumulate, and arena memory is not zeroed). Core
// knows nothing of shadows, so the mark is verbs' own; a call plan reads it once, when it compiles
// a spec, never per call.
//
// Core's Undefs are extensible objects (private fields, not frozen), so a private field can be
// stamped onto one through a base constructor that returns its argument: invisible to reflection,
// equality and inspection, and one property test to read. An Undef that cannot be extended falls
// back to a WeakSet.

import type { Undef } from '@pol/core';

class ReturnsItsArgument {
  constructor(target: object) {
    // biome-ignore lint/correctness/noConstructorReturn: returning the argument is what stamps the private field onto it.
    return target;
  }
}

class ShadowMark extends ReturnsItsArgument {
  readonly #shadow = true;

  static stamp(target: object): void {
    new ShadowMark(target);
  }

  static has(target: object): boolean {
    return #shadow in target;
  }
}

const frozenShadows = new WeakSet<object>();

/** Mark `undef` as a shadow's description: whoever materializes it through this package zeroes it. */
export function markShadow<U extends Undef>(undef: U): U {
  if (ShadowMark.has(undef)) return undef;
  if (Object.isExtensible(undef)) ShadowMark.stamp(undef);
  else frozenShadows.add(undef);
  return undef;
}

/** Whether `undef` was marked by {@link markShadow}. */
export function isShadowUndef(undef: object): boolean {
  return ShadowMark.has(undef) || frozenShadows.has(undef);
}
