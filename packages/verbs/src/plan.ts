// Internal: a verb's call plan. Describing a call (running the describers, checking their specs,
// checking that no name is described twice) happens once per argument shape; the plan keeps the
// specs, and every later call with arguments of that shape only materializes them, through core's
// one spec materializer (`materializeInto`).
//
// The contract that makes this right: describers are pure functions of their arguments' dtype,
// dims and options (see key.ts for what "options" means here: what they read). Checked mode
// verifies it by describing again on every call and comparing (`verify`).

import { checkpoints, type Kernel, outputs, type Space, type Spec, scratch } from '@pol/core';
import { checkSupplied } from '@pol/core/backend';
import type { CallArgs } from './arguments.js';
import { BufferMismatchError, DescriberContractError, DescriptionConflictError } from './errors.js';
import type { Tracker, ValueKey } from './key.js';
import { type Made, MadeBySpace, sameOrFresh } from './reuse.js';
import { SpecPlan } from './spec-plan.js';
import { allocatesAnything, arraysIn, difference, namesOf } from './specs.js';

type Registry = ((...args: unknown[]) => unknown) & { has(kernel: Kernel): boolean };
const registries = {
  outputs: outputs as unknown as Registry,
  checkpoints: checkpoints as unknown as Registry,
  scratch: scratch as unknown as Registry,
} as const;

type Lifetime = keyof typeof registries;
const lifetimes: readonly Lifetime[] = ['outputs', 'checkpoints', 'scratch'];

/** Whether `kernel` has a describer for any lifetime. */
export function isDescribed(kernel: Kernel): boolean {
  return registries.outputs.has(kernel) || registries.checkpoints.has(kernel) || registries.scratch.has(kernel);
}

/** Whether `kernel` describes checkpoints or scratch (then a verb hands it an options object). */
export function describesOptions(kernel: Kernel): boolean {
  return registries.checkpoints.has(kernel) || registries.scratch.has(kernel);
}

/** What each lifetime describes for one call: the specs, as the describers returned them (and core checked them). */
export interface Specs {
  readonly outputs: Spec;
  readonly checkpoints: Spec;
  readonly scratch: Spec;
}

const EMPTY: Spec = Object.freeze({});

/**
 * Run the describers of `kernel` on `describerArgs` (the call's inputs and options, or tracking
 * views of them), every lifetime, before anything is allocated.
 */
export function describeCall(kernel: Kernel, describerArgs: readonly unknown[]): Specs {
  const spec = (lifetime: Lifetime): Spec => {
    const registry = registries[lifetime];
    return registry.has(kernel) ? (registry(kernel, ...describerArgs) as Spec) : EMPTY;
  };
  return { outputs: spec('outputs'), checkpoints: spec('checkpoints'), scratch: spec('scratch') };
}

export class Plan {
  /** The key: how many inputs, whether options were passed, and each input's (and the options') key. */
  readonly inputs: number;
  readonly hasOptions: boolean;
  readonly keys: readonly ValueKey[];
  readonly optionsKey: ValueKey | undefined;

  readonly specs: Specs;
  /** The result's names: outputs, then checkpoints, materialized from the unframed space. */
  readonly resultNames: readonly string[];
  readonly checkpointNames: readonly string[];
  readonly scratchNames: readonly string[];
  /** Every checkpoint and scratch name: what the verb sets in the kernel's options. */
  readonly optionNames: readonly string[];
  /** Whether the kernel receives an options object made by the verb (it has checkpoints or scratch). */
  readonly needsOptions: boolean;
  /** Whether the result has anything to allocate from the space (then the call takes a savepoint). */
  readonly allocates: boolean;

  /** What every call materializes from the space: the result (outputs, then checkpoints). */
  readonly result: SpecPlan;
  /** What every call materializes from the verb's frame: the scratch. */
  readonly scratch: SpecPlan;
  /** Whether the verb keeps this plan for later calls (it does unless a spec passes an argument through). */
  kept = false;
  // The objects made last, by the space they were made from (see reuse.ts).
  readonly #made = new MadeBySpace();

  constructor(args: CallArgs, tracker: Tracker, specs: Specs) {
    this.inputs = args.inputs;
    this.hasOptions = args.options !== undefined;
    const keys: ValueKey[] = [];
    for (let i = 0; i < args.inputs; i++) keys.push(tracker.keyOf(args.input(i)));
    this.keys = keys;
    this.optionsKey = args.options === undefined ? undefined : tracker.keyOf(args.options);
    this.specs = specs;
    this.checkpointNames = namesOf(specs.checkpoints);
    this.scratchNames = namesOf(specs.scratch);
    this.result = new SpecPlan([specs.outputs, specs.checkpoints]);
    this.scratch = new SpecPlan([specs.scratch]);
    this.resultNames = this.result.names;
    this.optionNames = [...this.checkpointNames, ...this.scratchNames];
    this.needsOptions = this.optionNames.length > 0;
    this.allocates = allocatesAnything(specs.outputs) || allocatesAnything(specs.checkpoints);
  }

  /** Whether a call with these arguments has this plan's shape. Allocates nothing. */
  matches(args: CallArgs): boolean {
    if (args.inputs !== this.inputs) return false;
    const options = args.options;
    if ((options !== undefined) !== this.hasOptions) return false;
    const keys = this.keys;
    const values = args.values;
    const start = args.start;
    for (let i = 0; i < keys.length; i++) if (!(keys[i] as ValueKey).matches(values[start + i])) return false;
    return options === undefined || (this.optionsKey as ValueKey).matches(options);
  }

  /** Refuse a name described under two lifetimes (outputs and checkpoints share the result; all share the options). */
  checkConflicts(label: string, reserved: string | undefined): void {
    const seen = new Map<string, string>();
    if (reserved !== undefined) seen.set(reserved, 'result (where it keeps its return value)');
    for (const lifetime of lifetimes) {
      for (const name of namesOf(this.specs[lifetime])) {
        const first = seen.get(name);
        if (first !== undefined) throw new DescriptionConflictError(label, name, first, lifetime);
        seen.set(name, lifetime);
      }
    }
  }

  /** Whether a spec passes one of the call's own arrays through: then it depends on identity, not shape, and is not kept. */
  passesArgumentsThrough(args: CallArgs): boolean {
    const passed: unknown[] = [];
    for (const lifetime of lifetimes) arraysIn(this.specs[lifetime], passed);
    if (passed.length === 0) return false;
    const found = new Set<unknown>();
    for (let i = 0; i < args.inputs; i++) collectValues(args.input(i), found, 0);
    if (args.options !== undefined) collectValues(args.options, found, 0);
    return passed.some((a) => found.has(a));
  }

  /** Check every buffer the caller passed under a described name, before anything is allocated. */
  checkSupplied(label: string, options: Record<string, unknown>): void {
    const problem =
      checkSupplied(this.specs.outputs, options) ??
      checkSupplied(this.specs.checkpoints, options) ??
      checkSupplied(this.specs.scratch, options);
    if (problem !== undefined) {
      throw new BufferMismatchError(
        problem.path,
        problem.expected,
        problem.got,
        `${label}: the buffer passed under '${problem.path}' is ${problem.got}, but the kernel describes ${
          problem.expected === 'nothing' ? 'nothing there' : `'${problem.path}' as ${problem.expected}`
        }. ${problem.remedy}`,
      );
    }
  }

  /** Checked mode: describe again and refuse a describer whose spec changed for the same key. */
  verify(name: string, label: string, specs: Specs): void {
    for (const lifetime of lifetimes) {
      const d = difference(this.specs[lifetime], specs[lifetime], '');
      if (d === undefined) continue;
      const where = d.path === '' ? 'its spec' : `'${d.path}'`;
      throw new DescriberContractError(
        name,
        lifetime,
        d.path,
        d.expected,
        d.got,
        `${label}: the ${lifetime} describer returned ${d.got} for ${where}, where it returned ${d.expected} before for arguments ` +
          'of the same dtypes, dims and options. Describers must be pure functions of those (no reading array data, globals or ' +
          'counters), because a verb describes each argument shape once and reuses its plan. Make the describer depend on ' +
          "shapes and options only; if you redefined the kernel's describers after its first call, define them once, before it.",
      );
    }
  }

  /** What this plan made last from `space`, to hand out again (see reuse.ts): for spaces that reuse their arrays. */
  madeFrom(space: Space): Made {
    return this.#made.for(space);
  }

  /**
   * The result: outputs and checkpoints from `space` (or the caller's buffers by name), in one
   * object: the one made last from this space (`made`) when it holds the very same values.
   */
  materializeResult(space: Space, options: Record<string, unknown> | undefined, made: Made | undefined): Record<string, unknown> {
    const result = this.result;
    try {
      result.fill(space, options);
      const out = sameOrFresh(made?.result, result.names, result.values);
      if (made !== undefined) made.result = out;
      return out;
    } finally {
      result.clear();
    }
  }

  /** `{ ...result, [name]: value }`: the result of a kernel that keeps its return value. */
  withReturned(result: Record<string, unknown>, name: string, value: unknown, made: Made | undefined): Record<string, unknown> {
    const values = this.result.values;
    try {
      for (let j = 0; j < this.resultNames.length; j++) values[j] = result[this.resultNames[j] as string];
      const out = sameOrFresh(made?.returned, this.resultNames, values, name, value);
      if (made !== undefined) made.returned = out;
      return out;
    } finally {
      this.result.clear();
    }
  }

  /**
   * The kernel's options object: the caller's options (its string keys, in order), with every
   * checkpoint (from `result`) and scratch buffer (materialized from `frame`) set under its name.
   * The object made last from the same space (`made`) is handed out again when it would hold the same values.
   */
  kernelOptions(
    frame: Space,
    options: Record<string, unknown> | undefined,
    result: Record<string, unknown>,
    made: Made | undefined,
  ): Record<string, unknown> {
    const scratch = this.scratch;
    try {
      scratch.fill(frame, options);
      const last = made?.options;
      if (last !== undefined && this.#holds(last, (made as Made).optionKeys, options, result, scratch.values)) return last;
      return this.#freshOptions(options, result, scratch.values, made);
    } finally {
      scratch.clear();
    }
  }

  // Apart from kernelOptions, which a steady call runs to its `return last`: small enough to inline.
  #freshOptions(
    options: Record<string, unknown> | undefined,
    result: Record<string, unknown>,
    scratchValues: readonly unknown[],
    made: Made | undefined,
  ): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    const keys: string[] = [];
    if (options !== undefined) {
      for (const key in options) {
        out[key] = options[key];
        keys.push(key);
      }
    }
    for (const name of this.checkpointNames) out[name] = result[name];
    const names = this.scratchNames;
    for (let j = 0; j < names.length; j++) out[names[j] as string] = scratchValues[j];
    if (made !== undefined) {
      made.options = out;
      made.optionKeys = keys;
    }
    return out;
  }

  #holds(
    last: Record<string, unknown>,
    keys: readonly string[],
    options: Record<string, unknown> | undefined,
    result: Record<string, unknown>,
    scratchValues: readonly unknown[],
  ): boolean {
    if (options === undefined ? keys.length !== 0 : !this.#holdsCallerOptions(last, keys, options)) return false;
    const ckpt = this.checkpointNames;
    for (let i = 0; i < ckpt.length; i++) if (last[ckpt[i] as string] !== result[ckpt[i] as string]) return false;
    const names = this.scratchNames;
    for (let i = 0; i < names.length; i++) if (last[names[i] as string] !== scratchValues[i]) return false;
    return true;
  }

  // Whether `last` was made with the caller's option keys `keys`, in order, and holds their values
  // (those the verb does not set itself).
  #holdsCallerOptions(last: Record<string, unknown>, keys: readonly string[], options: Record<string, unknown>): boolean {
    let j = 0;
    for (const key in options) {
      if (keys[j] !== key) return false;
      j++;
      if (!this.optionNames.includes(key) && last[key] !== options[key]) return false;
    }
    return j === keys.length;
  }
}

function collectValues(v: unknown, into: Set<unknown>, depth: number): void {
  if (typeof v !== 'object' || v === null || depth > 16) return;
  into.add(v);
  if (Array.isArray(v)) for (const element of v) collectValues(element, into, depth + 1);
  else if (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null) {
    for (const value of Object.values(v)) collectValues(value, into, depth + 1);
  }
}

/**
 * The plans of one verb: at most `capacity`, looked up in order; past that, the oldest is replaced.
 * A verb called with a few shapes in turn (the two layers of a perceptron) keeps a plan for each.
 */
export class PlanCache {
  static readonly capacity = 8;
  readonly #plans: Plan[] = [];
  #next = 0;

  find(args: CallArgs): Plan | undefined {
    const plans = this.#plans;
    for (let i = 0; i < plans.length; i++) {
      const plan = plans[i] as Plan;
      if (plan.matches(args)) return plan;
    }
    return undefined;
  }

  add(plan: Plan): void {
    const plans = this.#plans;
    if (plans.length < PlanCache.capacity) plans.push(plan);
    else {
      plans[this.#next] = plan;
      this.#next = (this.#next + 1) % PlanCache.capacity;
    }
  }

  /** How many plans are kept. */
  get size(): number {
    return this.#plans.length;
  }
}
