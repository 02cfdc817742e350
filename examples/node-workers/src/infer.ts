import { describe, Undef } from '@pol/core';
import { Allocating } from '@pol/verbs';
import { type F32, linear, type Mlp, relu, rowCount, softmax } from '@pol/verbs/examples';

// The options the last step hands softmax: `{ y: out.y }`, made once per output array and then
// found again, since a literal in the kernel would be a new object on every call. Keyed weakly, so
// an output array that is dropped takes its options object with it.
const softmaxOptions = new WeakMap<F32, { readonly y: F32 }>();

function intoRows(y: F32): { readonly y: F32 } {
  let options = softmaxOptions.get(y);
  if (options === undefined) {
    options = { y };
    softmaxOptions.set(y, options);
  }
  return options;
}

/**
 * Batched inference of a two-layer perceptron, into `out.y`: `softmax(relu(x · W1 + b1) · W2 + b2)`
 * for `x` of dims `[rows, features]`, one row of class probabilities per row of `x`. The hidden
 * activations and the logits are scratch of the call: the inner verbs run against the ambient space,
 * which the verb made of this kernel binds to a frame on the caller's space, so they die when the
 * call returns. The last step writes straight into `out.y` (passed to softmax by name).
 *
 * Each row is computed on its own, in the same order of operations whatever the batch, so a block
 * of rows computed alone gives exactly the values it gets inside the whole batch.
 */
export const inferInto = describe(
  function inferInto(out: { y: F32 }, params: Mlp, x: F32): void {
    const h = linear(params.layer1, x).y;
    const a = relu(h).y;
    const logits = linear(params.layer2, a).y;
    softmax(logits, intoRows(out.y));
  },
  {
    outputs: (params: Mlp, x: F32) => ({ y: Undef('float32', [rowCount(x), params.layer2.b.dims[0] ?? 0]) }),
  },
);

/**
 * The functional form: `infer(space, params, x, { y })`. With the caller's `y` (rows of the batch's
 * output in the shared slab) it materializes nothing but the frame's scratch.
 */
export const infer = Allocating(inferInto);

/** Bytes of scratch that one call over `rows` rows carves from its frame (each carve rounded up to 256 bytes). */
export function scratchBytes(rows: number, hidden: number, classes: number): number {
  const carve = (floats: number) => Math.ceil((4 * floats) / 256) * 256;
  // h and relu(h), the logits, and softmax's own scratch (its exponentials).
  return 2 * carve(rows * hidden) + 2 * carve(rows * classes);
}
