// Internal: a verb call that no steady call of the verb matched (see steady.ts): the first call
// of a shape, a space the verb has not kept a steady call for, checked mode, a space without
// savepoints. It reads the arguments, finds or makes the plan for their shapes (which checks the
// call in full), resolves the space and checks the caller's buffers, all before anything is
// allocated; then it runs the call (execute.ts) and, when a next call of the same shape on the same
// space can skip these steps, keeps a steady call for it.

import type { Space } from '@pol/core';
import { type CallArgs, resolveSpace } from './arguments.js';
import { execute } from './execute.js';
import type { SteadyCalls } from './steady-calls.js';
import type { VerbState } from './verb-state.js';

/** Call the verb `verb` with `args`, the general way. */
export function call(verb: VerbState, args: CallArgs, steady: SteadyCalls): unknown {
  let space: Space | undefined;
  let plan: ReturnType<VerbState['planFor']>;
  let checked: boolean;
  let made: ReturnType<VerbState['madeFor']>;
  try {
    // 1. The arguments: the space if it comes first, the inputs, the options object.
    args.split(verb.declared, verb.spaces);
    // 2. The plan for their shapes: kept, or made now (which checks the call in full).
    plan = verb.planFor(args);
    // 3. The space, checked mode, and the caller's own buffers against the plan.
    space = args.start === 1 ? (args.values[0] as Space) : resolveSpace(args.values, 0, args.inputs);
    if (space === undefined) throw verb.nowhere(args);
    checked = verb.isChecked(space, args);
    if (checked && !args.fresh) verb.verify(plan, args);
    const options = args.options;
    if (options !== undefined) plan.checkSupplied(verb.label, options);
    // 4. What this plan made last from the space, to hand out again.
    made = verb.madeFor(plan, space, args);
  } catch (error) {
    args.release();
    throw error;
  }
  // An unchecked call on a space with savepoints (arenas, frames), with a plan the verb keeps:
  // the next call of this shape there is a steady one.
  if (!checked && made !== undefined && plan.kept) steady.keep(verb, plan, space, made, args);
  return execute(verb, args, plan, space, made, checked, undefined);
}
