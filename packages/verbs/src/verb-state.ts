// Internal: what one verb keeps between calls (its kernel, its plans, its reusable argument record
// and kernel call), and the call's first two steps behind `Allocating`: reading the arguments, and
// finding or making the plan for them. Making a plan is where a call is checked in full: the typed
// refusals of plain-JavaScript mistakes, the describers, their specs, the names they describe.

import type { Kernel, Space } from '@pol/core';
import { savepointKey } from '@pol/core/backend';
import { CallArgs } from './arguments.js';
import { NoSpaceError } from './errors.js';
import { KernelCall } from './kernel-call.js';
import { Tracker } from './key.js';
import type { Adapter } from './out-parameters.js';
import { type Signature, signatureOf } from './parameters.js';
import { describeCall, describesOptions, isDescribed, Plan, PlanCache } from './plan.js';
import { diagnose, missingInput, refuseExtraInputs, refuseMisplacedSpace, undescribed } from './refusals.js';
import { KnownSpaces, type Made } from './reuse.js';

export class VerbState {
  readonly label: string;
  readonly declared: number;
  readonly call: KernelCall;
  readonly plans = new PlanCache();
  /** The spaces it was called on first, each with the plan and `Made` record of its last call there. */
  readonly spaces = new KnownSpaces();
  /** The name the result keeps the kernel's return value under (`outParameters` kernels), if any. */
  readonly returns: string | undefined;
  /** Whether the kernel receives an options object (an `outParameters` kernel does not: its function is positional). */
  readonly passesOptions: boolean;
  #args = new CallArgs();
  #signature: Signature | undefined | null = null;

  constructor(
    readonly kernel: Kernel,
    /** The kernel's name, for messages (`'softmaxInto'`, or `'anonymous kernel'`). */
    readonly name: string,
    /** `Allocating(kernel, { checked: true })`: describe and compare on every call. */
    readonly checked: boolean,
    adapter: Adapter | undefined,
  ) {
    this.returns = adapter?.returns;
    this.passesOptions = adapter === undefined;
    this.label = `Allocating(${name})`;
    this.declared = kernel.length - 1;
    this.call = new KernelCall(kernel as unknown as (...args: unknown[]) => unknown, this.declared);
  }

  /** The argument record for a new call: the verb's own, or a fresh one while that is taken. */
  takeArgs(): CallArgs {
    const args = this.#args.busy ? new CallArgs() : this.#args;
    args.busy = true;
    return args;
  }

  /** The kernel's signature, read from its source once, on the first call that needs it (see parameters.ts). */
  signature(): Signature | undefined {
    if (this.#signature === null) this.#signature = signatureOf(this.kernel);
    return this.#signature;
  }

  /** How messages name input `i` (from 0): the kernel's parameter name, or `input i+1`. */
  inputName(i: number): string {
    return this.signature()?.parameters[i + 1]?.name ?? `input ${i + 1}`;
  }

  /** Whether the kernel describes checkpoints or scratch, so that the verb hands it an options object. */
  describesOptions(): boolean {
    return describesOptions(this.kernel);
  }

  /** The plan for these arguments: a kept one, or one made now (which checks the call in full, and sets `args.fresh`). */
  planFor(args: CallArgs): Plan {
    return this.plans.find(args) ?? this.#makePlan(args);
  }

  /** Checked mode, on a kept plan: describe again and refuse a describer whose spec changed. */
  verify(plan: Plan, args: CallArgs): void {
    plan.verify(this.name, this.label, describeCall(this.kernel, this.describerArgs(args)));
  }

  /**
   * Whether this call runs checked: the verb was made so, or its space is a checked arena (or a
   * frame on one). Fixed for a space (an arena's mode is set when it is made), so a space the verb
   * remembers answers from its record.
   */
  isChecked(space: Space, args?: CallArgs): boolean {
    const record = args?.record;
    return record !== undefined ? record.checked : this.#checkedOn(space);
  }

  #checkedOn(space: Space): boolean {
    if (this.checked) return true;
    const s = space as { readonly checked?: unknown; readonly arena?: { readonly checked?: unknown } };
    return s.checked === true || s.arena?.checked === true;
  }

  /**
   * What `plan` made last from `space`, to hand out again (see reuse.ts), on spaces with
   * savepoints (arenas, frames), whose arrays come back call after call; undefined on others. A
   * space the call passed first is found through its record (`args.record`), and remembered for
   * the next call when it was not.
   */
  madeFor(plan: Plan, space: Space, args: CallArgs): Made | undefined {
    const record = args.record;
    if (record === undefined) return this.#madeUnrecorded(plan, space, args);
    if (record.plan !== plan) {
      record.plan = plan;
      record.made = plan.madeFrom(space);
    }
    return record.made;
  }

  // A space the verb does not remember: found through the plan, and remembered when it came first.
  #madeUnrecorded(plan: Plan, space: Space, args: CallArgs): Made | undefined {
    if (space[savepointKey] === undefined) return undefined;
    const made = plan.madeFrom(space);
    if (args.start === 1) this.spaces.add(space, plan, made, this.isChecked(space));
    return made;
  }

  /** The arguments describers receive: the inputs, then the options object when there is one. */
  describerArgs(args: CallArgs, view?: (v: unknown) => unknown): unknown[] {
    const out: unknown[] = [];
    for (let i = 0; i < args.inputs; i++) out.push(view === undefined ? args.input(i) : view(args.input(i)));
    if (args.options !== undefined) out.push(view === undefined ? args.options : view(args.options));
    return out;
  }

  /** Why a call without a space has nowhere to allocate: too few inputs, or no array among them. */
  nowhere(args: CallArgs): Error {
    if (args.inputs < this.declared - 1) return missingInput(this, args, undefined);
    return new NoSpaceError(
      `${this.label} was called with no space, outside every withspace/scratchspace block, and with no array among its inputs, ` +
        'so there is nowhere to allocate its outputs. Pass a space first (an Arena, a Frame, Similar(x)), ' +
        'or call it inside withspace(space, () => ...).',
    );
  }

  #makePlan(args: CallArgs): Plan {
    refuseMisplacedSpace(this, args);
    if (!isDescribed(this.kernel)) throw undescribed(this);
    const tracker = new Tracker();
    let specs: ReturnType<typeof describeCall>;
    try {
      specs = describeCall(
        this.kernel,
        this.describerArgs(args, (v) => tracker.view(v)),
      );
    } catch (error) {
      throw diagnose(this, args, error, 'describer');
    } finally {
      tracker.close();
    }
    const plan = new Plan(args, tracker, specs);
    plan.checkConflicts(this.label, this.returns);
    refuseExtraInputs(this, args, plan);
    // A spec that passes one of the call's own arrays through depends on identity, not shape:
    // such a call is described anew every time.
    if (!plan.passesArgumentsThrough(args)) {
      plan.kept = true;
      this.plans.add(plan);
    }
    args.fresh = true;
    return plan;
  }
}
