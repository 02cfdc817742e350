import { type Frame, InvalidArgumentError, type Kernel, type Space } from '@pol/core';
import {
  closeAfterFailure,
  commit,
  describeValue,
  isThenable,
  noSavepoint,
  openFrame,
  readOptions,
  rollback,
  savepoint,
} from '@pol/core/backend';
import { type CallArgs, resolveSpace } from './arguments.js';
import { NotAKernelError } from './errors.js';
import { adapterOf } from './out-parameters.js';
import { checkOutputs } from './outputs-check.js';
import type { Plan } from './plan.js';
import { diagnose } from './refusals.js';
import type { Made } from './reuse.js';
import type { AllocatingOptions, Verb } from './signature.js';
import { VerbState } from './verb-state.js';

/**
 * Turn a mutating kernel `f(outs, ...inputs, options)` into a functional verb that materializes
 * the buffers `f` describes, calls it, and returns its outputs and checkpoints.
 *
 * - `verb(space, ...inputs, options?)`: outputs and checkpoints are materialized from `space`
 *   (they belong to the caller); scratch from a frame the verb opens on `space` and closes
 *   however `f` exits (return, throw, rejected promise; an async `f` is awaited first).
 * - `verb(...inputs, options?)`: the same against the ambient space (`withspace`,
 *   `scratchspace`), or, with none bound, against `Similar` of the first array input.
 * - `options`: the kernel's own options, plus, under any described name, a buffer of the caller's
 *   that is checked (dtype and dims), used as is and not materialized.
 * - The result is one object: `{ ...outputs, ...checkpoints }`, or a promise of it for an async `f`.
 *
 * The verb describes each shape of arguments once (dtypes, dims, and the options its describers
 * read) and reuses that plan: describers must be pure functions of those. With `{ checked: true }`
 * (or on a checked arena) it describes again on every call and refuses a describer that breaks
 * this. On an arena the result object is the previous call's when it holds the very same arrays.
 *
 * @throws {NotAKernelError} when `f` is not a function.
 * @throws {InvalidArgumentError} for options other than `{ checked?: boolean }`.
 * @example
 * ```ts
 * import { describe, Undef, Similar, withspace, type HostArray } from '@pol/core';
 * import { Allocating } from '@pol/verbs';
 * type F32 = HostArray<'float32'>;
 * const scaleInto = describe(
 *   function scaleInto(o: { y: F32 }, x: F32, opts: { by: number }) {
 *     for (let i = 0; i < x.data.length; i++) o.y.data[i] = (x.data[i] ?? 0) * opts.by;
 *   },
 *   { outputs: (x: F32) => ({ y: Undef(x) }) },
 * );
 * const scale = Allocating(scaleInto);
 * const x = Similar(new Float32Array(0)).alloc('float32', [3]);
 * x.data.set([1, 2, 3]);
 * const { y } = scale(x, { by: 2 }); // unscoped: y from Similar(x); [2, 4, 6]
 * const space = Similar(x);
 * scale(space, x, { by: 3 }).y; // space-first
 * withspace(space, () => scale(x, { by: 4 }).y); // ambient
 * scale(x, { by: 5, y }); // into your own buffer: the result's y is that very array
 * const checkedScale = Allocating(scaleInto, { checked: true }); // while developing
 * ```
 */
export function Allocating<F extends Kernel>(f: F, options?: AllocatingOptions): Verb<F> {
  if (typeof f !== 'function') {
    throw new NotAKernelError(
      `Allocating(f) needs the mutating kernel function f(outs, ...inputs, options), got ${describeValue(f)}. ` +
        'Pass the kernel itself (ideally as returned by describe(kernel, { outputs, checkpoints, scratch })), not its result.',
    );
  }
  const { checked } = readOptions('Allocating(kernel, options)', options, ['checked']);
  if (checked !== undefined && typeof checked !== 'boolean') {
    throw new InvalidArgumentError(`Allocating(kernel, options): checked must be true or false, got ${describeValue(checked)}.`);
  }
  const state = new VerbState(f, f.name === '' ? 'anonymous kernel' : f.name, checked === true, adapterOf(f));
  // Eight named parameters and the argument count, rather than a rest parameter: the count tells
  // `verb(x)` from `verb(x, undefined)`, and the arguments go straight into the verb's reused record.
  const verb = function (
    this: unknown,
    a0?: unknown,
    a1?: unknown,
    a2?: unknown,
    a3?: unknown,
    a4?: unknown,
    a5?: unknown,
    a6?: unknown,
    a7?: unknown,
  ): unknown {
    // biome-ignore lint/complexity/noArguments: the count is the only way to tell an explicit undefined from no argument.
    const n = arguments.length;
    const args = state.takeArgs();
    const v = args.values;
    v[0] = a0;
    v[1] = a1;
    v[2] = a2;
    v[3] = a3;
    v[4] = a4;
    v[5] = a5;
    v[6] = a6;
    v[7] = a7;
    // biome-ignore lint/complexity/noArguments: arguments past the eighth, rare, read by index.
    for (let i = 8; i < n; i++) v[i] = arguments[i];
    args.count = n;
    return call(state, args);
  };
  Object.defineProperty(verb, 'name', { value: f.name, configurable: true });
  Object.defineProperty(verb, 'kernel', { value: f, enumerable: true });
  return verb as unknown as Verb<F>;
}

// One call, in six steps. Everything that can refuse the call runs before anything is allocated;
// after that, a failure (a full space, the kernel's throw or rejection) closes the frame and rolls
// the outputs and checkpoints back, and success commits their savepoint once the kernel returned
// (or its promise resolved).
function call(verb: VerbState, args: CallArgs): unknown {
  let pending = false;
  try {
    // 1. The arguments: the space if it comes first, the inputs, the options object.
    args.split(verb.declared, verb.spaces);
    // 2. The plan for their shapes: kept, or made now (which checks the call in full).
    const plan = verb.planFor(args);
    // 3. The space, checked mode, and the caller's own buffers against the plan.
    const space = args.start === 1 ? (args.values[0] as Space) : resolveSpace(args.values, 0, args.inputs);
    if (space === undefined) throw verb.nowhere(args);
    const checked = verb.isChecked(space, args);
    if (checked && !args.fresh) verb.verify(plan, args);
    const options = args.options;
    if (options !== undefined) plan.checkSupplied(verb.label, options);
    // 4. Outputs and checkpoints from the unframed space, under one savepoint, and the verb's frame.
    const made = verb.madeFor(plan, space, args);
    const token = plan.allocates ? savepoint(space) : noSavepoint;
    let result: Record<string, unknown>;
    let frame: Frame;
    try {
      result = plan.materializeResult(space, options, made);
      frame = openFrame(space);
    } catch (error) {
      rollback(space, token, error);
      throw error;
    }
    // 5. Scratch from the frame, then the kernel, with the frame as its ambient space.
    let returned: unknown;
    try {
      const kernelOptions = !verb.passesOptions
        ? undefined
        : plan.needsOptions
          ? plan.kernelOptions(frame, options, result, made)
          : options;
      returned = verb.call.call(frame, result, args, kernelOptions);
      if (isThenable(returned)) {
        pending = true;
        return settle(verb, args, plan, returned, frame, space, token, result, { checked, made });
      }
      checkOutputs(verb, plan, result, checked);
      // The work succeeded: a space that tracks its arrays for rollback (Similar over GPU memory) lets go.
      commit(space, token);
    } catch (error) {
      closeAfterFailure(frame, error);
      rollback(space, token, error);
      throw diagnose(verb, args, error, 'kernel');
    }
    // 6. Close the frame, and return the outputs and checkpoints.
    frame.close();
    return verb.returns === undefined ? result : plan.withReturned(result, verb.returns, returned, made);
  } finally {
    if (!pending) args.release();
  }
}

// An async kernel: the frame stays open until its promise settles, then closes; the outputs'
// savepoint is held until then too, committed on resolution, rolled back on rejection as for a
// synchronous throw.
function settle(
  verb: VerbState,
  args: CallArgs,
  plan: Plan,
  returned: PromiseLike<unknown>,
  frame: Frame,
  space: Space,
  token: unknown,
  result: Record<string, unknown>,
  mode: { readonly checked: boolean; readonly made: Made | undefined },
): Promise<unknown> {
  const fail = (error: unknown): never => {
    closeAfterFailure(frame, error);
    rollback(space, token, error);
    throw diagnose(verb, args, error, 'kernel');
  };
  return Promise.resolve(returned)
    .then(
      (value) => {
        try {
          checkOutputs(verb, plan, result, mode.checked);
          commit(space, token);
        } catch (error) {
          fail(error);
        }
        frame.close();
        return verb.returns === undefined ? result : plan.withReturned(result, verb.returns, value, mode.made);
      },
      (error: unknown) => fail(error),
    )
    .finally(() => args.release());
}
