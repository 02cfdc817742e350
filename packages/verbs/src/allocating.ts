import { InvalidArgumentError, type Kernel } from '@pol/core';
import { ambientBinder, describeValue, passedCount, readOptions } from '@pol/core/backend';
import { MOST_ARGUMENTS } from './arguments.js';
import { call } from './call.js';
import { NotAKernelError } from './errors.js';
import { adapterOf } from './out-parameters.js';
import type { AllocatingOptions, Verb } from './signature.js';
import type { SteadyCall } from './steady.js';
import { SteadyCalls } from './steady-calls.js';
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
  const steady = new SteadyCalls();
  // Named parameters only: no `arguments` and no rest parameter, of which V8 makes an object on
  // every call in each tier below its optimizing compiler (the interpreter, Sparkplug and Maglev,
  // where a program's loop runs for its first tens of thousands of calls: 60 to 75 bytes a call,
  // measured). So an argument passed as undefined counts as not passed (as with a default
  // parameter): the call's count is up to its last argument that is not undefined.
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
    a8?: unknown,
    a9?: unknown,
    a10?: unknown,
    a11?: unknown,
  ): unknown {
    const calls = steady.on(a0);
    // A steady call of `verb(space, x)` or `verb(space, x, y)` takes its direct lane: the
    // parameters straight to the kernel, no argument record (see steady.ts).
    if (
      calls !== undefined &&
      a1 !== undefined &&
      a3 === undefined &&
      a4 === undefined &&
      a5 === undefined &&
      a6 === undefined &&
      a7 === undefined &&
      a8 === undefined &&
      a9 === undefined &&
      a10 === undefined &&
      a11 === undefined
    ) {
      const lane = SteadyCalls.direct(calls, a2 === undefined ? 2 : 3, a1, a2);
      const binder = lane === undefined ? undefined : ambientBinder();
      if (binder !== undefined) return (lane as SteadyCall).runDirect(state, binder, a1, a2);
    }
    return generalCall(state, steady, calls, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11);
  };
  Object.defineProperty(verb, 'name', { value: f.name, configurable: true });
  Object.defineProperty(verb, 'kernel', { value: f, enumerable: true });
  return verb as unknown as Verb<F>;
}

// Every call the direct lane did not take: the arguments in a record, then a steady call of the
// same shape or the whole call. Apart from the verb function, so that the verb stays small enough
// for V8 to inline into a caller's loop within that loop's budget, which also counts what the
// verb's own optimized code inlines: at 440 bytes of bytecode, with this inside, a loop of a verb
// and a retract did not inline it on Node.js 22 to 26 (traced with --trace-turbo-inlining); at 200
// it mostly does. Whether it does in a given run depends on what V8 compiled first, so no test
// asserts it.
function generalCall(
  state: VerbState,
  steady: SteadyCalls,
  calls: readonly SteadyCall[] | undefined,
  a0: unknown,
  a1: unknown,
  a2: unknown,
  a3: unknown,
  a4: unknown,
  a5: unknown,
  a6: unknown,
  a7: unknown,
  a8: unknown,
  a9: unknown,
  a10: unknown,
  a11: unknown,
): unknown {
  if (a11 !== undefined) throw tooManyArguments(state.label);
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
  v[8] = a8;
  v[9] = a9;
  v[10] = a10;
  args.count = passedCount(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10);
  // A call of a shape this verb ran on this space before goes the short way (see steady.ts).
  const kept = steady.find(args, calls);
  return kept !== undefined ? kept.run(state, args) : call(state, args, steady);
}

function tooManyArguments(label: string): InvalidArgumentError {
  return new InvalidArgumentError(
    `The verb of ${label} takes at most ${MOST_ARGUMENTS} arguments (the space, the inputs and the options), and this call passed more. ` +
      'Pass the inputs grouped: one object or array of arrays, which the kernel reads by name or index.',
  );
}
