// Internal: where a verb keeps its steady calls (steady.ts), by space, and how a call finds the one
// it matches: the direct lane's lookup from the verb's own parameters, and the general lookup from
// its argument record (a space passed first, or the ambient one).

import { ambientspace, type Space } from '@pol/core';
import { type CallArgs, UNBOUND } from './arguments.js';
import type { Plan } from './plan.js';
import type { Made } from './reuse.js';
import { SteadyCall } from './steady.js';
import type { VerbState } from './verb-state.js';

/**
 * A verb's steady calls, by space, held as long as the space lives (a `WeakMap`: a verb never
 * keeps a space alive). At most {@link SteadyCalls.capacity} per space, as many as plans a verb keeps.
 */
export class SteadyCalls {
  static readonly capacity = 8;
  readonly #bySpace = new WeakMap<object, SteadyCall[]>();
  // Whether any steady call is on an ambient space: until then an unmatched call does not look one up.
  #ambient = false;

  /** The steady calls kept on `space`, if any (a primitive has none). */
  on(space: unknown): readonly SteadyCall[] | undefined {
    // WeakMap.get answers undefined for a primitive, without a test here.
    return this.#bySpace.get(space as object);
  }

  /**
   * The direct-lane steady call among `calls` (those on a call's first argument) that a call of
   * `count` arguments, the space then `i0` and `i1`, matches; or undefined. Allocates nothing.
   */
  static direct(calls: readonly SteadyCall[], count: number, i0: unknown, i1: unknown): SteadyCall | undefined {
    for (let i = 0; i < calls.length; i++) {
      const steady = calls[i] as SteadyCall;
      if (steady.direct && steady.matchesDirect(count, i0, i1)) return steady;
    }
    return undefined;
  }

  /**
   * The steady call `args` matches (and `args` split for it), or undefined; `calls` are those on
   * its first argument (see {@link SteadyCalls.on}). Allocates nothing.
   */
  find(args: CallArgs, calls: readonly SteadyCall[] | undefined): SteadyCall | undefined {
    let kept = calls;
    let start = 1;
    if (kept === undefined) {
      if (!this.#ambient) return undefined;
      kept = this.#bySpace.get(ambientspace(UNBOUND));
      if (kept === undefined) return undefined;
      start = 0;
    }
    for (let i = 0; i < kept.length; i++) {
      const steady = kept[i] as SteadyCall;
      if (steady.start === start && steady.matches(args)) return steady;
    }
    return undefined;
  }

  /** Keep a steady call for `plan` on `space`, with the shape of `args` (split already). */
  keep(verb: VerbState, plan: Plan, space: Space, made: Made, args: CallArgs): void {
    let calls = this.#bySpace.get(space);
    if (calls === undefined) {
      calls = [];
      this.#bySpace.set(space, calls);
    }
    const steady = new SteadyCall(space, plan, made, args, verb);
    if (calls.length < SteadyCalls.capacity) calls.push(steady);
    else calls[calls.length - 1] = steady;
    if (args.start === 0) this.#ambient = true;
  }
}
