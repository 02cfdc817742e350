// Internal, quarantined: calling the kernel with the verb's frame as the ambient space, without
// allocating.
//
// Why it looks like this: binding a space (`withspace(frame, thunk)`, or `bindAmbient`, its form
// without argument checks that the verb uses for its own frame) takes a function, and the kernel
// takes `(outs, ...inputs, options)`. The obvious thunk, `() => kernel(outs, ...inputs, options)`,
// is a closure and an argument array per call: on an arena in steady state, those would be the
// call's only garbage. So the binding calls one module function (`runPending`) with the verb's
// KernelCall, whose `run` reads the pending call's arguments from fields set just before, and the
// common arities are direct calls, unrolled by hand. One function for every verb, not a thunk per
// verb: V8 inlines it into the verb's call path, which it cannot do for a closure made per verb.
// This is reentrancy-safe: the binding calls `run` synchronously before anything else can run, and
// `run` reads every field before the kernel starts (a kernel that calls its own verb again sets
// them anew for the inner call).

import type { Frame } from '@pol/core';
import { bindAmbient } from '@pol/core/backend';
import type { CallArgs } from './arguments.js';

type AnyKernel = (...args: unknown[]) => unknown;

export class KernelCall {
  // The pending call: the kernel's arguments are `[outs, ...inputs, options?]`, with the inputs
  // read from `args`, and `options` (when defined) in the parameter `slot`; `count` in all.
  #outs: unknown;
  #args: CallArgs | undefined;
  #slot = -1;
  #options: unknown;
  #count = 0;

  constructor(
    readonly kernel: AnyKernel,
    // The parameters the kernel declares after its destinations, as JavaScript counts them.
    readonly declared: number,
  ) {}

  /** The pending call, made: what the store runs with the frame bound (through `runPending`). */
  run(): unknown {
    const kernel = this.kernel;
    const a = this.#outs;
    switch (this.#count) {
      case 1:
        this.#release();
        return kernel(a);
      case 2: {
        const b = this.#argument(1);
        this.#release();
        return kernel(a, b);
      }
      case 3: {
        const b = this.#argument(1);
        const c = this.#argument(2);
        this.#release();
        return kernel(a, b, c);
      }
      case 4: {
        const b = this.#argument(1);
        const c = this.#argument(2);
        const d = this.#argument(3);
        this.#release();
        return kernel(a, b, c, d);
      }
      case 5: {
        const b = this.#argument(1);
        const c = this.#argument(2);
        const d = this.#argument(3);
        const e = this.#argument(4);
        this.#release();
        return kernel(a, b, c, d, e);
      }
      case 6: {
        const b = this.#argument(1);
        const c = this.#argument(2);
        const d = this.#argument(3);
        const e = this.#argument(4);
        const f = this.#argument(5);
        this.#release();
        return kernel(a, b, c, d, e, f);
      }
      default: {
        const args: unknown[] = [];
        for (let i = 0; i < this.#count; i++) args.push(this.#argument(i));
        this.#release();
        return kernel.apply(undefined, args);
      }
    }
  }

  /** Where the options object goes for a call with `inputs` inputs: right after them, and never before the kernel's last declared parameter. */
  slotFor(inputs: number): number {
    return Math.max(inputs + 1, this.declared);
  }

  /**
   * Call the kernel in `frame` with `outs`, the call's inputs, and `options` (when defined) in its
   * slot (so an omitted optional input stays undefined).
   */
  call(frame: Frame, outs: unknown, args: CallArgs, options: unknown): unknown {
    this.#outs = outs;
    this.#args = args;
    this.#options = options;
    if (options === undefined) {
      this.#slot = -1;
      this.#count = 1 + args.inputs;
    } else {
      const slot = this.slotFor(args.inputs);
      this.#slot = slot;
      this.#count = slot + 1;
    }
    return bindAmbient(frame, runPending, this);
  }

  #argument(i: number): unknown {
    if (i === 0) return this.#outs;
    const args = this.#args as CallArgs;
    if (i <= args.inputs) return args.input(i - 1);
    return i === this.#slot ? this.#options : undefined;
  }

  #release(): void {
    this.#outs = undefined;
    this.#args = undefined;
    this.#options = undefined;
  }
}

// The one function every verb's store binding calls, with the verb's KernelCall as its argument:
// one function for all verbs, so that V8 can inline it (and the call's `run`) into the verb's
// call path; a thunk per verb (a closure each) could not be inlined there.
function runPending(call: KernelCall): unknown {
  return call.run();
}
