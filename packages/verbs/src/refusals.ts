// Internal: the typed refusals of the plain-JavaScript mistakes a verb call can make, each naming
// the verb and the parameter. TypeScript rejects all of these at compile time; JavaScript would
// otherwise crash inside the kernel with "Cannot read properties of undefined".
//
// - Before anything is described or allocated (when a plan is made for the call): a space where
//   an input goes, more inputs than the kernel takes, a kernel with no describers at all.
// - When the describers or the kernel fail: a call with too few inputs, or with a bare TypedArray
//   where the kernel reads a host array, turns the failure into an error that says so (the
//   original is its `cause`). Those are diagnoses, not guesses made in advance: a kernel may take
//   optional inputs, or bare TypedArrays, and then nothing is refused.

import { dtypeOfTypedArray, InvalidDescriptionError, isSpace } from '@pol/core';
import { isPlainObject, valueText } from '@pol/core/backend';
import type { CallArgs } from './arguments.js';
import {
  BareTypedArrayError,
  ExtraInputError,
  MisplacedSpaceError,
  MissingInputError,
  UndescribedKernelError,
} from './errors.js';
import type { Signature } from './parameters.js';
import type { Plan } from './plan.js';

/**
 * What a refusal reads of the verb it names (`VerbState` is one): declared here, not imported, so
 * that the verb's state and its refusals do not depend on each other.
 */
export interface RefusedVerb {
  /** `Allocating(softmaxInto)`. */
  readonly label: string;
  /** The kernel's name. */
  readonly name: string;
  /** How many inputs the kernel declares (its parameters after the destinations). */
  readonly declared: number;
  signature(): Signature | undefined;
  inputName(i: number): string;
  describesOptions(): boolean;
}

/** A space among the inputs: `softmax(x, arena)`. */
export function refuseMisplacedSpace(verb: RefusedVerb, args: CallArgs): void {
  for (let i = 0; i < args.inputs; i++) {
    const value = args.input(i);
    if (!isSpace(value)) continue;
    const name = verb.inputName(i);
    const at = args.start + i + 1;
    throw new MisplacedSpaceError(
      verb.name,
      name,
      at,
      `${verb.label} got a space (${String(value)}) as argument ${at}, where its kernel takes ${name.startsWith('input ') ? name : `'${name}'`}. A verb takes its space ` +
        'first, verb(space, ...inputs, options?), or none at all: then it allocates from the ambient space, or from Similar of its first array input.',
    );
  }
}

/**
 * More inputs than the kernel has parameters for: `softmax(arena, x, x)`, `softmax(arena, x,
 * undefined)`. The kernel's last parameter is its options object when it needs the verb's (it
 * describes checkpoints or scratch); a caller's options that only carry buffers by name need no
 * parameter (the verb takes them). Kernels that take any number of arguments are never refused;
 * for one whose source cannot be read, `kernel.length` stands in for its parameter count.
 */
export function refuseExtraInputs(verb: RefusedVerb, args: CallArgs, plan: Plan): void {
  const signature = verb.signature();
  if (signature?.variadic === true) return;
  const total = signature === undefined ? verb.declared : signature.parameters.length - 1;
  const capacity = Math.max(0, plan.needsOptions ? total - 1 : total);
  if (args.inputs <= capacity) return;
  const at = args.start + capacity + 1;
  const extra = args.input(capacity);
  throw new ExtraInputError(
    verb.name,
    `input ${capacity + 1}`,
    at,
    `${verb.label} was called with ${count(args.inputs, 'input')}, but its kernel takes ${describeParameters(verb, capacity, plan.needsOptions)}: ` +
      `argument ${at} (${extra === undefined ? 'undefined: an explicit undefined is an input too' : valueText(extra)}) has no parameter to go to. ` +
      'Remove it; options go last, as a plain object.',
  );
}

/** A kernel with no describers: the verb would materialize nothing and return `{}`. */
export function undescribed(verb: RefusedVerb): UndescribedKernelError {
  return new UndescribedKernelError(
    verb.name,
    `${verb.label}: the kernel has no describers (no outputs, checkpoints or scratch), so the verb would materialize nothing and ` +
      `return {}. Describe what it writes with describe(kernel, { outputs: (...inputs) => ({ name: Undef(...) }) }) before calling ` +
      'the verb, or call the kernel directly (inside scratchspace(space, ...) if it needs a frame).',
  );
}

/**
 * The error to throw for a failure of the describers (`stage: 'describer'`) or of the kernel: a
 * typed diagnosis when the call left an input out or passed a bare TypedArray and the failure is
 * the kind that makes (any failure of a describer; a TypeError of the kernel), else the failure
 * itself.
 */
export function diagnose(verb: RefusedVerb, args: CallArgs, error: unknown, stage: 'describer' | 'kernel'): unknown {
  const typeError = error instanceof TypeError;
  if (stage === 'kernel' && !typeError) return error;
  // A describer that returned something other than a spec ran to its end: what it returned is the
  // failure, whatever the call left out (a kernel's options parameter looks like a missing input
  // when only its outputs are described).
  if (error instanceof InvalidDescriptionError) return error;
  if (firstMissing(verb, args) !== undefined) return missingInput(verb, args, error, stage);
  if (!typeError) return error;
  for (let i = 0; i < args.inputs; i++) {
    const found = bareTypedArray(args.input(i));
    if (found === undefined) continue;
    const name = found.path === '' ? verb.inputName(i) : `${verb.inputName(i)}.${found.path}`;
    const at = args.start + i + 1;
    const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    return new BareTypedArrayError(
      verb.name,
      name,
      at,
      `${verb.label}: ${quoted(name)} (argument ${at}) is a bare ${found.text}, and the ${stage === 'describer' ? 'describers' : 'kernel'} ` +
        `failed on the call (${message}). Pol kernels read host arrays (x.data, x.dims): pass hostArray(x) from @pol/core instead. ` +
        'If this kernel does take bare TypedArrays, the failure is its own: see the error’s cause. Nothing was allocated, or it was rolled back.',
      error,
    );
  }
  return error;
}

/** Too few inputs (the first one missing), as an error, with the failure it caused when there was one. */
export function missingInput(
  verb: RefusedVerb,
  args: CallArgs,
  cause: unknown,
  stage: 'describer' | 'kernel' = 'describer',
): MissingInputError {
  const i = firstMissing(verb, args) ?? args.inputs;
  const name = verb.inputName(i);
  const at = args.start + i + 1;
  const passed =
    i < args.inputs ? `${quoted(name)} (argument ${at}) is undefined` : `${quoted(name)} (argument ${at}) is missing`;
  const because =
    cause === undefined
      ? ''
      : ` Its ${stage === 'describer' ? 'describers' : 'kernel'} failed for it: ${cause instanceof Error ? cause.message : String(cause)}`;
  return new MissingInputError(
    verb.name,
    name,
    at,
    `${verb.label} was called with ${count(args.inputs, 'input')}, but its kernel takes ${describeKernel(verb)}: ` +
      `${passed}.${because} Pass every input, in order, after the space (if any) and before the options object.`,
    cause,
  );
}

// The first of the kernel's inputs that the call leaves out or passes as undefined. Its last
// declared parameter is its options object when the call passes one or the kernel describes
// checkpoints or scratch (the verb then hands it one); otherwise it may be an input.
function firstMissing(verb: RefusedVerb, args: CallArgs): number | undefined {
  const needed = args.options !== undefined || verb.describesOptions() ? verb.declared - 1 : verb.declared;
  for (let i = 0; i < needed; i++) if (i >= args.inputs || args.input(i) === undefined) return i;
  return undefined;
}

// A bare TypedArray at the top of an input, or one level inside a plain-object input.
function bareTypedArray(value: unknown): { readonly path: string; readonly text: string } | undefined {
  const text = (x: unknown): string | undefined => {
    if (dtypeOfTypedArray(x) === undefined) return undefined;
    return `${(x as { constructor: { name: string } }).constructor.name}(${(x as { length: number }).length})`;
  };
  const top = text(value);
  if (top !== undefined) return { path: '', text: top };
  if (!isPlainObject(value)) return undefined;
  for (const key in value) {
    const inner = text(value[key]);
    if (inner !== undefined) return { path: key, text: inner };
  }
  return undefined;
}

// What the kernel takes after its destinations, as far as a call can tell.
function describeKernel(verb: RefusedVerb): string {
  const options = verb.describesOptions();
  return describeParameters(verb, options ? verb.declared - 1 : verb.declared, options);
}

// "1 input (x) and an options object", "2 inputs (x, w)".
function describeParameters(verb: RefusedVerb, inputs: number, options: boolean): string {
  const names: string[] = [];
  for (let i = 0; i < inputs; i++) names.push(verb.inputName(i));
  const list = names.length === 0 ? 'no inputs' : `${count(names.length, 'input')} (${names.join(', ')})`;
  return options ? `${list} and an options object` : list;
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

function quoted(name: string): string {
  return name.startsWith('input ') ? name : `its input '${name}'`;
}
