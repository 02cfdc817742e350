// Internal: running a call whose plan, space and `Made` record are known (found by call.ts, or
// kept by steady.ts). Everything that can refuse the call ran before this; from here a failure (a
// full space, the kernel's throw or rejection) closes the frame and rolls the outputs and
// checkpoints back, and success commits their savepoint once the kernel returned (or its promise
// resolved). Both call paths end here, so a call behaves the same whichever path found its plan.

import type { Frame, Space } from '@pol/core';
import { closeAfterFailure, commit, isThenable, noSavepoint, openFrame, rollback, savepoint } from '@pol/core/backend';
import type { CallArgs } from './arguments.js';
import { checkOutputs } from './outputs-check.js';
import type { Plan } from './plan.js';
import { diagnose } from './refusals.js';
import type { Made } from './reuse.js';
import type { VerbState } from './verb-state.js';

/**
 * A steady call's own forms of the steps that depend only on its space and plan (see steady.ts):
 * the same protocol calls and the same rule of reuse as the general ones, read once per space
 * and carved by loops that see that call's space alone.
 */
export interface SteadyParts {
  /** A savepoint on the call's space (`savepoint(space)`). */
  save(): unknown;
  /** End it after success (`commit(space, token)`). */
  commit(token: unknown): void;
  /** The verb's frame on the space (`openFrame(space)`). */
  open(): Frame;
  /** The result (`plan.materializeResult`), for a call that passed no options object. */
  result(): Record<string, unknown>;
  /** The kernel's options object (`plan.kernelOptions`), for a call that passed none. */
  kernelOptions(frame: Frame, result: Record<string, unknown>): Record<string, unknown>;
}

/**
 * Materialize the result from `space` under one savepoint, open the verb's frame, carve the
 * scratch, call the kernel with the frame as the ambient space, and return the result (or a
 * promise of it). Releases `args` when the call ends.
 */
export function execute(
  verb: VerbState,
  args: CallArgs,
  plan: Plan,
  space: Space,
  made: Made | undefined,
  checked: boolean,
  steady: SteadyParts | undefined,
): unknown {
  let pending = false;
  try {
    const options = args.options;
    // A steady call's parts, and its own carving when no options object came with the call.
    const own = steady !== undefined && options === undefined ? steady : undefined;
    const token = !plan.allocates ? noSavepoint : steady !== undefined ? steady.save() : savepoint(space);
    let result: Record<string, unknown>;
    let frame: Frame;
    try {
      result = own !== undefined ? own.result() : plan.materializeResult(space, options, made);
      frame = steady !== undefined ? steady.open() : openFrame(space);
    } catch (error) {
      rollback(space, token, error);
      throw error;
    }
    let returned: unknown;
    try {
      const kernelOptions = !verb.passesOptions
        ? undefined
        : !plan.needsOptions
          ? options
          : own !== undefined
            ? own.kernelOptions(frame, result)
            : plan.kernelOptions(frame, options, result, made);
      returned = verb.call.call(frame, result, args, kernelOptions);
      if (isThenable(returned)) {
        pending = true;
        return settle(verb, args, plan, returned, { frame, space, token, result, checked, made });
      }
      checkOutputs(verb, plan, result, checked);
      // The work succeeded: a space that tracks its arrays for rollback (Similar over GPU memory) lets go.
      if (steady !== undefined) steady.commit(token);
      else commit(space, token);
    } catch (error) {
      closeAfterFailure(frame, error);
      rollback(space, token, error);
      throw diagnose(verb, args, error, 'kernel');
    }
    frame.close();
    return verb.returns === undefined ? result : plan.withReturned(result, verb.returns, returned, made);
  } finally {
    if (!pending) args.release();
  }
}

/** What a call whose kernel returned a promise keeps until it settles. */
export interface Pending {
  readonly frame: Frame;
  readonly space: Space;
  readonly token: unknown;
  readonly result: Record<string, unknown>;
  readonly checked: boolean;
  readonly made: Made | undefined;
}

/**
 * An async kernel (or one that returned a thenable): the frame stays open until its promise
 * settles, then closes; the outputs' savepoint is held until then too, committed on resolution,
 * rolled back on rejection as for a synchronous throw. Releases `args` when it settles.
 */
export function settle(
  verb: VerbState,
  args: CallArgs,
  plan: Plan,
  returned: PromiseLike<unknown>,
  pending: Pending,
): Promise<unknown> {
  const { frame, space, token, result } = pending;
  const fail = (error: unknown): never => {
    closeAfterFailure(frame, error);
    rollback(space, token, error);
    throw diagnose(verb, args, error, 'kernel');
  };
  return Promise.resolve(returned)
    .then(
      (value) => {
        try {
          checkOutputs(verb, plan, result, pending.checked);
          commit(space, token);
        } catch (error) {
          fail(error);
        }
        frame.close();
        return verb.returns === undefined ? result : plan.withReturned(result, verb.returns, value, pending.made);
      },
      (error: unknown) => fail(error),
    )
    .finally(() => args.release());
}
