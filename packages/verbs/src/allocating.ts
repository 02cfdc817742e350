import { InvalidArgumentError, type Kernel } from '@pol/core';
import { ambientBinder, describeValue, readOptions } from '@pol/core/backend';
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
    // A steady call of `verb(space, x)` or `verb(space, x, y)` takes its direct lane: the
    // parameters straight to the kernel, no argument record (see steady.ts).
    const calls = steady.on(a0);
    if (calls !== undefined && (n === 2 || n === 3)) {
      const lane = SteadyCalls.direct(calls, n, a1, a2);
      const binder = lane === undefined ? undefined : ambientBinder();
      if (binder !== undefined) return (lane as SteadyCall).runDirect(state, binder, a1, a2);
    }
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
    // A call of a shape this verb ran on this space before goes the short way (see steady.ts).
    const kept = steady.find(args, calls);
    return kept !== undefined ? kept.run(state, args) : call(state, args, steady);
  };
  Object.defineProperty(verb, 'name', { value: f.name, configurable: true });
  Object.defineProperty(verb, 'kernel', { value: f, enumerable: true });
  return verb as unknown as Verb<F>;
}
