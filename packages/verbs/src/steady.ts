// Internal: a verb's steady calls. Once a call on a space with savepoints (an arena, a frame on
// one) has found its plan, the verb keeps, for that space and that shape of arguments, everything
// the general path (call.ts) works out again on every call: where the space is among the
// arguments, which plan applies, whether the call is checked, what the plan made there last. A
// later call on the same space (passed first, or bound as the ambient space) whose arguments have
// that shape is then recognised by one lookup and the plan's key, and goes straight to execute.ts.
// Its scratch, when the call passes no options object, is carved by the steady call's own loop
// (monomorphic in the frames it sees, which the plan's shared materializer is not).
//
// The most common call, `verb(space, x)` or `verb(space, x, y)` of a one-name shape, has a direct
// lane: the verb's function finds its steady call from its own parameters and hands them straight
// to the kernel, with no argument record to fill, split, match and empty (a third of the shell's
// cost over a hand-written frame, measured). The record is made only where a failure's diagnosis
// or a kernel's promise needs one.
//
// What is skipped is only what the kept record already answers: the typed refusals ran when the
// plan was made, for arguments of this very shape; the caller's buffers are checked on every call
// that passes an options object; rollback, the frame, and the result's reuse are execute.ts's, the
// same code as the general path's. Checked calls never take this path (they describe every call).

import { type DType, type Frame, type Space, zeroArray } from '@pol/core';
import {
  type AmbientBinder,
  closeAfterFailure,
  commitKey,
  frameKey,
  isAsyncFunction,
  isThenable,
  noSavepoint,
  openFrame,
  openFrameKey,
  rollback,
  savepointKey,
} from '@pol/core/backend';
import type { CallArgs } from './arguments.js';
import { execute, type SteadyParts, settle } from './execute.js';
import type { ValueKey } from './key.js';
import { checkOutputs } from './outputs-check.js';
import type { Plan } from './plan.js';
import { diagnose } from './refusals.js';
import type { Made } from './reuse.js';
import type { SpecPlan } from './spec-plan.js';
import type { VerbState } from './verb-state.js';

const NO_KEYS: readonly string[] = Object.freeze([]);
const NO_DIMS: readonly number[] = Object.freeze([]);

/** `{ [name]: value }`, a fresh object. */
function named(name: string, value: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  out[name] = value;
  return out;
}

/** One kept shape of call on one space. */
export class SteadyCall implements SteadyParts {
  /** The call's argument count, where the space is (1: first; 0: the ambient space), and how many inputs follow. */
  readonly count: number;
  readonly start: number;
  readonly inputs: number;
  readonly #keys: readonly ValueKey[];
  readonly #optionsKey: ValueKey | undefined;
  // The space's protocol methods, read once. `#open` is undefined for a frame, which goes through
  // core's openFrame (it refuses a closed frame for every backend).
  readonly #save: () => unknown;
  readonly #commit: ((token: unknown) => void) | undefined;
  readonly #open: (() => Frame) | undefined;
  // The result's and the scratch's layouts (see SpecPlan), and the checkpoints the options carry.
  readonly #result: SpecPlan;
  readonly #scratch: SpecPlan;
  readonly #checkpoints: readonly string[];
  // This call's arrays, until the object that holds them is settled; emptied before it returns.
  readonly #values: unknown[];
  // The one-name lane (see #runOne): whether this call takes it, and the result's and the scratch's
  // one name, dtype, dims and zeroing, read once (no scratch: #scratchName is undefined).
  readonly #one: boolean;
  readonly #resultName: string = '';
  readonly #resultDtype: DType = 'float32';
  readonly #resultDims: readonly number[] = NO_DIMS;
  readonly #resultZeroed: boolean = false;
  readonly #scratchName: string | undefined;
  readonly #scratchDtype: DType = 'float32';
  readonly #scratchDims: readonly number[] = NO_DIMS;
  readonly #scratchZeroed: boolean = false;
  /**
   * Whether this call takes the direct lane (see `SteadyCalls.direct`, steady-calls.ts): the one-name lane, on
   * a space passed first, with one or two inputs, no options object, and the kernel's options slot
   * right after its inputs.
   */
  readonly direct: boolean;

  constructor(
    readonly space: Space,
    readonly plan: Plan,
    readonly made: Made,
    args: CallArgs,
    verb: VerbState,
  ) {
    this.count = args.count;
    this.start = args.start;
    this.inputs = args.inputs;
    this.#keys = plan.keys;
    this.#optionsKey = plan.optionsKey;
    this.#save = space[savepointKey] as () => unknown;
    this.#commit = space[commitKey];
    this.#open = (space as { [frameKey]?: unknown })[frameKey] === true ? undefined : space[openFrameKey];
    this.#result = plan.result;
    this.#scratch = plan.scratch;
    this.#checkpoints = plan.checkpointNames;
    this.#values = [];
    const result = plan.result;
    const scratch = plan.scratch;
    // The common shape: one output and at most one scratch buffer, all Undefs, no checkpoints, for
    // a plain synchronous kernel whose verb returns its outputs.
    this.#one =
      result.flat &&
      result.names.length === 1 &&
      plan.checkpointNames.length === 0 &&
      scratch.flat &&
      scratch.names.length <= 1 &&
      plan.allocates &&
      verb.passesOptions &&
      verb.returns === undefined &&
      !isAsyncFunction(verb.kernel);
    if (this.#one) {
      this.#resultName = result.names[0] as string;
      this.#resultDtype = result.dtypes[0] as DType;
      this.#resultDims = result.dims[0] as readonly number[];
      this.#resultZeroed = result.zeroed[0] === true;
    }
    this.direct =
      this.#one &&
      args.start === 1 &&
      plan.optionsKey === undefined &&
      (args.inputs === 1 || args.inputs === 2) &&
      verb.declared <= args.inputs + 1;
    this.#scratchName = this.#one ? scratch.names[0] : undefined;
    if (this.#scratchName !== undefined) {
      this.#scratchDtype = scratch.dtypes[0] as DType;
      this.#scratchDims = scratch.dims[0] as readonly number[];
      this.#scratchZeroed = scratch.zeroed[0] === true;
    }
  }

  /**
   * Whether `args` (on this call's space, found by the caller) has this call's shape; if so, says
   * where its inputs and options are, as `split` would. Allocates nothing.
   */
  matches(args: CallArgs): boolean {
    if (args.count !== this.count) return false;
    const values = args.values;
    const start = this.start;
    const keys = this.#keys;
    for (let i = 0; i < keys.length; i++) if (!(keys[i] as ValueKey).matches(values[start + i])) return false;
    let options: Record<string, unknown> | undefined;
    const optionsKey = this.#optionsKey;
    if (optionsKey !== undefined) {
      // A group key matches plain objects only: what `split` takes as the options object.
      const last = values[this.count - 1];
      if (!optionsKey.matches(last)) return false;
      options = last as Record<string, unknown>;
    }
    args.start = start;
    args.inputs = this.inputs;
    args.options = options;
    return true;
  }

  /**
   * Whether a direct call (the space first, then `i0` and `i1`, `count` arguments in all) has this
   * call's shape. Allocates nothing.
   */
  matchesDirect(count: number, i0: unknown, i1: unknown): boolean {
    const keys = this.#keys;
    return count === this.count && (keys[0] as ValueKey).matches(i0) && (this.inputs === 1 || (keys[1] as ValueKey).matches(i1));
  }

  /** Run a direct call (see {@link SteadyCall.direct}), the kernel bound through `binder`. */
  runDirect(verb: VerbState, binder: AmbientBinder, i0: unknown, i1: unknown): unknown {
    return this.#runOne(verb, undefined, binder, i0, i1);
  }

  /** Run the call: the one-name lane, or the caller's buffers checked, then execute.ts with this call's parts. */
  run(verb: VerbState, args: CallArgs): unknown {
    const options = args.options;
    if (options === undefined && this.#one) return this.#runOne(verb, args, undefined, undefined, undefined);
    if (options !== undefined) {
      try {
        this.plan.checkSupplied(verb.label, options);
      } catch (error) {
        args.release();
        throw error;
      }
    }
    return execute(verb, args, this.plan, this.space, this.made, false, this);
  }

  // execute.ts's steps for the one-name shape, in one function: the output carved and the result
  // object reused by name, the frame, the scratch carved and the options object reused by name,
  // the kernel, then commit or roll back exactly as execute.ts does (its failure paths, and its
  // `settle` for a kernel that returns a promise). The shape is the common one (an output and a
  // scratch buffer, as softmax has), and a call of it is short enough that the general steps'
  // loops and layers were a third of it (measured against a hand-written shell). A direct call
  // (`args` undefined) passes its inputs and `binder` instead of the argument record.
  #runOne(verb: VerbState, args: CallArgs | undefined, binder: AmbientBinder | undefined, i0: unknown, i1: unknown): unknown {
    const space = this.space;
    const made = this.made;
    let pending = false;
    try {
      const token = this.#save.call(space);
      let result: Record<string, unknown>;
      let frame: Frame;
      try {
        const array = space.alloc(this.#resultDtype, this.#resultDims);
        if (this.#resultZeroed) zeroArray(array);
        const last = made.result;
        if (last !== undefined && last[this.#resultName] === array) result = last;
        else {
          result = named(this.#resultName, array);
          made.result = result;
        }
        frame = this.open();
      } catch (error) {
        rollback(space, token, error);
        throw error;
      }
      try {
        let options: Record<string, unknown> | undefined;
        const name = this.#scratchName;
        if (name !== undefined) {
          const array = frame.alloc(this.#scratchDtype, this.#scratchDims);
          if (this.#scratchZeroed) zeroArray(array);
          const last = made.optionKeys.length === 0 ? made.options : undefined;
          if (last !== undefined && last[name] === array) options = last;
          else {
            options = named(name, array);
            made.options = options;
            made.optionKeys = NO_KEYS;
          }
        }
        const returned =
          args === undefined
            ? verb.call.callInputs(binder as AmbientBinder, frame, result, this.inputs, i0, i1, options)
            : verb.call.call(frame, result, args, options);
        if (isThenable(returned)) {
          pending = true;
          const record = args ?? this.#argsOf(verb, i0, i1);
          return settle(verb, record, this.plan, returned, { frame, space, token, result, checked: false, made });
        }
        checkOutputs(verb, this.plan, result, false);
        this.commit(token);
      } catch (error) {
        closeAfterFailure(frame, error);
        rollback(space, token, error);
        const record = args ?? this.#argsOf(verb, i0, i1);
        try {
          throw diagnose(verb, record, error, 'kernel');
        } finally {
          if (args === undefined) record.release();
        }
      }
      frame.close();
      return result;
    } finally {
      if (!pending) args?.release();
    }
  }

  // A direct call's arguments as an argument record, for what needs one: a failure's diagnosis, or
  // the settling of a kernel's promise. Its taker releases it.
  #argsOf(verb: VerbState, i0: unknown, i1: unknown): CallArgs {
    const args = verb.takeArgs();
    const values = args.values;
    values[0] = this.space;
    values[1] = i0;
    values[2] = i1;
    args.count = this.count;
    args.start = 1;
    args.inputs = this.inputs;
    args.options = undefined;
    return args;
  }

  save(): unknown {
    return this.#save.call(this.space);
  }

  commit(token: unknown): void {
    if (token !== noSavepoint) this.#commit?.call(this.space, token);
  }

  open(): Frame {
    const open = this.#open;
    return open !== undefined ? open.call(this.space) : openFrame(this.space);
  }

  result(): Record<string, unknown> {
    const layout = this.#result;
    if (!layout.flat) return this.plan.materializeResult(this.space, undefined, this.made);
    const made = this.made;
    const last = made.result;
    const out = this.#carve(this.space, layout, last, undefined);
    if (out !== last) made.result = out;
    return out;
  }

  kernelOptions(frame: Frame, result: Record<string, unknown>): Record<string, unknown> {
    const layout = this.#scratch;
    const made = this.made;
    if (!layout.flat) return this.plan.kernelOptions(frame, undefined, result, made);
    // An options object made with the caller's keys is not this call's (which passed none).
    const last = made.optionKeys.length === 0 ? made.options : undefined;
    const out = this.#carve(frame, layout, last, result);
    if (out !== last) {
      made.options = out;
      made.optionKeys = NO_KEYS;
    }
    return out;
  }

  // Carve every name of `layout` from `space`, zeroing where its Undef says so, and return `last`
  // when it holds exactly these arrays (and, for the options object, the checkpoints of `result`,
  // which come first in it), else a fresh object: the rule of reuse.ts.
  #carve(
    space: Space,
    layout: SpecPlan,
    last: Record<string, unknown> | undefined,
    result: Record<string, unknown> | undefined,
  ): Record<string, unknown> {
    const names = layout.names;
    const dtypes = layout.dtypes;
    const dims = layout.dims;
    const zeroed = layout.zeroed;
    const checkpoints = result === undefined ? NO_KEYS : this.#checkpoints;
    if (names.length === 1 && checkpoints.length === 0) {
      // One name, most kernels' shape: no staging, no loop.
      const name = names[0] as string;
      const array = space.alloc(dtypes[0] as DType, dims[0] as readonly number[]);
      if (zeroed[0] === true) zeroArray(array);
      if (last !== undefined && last[name] === array) return last;
      const out: Record<string, unknown> = {};
      out[name] = array;
      return out;
    }
    const values = this.#values;
    let same = last !== undefined;
    try {
      for (let j = 0; j < names.length; j++) {
        const array = space.alloc(dtypes[j] as DType, dims[j] as readonly number[]);
        if (zeroed[j] === true) zeroArray(array);
        values[j] = array;
        if (same && (last as Record<string, unknown>)[names[j] as string] !== array) same = false;
      }
      for (let j = 0; same && j < checkpoints.length; j++) {
        const name = checkpoints[j] as string;
        if ((last as Record<string, unknown>)[name] !== (result as Record<string, unknown>)[name]) same = false;
      }
      if (same) return last as Record<string, unknown>;
      const out: Record<string, unknown> = {};
      for (let j = 0; j < checkpoints.length; j++) {
        const name = checkpoints[j] as string;
        out[name] = (result as Record<string, unknown>)[name];
      }
      for (let j = 0; j < names.length; j++) out[names[j] as string] = values[j];
      return out;
    } finally {
      for (let j = 0; j < names.length; j++) values[j] = undefined;
    }
  }
}
