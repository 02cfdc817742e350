import { trainOnGpu } from '@pol/webgpu/examples';
import { requestDevice } from './device.js';

const got = await requestDevice();
if (got.device === undefined) {
  // The demo runs on machines without WebGPU too: say so, and succeed.
  console.log(`node-webgpu: skipped: ${got.reason}.`);
} else {
  try {
    console.log(`training a 2-16-3 perceptron on WebGPU (${got.adapter})`);
    const started = performance.now();
    const result = await trainOnGpu(got.device, {
      steps: 200,
      onStep: (step, loss, how) => {
        if (step === 1 || step === 2 || step % 50 === 0)
          console.log(`${String(step).padStart(6)}  loss ${loss.toFixed(4)}  (${how})`);
      },
    });
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `warm-up: one eager step on two 4 MiB slabs, loss ${result.warmupLoss.toFixed(4)}, ` +
        `watermarks ${result.watermark} bytes (the step's arena) and ${result.paramsBytes} bytes (the parameters)`,
    );
    console.log(`then: ${String(result.arena)} and ${String(result.params)}: slabs of exactly the watermarks`);
    const { submits, passes, dispatches, copies } = result.stats;
    console.log(
      `graph: ${dispatches} dispatches in ${passes} pass and ${copies} gradient clears, ${submits} submits replayed as one; ` +
        `step 1 captured, steps 2-${result.losses.length} replayed (${seconds.toFixed(2)} s in all)`,
    );
    console.log(`loss: ${result.losses[0]?.toFixed(4)} -> ${result.losses.at(-1)?.toFixed(4)}`);
  } finally {
    got.release();
  }
}
