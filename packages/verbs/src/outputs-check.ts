// Internal: the check that a kernel wrote into its output buffers rather than onto the outputs
// object. A positional out-parameter function (gl-matrix's `mat4.multiply(out, a, b)`) handed the
// outputs object as `out` writes index keys onto it and leaves the buffers as they were: without
// this check the call would return zeros and look fine. Index key 0 is what every such function
// writes first, and one `in` test finds it; checked mode compares every key.

import { OutputsWrittenError } from './errors.js';
import type { Plan } from './plan.js';
import type { VerbState } from './verb-state.js';

/** Refuse a call whose kernel assigned to its outputs object (thoroughly in checked mode). */
export function checkOutputs(verb: VerbState, plan: Plan, outs: Record<string, unknown>, thorough: boolean): void {
  if (0 in outs) throw written(verb, '0', 'wrote index keys onto');
  if (thorough) checkEveryKey(verb, plan, outs);
}

// Apart from checkOutputs, which a steady call runs: small enough for V8 to inline.
function checkEveryKey(verb: VerbState, plan: Plan, outs: Record<string, unknown>): void {
  const names = plan.resultNames;
  let j = 0;
  for (const key in outs) {
    if (key !== names[j]) throw written(verb, key, names.includes(key) ? 'reordered' : `added '${key}' to`);
    j++;
  }
  if (j !== names.length) throw written(verb, names[j] as string, `removed '${names[j]}' from`);
}

function written(verb: VerbState, key: string, what: string): OutputsWrittenError {
  return new OutputsWrittenError(
    verb.name,
    key,
    `${verb.label}: the kernel ${what} its outputs object instead of writing into the buffers in it, so its outputs would be ` +
      'wrong (left as they were). A kernel writes into out.name.data. If it is a positional out-parameter function, such as ' +
      "gl-matrix's mat4.multiply(out, a, b), wrap it: Allocating(outParameters(fn, { outputs })) passes each output's data " +
      'positionally. The call was rolled back.',
  );
}
