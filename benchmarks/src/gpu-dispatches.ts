/**
 * Counting the compute dispatches a step encodes, whoever encodes them (Pol eager, a replayed
 * graph, TensorFlow.js's backend): every compute pass encoder of Dawn's bindings shares one
 * prototype, whose `dispatchWorkgroups` is wrapped with a counting forwarder while the step runs,
 * and put back after. Not for timed code: the wrapper costs a call.
 */

/** The dispatches encoded on any device of this process while `step` runs (awaited). */
export async function countDispatches(device: GPUDevice, step: () => unknown): Promise<number> {
  // A pass made and ended only to reach the prototype: nothing is submitted.
  const pass = device.createCommandEncoder().beginComputePass();
  pass.end();
  const prototype = Object.getPrototypeOf(pass) as GPUComputePassEncoder;
  const original = prototype.dispatchWorkgroups;
  let dispatches = 0;
  prototype.dispatchWorkgroups = function (this: GPUComputePassEncoder, x: number, y?: number, z?: number): undefined {
    dispatches++;
    return original.call(this, x, y, z);
  };
  try {
    await step();
  } finally {
    prototype.dispatchWorkgroups = original;
  }
  return dispatches;
}
