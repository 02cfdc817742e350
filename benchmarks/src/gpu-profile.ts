/**
 * The WebGPU perceptron step as targets of `profile.ts`: Pol's eager `trainStep` (`gpu-eager`) and
 * the same dispatches by hand on Pol's arenas (`gpu-by-hand`), 16 steps a call, the device drained
 * between calls (as `gpu-timing.ts` times them) so that queues stay short. The printed time per
 * operation includes that drain (the GPU work); the self times show the steps' own CPU work.
 */
import { openAdapter } from './gpu.js';
import { perceptronVariants } from './gpu-perceptron.js';
import type { Target } from './profile.js';

const BATCH = 16;

/** A profile target running one of the perceptron's Pol variants. */
export async function gpuTarget(variant: 'eager' | 'byHand'): Promise<Target> {
  const plain = await (await openAdapter()).requestDevice({ label: 'profile peers' });
  const pol = await (await openAdapter()).requestDevice({ label: 'profile pol' });
  const v = await perceptronVariants(plain, pol);
  const step = variant === 'eager' ? v.eager.step : v.byHand.step;
  return {
    op: () => {
      for (let i = 0; i < BATCH; i++) step();
    },
    per: BATCH,
    iterations: 1_000,
    drain: () => pol.queue.onSubmittedWorkDone(),
  };
}
