// Internal, quarantined: calling the kernel with the verb's frame as the ambient space, without
// allocating.
//
// Why it looks like this: the kernel takes `(outs, ...inputs, options)`, and the obvious call,
// `withspace(frame, () => kernel(outs, ...inputs, options))`, is a closure and an argument array per
// call: on an arena in steady state, those would be the call's only garbage. So:
// - While the ambient store binds synchronously (core's default store, until an async callback
//   engages AsyncLocalStorage), the frame is bound through core's `AmbientBinder` (enter, then leave
//   in a `finally`) around a direct call of the kernel: no callback at all.
// - Otherwise (an engaged store, a store of the host's own), and always for an `async` kernel, the
//   binding takes a function: it calls one module function (`runPending`, or `runPendingAsync`,
//   which is itself async so that the store carries the binding across the kernel's awaits) with the
//   verb's KernelCall, whose `run` reads the pending call's arguments from fields set just before.
//   One function for every verb, not a thunk per verb: V8 inlines it into the verb's call path,
//   which it cannot do for a closure made per verb. This is reentrancy-safe: the binding calls `run`
//   synchronously before anything else can run, and `run` reads every field before the kernel
//   starts (a kernel that calls its own verb again sets them anew for the inner call).
// Both end in `invokeKernel`, whose common arities are direct calls, unrolled by hand.

import type { Frame } from '@pol/core';
import { type AmbientBinder, ambientBinder, bindAmbient, isAsyncFunction } from '@pol/core/backend';
import type { CallArgs } from './arguments.js';

type AnyKernel = (...args: unknown[]) => unknown;

export class KernelCall {
  /** Whether the kernel is an `async` function, known before it runs: then it is bound through the store, never the binder. */
  readonly #async: boolean;
  // The pending call, for the store's binding: outs, the call's arguments, and the options object.
  #outs: unknown;
  #args: CallArgs | undefined;
  #options: unknown;

  constructor(
    readonly kernel: AnyKernel,
    // The parameters the kernel declares after its destinations, as JavaScript counts them.
    readonly declared: number,
  ) {
    this.#async = isAsyncFunction(kernel);
  }

  /**
   * Call the kernel in `frame` with `outs`, the call's inputs, and `options` (when defined) in its
   * slot (see `slotFor`), and return what it returns.
   */
  call(frame: Frame, outs: unknown, args: CallArgs, options: unknown): unknown {
    const binder = this.#async ? undefined : ambientBinder();
    if (binder !== undefined) {
      const token = binder.enter(frame);
      let returned: unknown;
      try {
        returned = invokeKernel(this.kernel, this.declared, outs, args, options);
      } finally {
        binder.leave(token);
      }
      binder.checkResult(returned);
      return returned;
    }
    this.#outs = outs;
    this.#args = args;
    this.#options = options;
    try {
      return bindAmbient(frame, this.#async ? runPendingAsync : runPending, this);
    } finally {
      // `run` took them already, unless the store refused before calling it (an async kernel on
      // a store without async context): then they would keep this call's objects alive.
      this.#release();
    }
  }

  /**
   * Call the kernel in `frame`, bound through `binder`, with `outs`, its one or two inputs passed
   * as they came, and `options` (when defined) right after them: a steady call's direct lane (see
   * steady.ts), which holds no argument record. Only for a synchronous kernel whose options slot
   * is right after its inputs.
   */
  callInputs(
    binder: AmbientBinder,
    frame: Frame,
    outs: unknown,
    inputs: number,
    i0: unknown,
    i1: unknown,
    options: unknown,
  ): unknown {
    const kernel = this.kernel;
    const token = binder.enter(frame);
    let returned: unknown;
    try {
      if (options === undefined) returned = inputs === 1 ? kernel(outs, i0) : kernel(outs, i0, i1);
      else returned = inputs === 1 ? kernel(outs, i0, options) : kernel(outs, i0, i1, options);
    } finally {
      binder.leave(token);
    }
    binder.checkResult(returned);
    return returned;
  }

  /** The pending call, made: what the store runs with the frame bound. */
  run(): unknown {
    const outs = this.#outs;
    const args = this.#args as CallArgs;
    const options = this.#options;
    this.#release();
    return invokeKernel(this.kernel, this.declared, outs, args, options);
  }

  #release(): void {
    this.#outs = undefined;
    this.#args = undefined;
    this.#options = undefined;
  }
}

/** Where the options object goes for a call with `inputs` inputs: right after them, and never before the kernel's last declared parameter. */
function slotFor(inputs: number, declared: number): number {
  return Math.max(inputs + 1, declared);
}

/**
 * `kernel(outs, ...inputs, options)`: the inputs from `args`, then `options` (when defined) in its
 * slot, so that an omitted optional input between them stays undefined. One or two inputs (most
 * kernels) here; every other arity apart, so that this stays small enough for V8 to inline.
 */
function invokeKernel(kernel: AnyKernel, declared: number, outs: unknown, args: CallArgs, options: unknown): unknown {
  const v = args.values;
  const s = args.start;
  const n = args.inputs;
  if (options === undefined) {
    if (n === 1) return kernel(outs, v[s]);
    if (n === 2) return kernel(outs, v[s], v[s + 1]);
  } else if (slotFor(n, declared) === n + 1) {
    if (n === 1) return kernel(outs, v[s], options);
    if (n === 2) return kernel(outs, v[s], v[s + 1], options);
  }
  return invokeOther(kernel, declared, outs, args, options);
}

// No input, or three to five, still as direct calls; past that, or with options after omitted
// optional inputs, one argument array.
function invokeOther(kernel: AnyKernel, declared: number, outs: unknown, args: CallArgs, options: unknown): unknown {
  const v = args.values;
  const s = args.start;
  const n = args.inputs;
  if (options === undefined) {
    switch (n) {
      case 0:
        return kernel(outs);
      case 3:
        return kernel(outs, v[s], v[s + 1], v[s + 2]);
      case 4:
        return kernel(outs, v[s], v[s + 1], v[s + 2], v[s + 3]);
      case 5:
        return kernel(outs, v[s], v[s + 1], v[s + 2], v[s + 3], v[s + 4]);
    }
  } else if (slotFor(n, declared) === n + 1) {
    switch (n) {
      case 0:
        return kernel(outs, options);
      case 3:
        return kernel(outs, v[s], v[s + 1], v[s + 2], options);
      case 4:
        return kernel(outs, v[s], v[s + 1], v[s + 2], v[s + 3], options);
    }
  }
  return invokeSpread(kernel, declared, outs, args, options);
}

// The rest, through one argument array.
function invokeSpread(kernel: AnyKernel, declared: number, outs: unknown, args: CallArgs, options: unknown): unknown {
  const list: unknown[] = [outs];
  for (let i = 0; i < args.inputs; i++) list.push(args.input(i));
  if (options !== undefined) {
    const slot = slotFor(args.inputs, declared);
    while (list.length < slot) list.push(undefined);
    list.push(options);
  }
  return kernel.apply(undefined, list);
}

// The functions every verb's store binding calls, with the verb's KernelCall as their argument: one
// function for all verbs, so that V8 can inline it (and the call's `run`) into the verb's call path;
// a thunk per verb (a closure each) could not be inlined there.
function runPending(call: KernelCall): unknown {
  return call.run();
}

// For an async kernel: async itself, so that the store (seeing an async callback before it runs)
// carries the binding across the kernel's awaits. It runs `call.run()` synchronously up to the
// kernel's first await, so the pending fields are read before anything else can run.
async function runPendingAsync(call: KernelCall): Promise<unknown> {
  return call.run();
}
