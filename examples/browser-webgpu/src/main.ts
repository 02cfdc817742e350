/**
 * The page: train the perceptron on the browser's WebGPU, and redraw the picture after every step.
 * When it ends, `document.body.dataset.status` is `done` (with `window.polResult` set), or
 * `unsupported` (no WebGPU here) or `failed`, and the status line says why.
 */
import { type CapturedRun, trainOnGpu } from './mlp-gpu.js';
import { drawPicture, kib } from './picture.js';

declare global {
  interface Window {
    /** What the run measured, for tests and the console. */
    polResult?: { losses: number[]; watermark: number; capacity: number; dispatches: number };
  }
}

const steps = 200;

function element<T extends Element>(selector: string): T {
  const found = document.querySelector<T>(selector);
  if (found === null) throw new Error(`The page has no ${selector}.`);
  return found;
}

const canvas = element<HTMLCanvasElement>('#picture');
const status = element<HTMLDivElement>('#status');

function finish(state: 'done' | 'unsupported' | 'failed', message: string): void {
  status.textContent = message;
  document.body.dataset.status = state;
}

/** The next animation frame (so a fast GPU still shows every step), or 50 ms in a hidden tab. */
const nextFrame = () =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, 50);
    requestAnimationFrame(() => {
      clearTimeout(timer);
      resolve();
    });
  });

async function main(): Promise<void> {
  if (!('gpu' in navigator)) {
    finish('unsupported', 'This browser has no WebGPU (navigator.gpu is missing). Try a recent Chrome, Edge or Safari.');
    return;
  }
  const adapter = await navigator.gpu.requestAdapter();
  if (adapter === null) {
    finish('unsupported', 'WebGPU is here, but no adapter is available (navigator.gpu.requestAdapter() gave null).');
    return;
  }
  const device = await adapter.requestDevice({ label: 'pol example' });
  status.textContent = 'Compiling the kernels and warming up…';
  let run: CapturedRun | undefined;
  const losses: number[] = [];
  const result = await trainOnGpu(device, {
    steps,
    trace: true,
    onCaptured: (captured) => {
      run = captured;
    },
    onStep: async (step, loss, how) => {
      losses.push(loss);
      if (run === undefined) return;
      drawPicture(canvas, {
        capacity: run.arena.capacity,
        watermark: run.watermark,
        warmupBytes: run.warmupBytes,
        dispatches: run.trace ?? [],
        losses,
        steps,
        how,
      });
      status.textContent = `step ${step} of ${steps} (${how}): loss ${loss.toFixed(4)}`;
      await nextFrame();
    },
  });
  device.destroy();
  window.polResult = {
    losses: result.losses,
    watermark: result.watermark,
    capacity: result.arena.capacity,
    dispatches: result.stats.dispatches,
  };
  finish(
    'done',
    `${steps} steps on ${adapter.info.vendor || 'WebGPU'} ${adapter.info.architecture}: loss ${result.losses[0]?.toFixed(4)} → ` +
      `${result.losses.at(-1)?.toFixed(4)}, in a ${kib(result.arena.capacity)} slab (the watermark); ` +
      `${result.stats.dispatches} dispatches per step, one submit.`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  finish('failed', `Failed: ${error instanceof Error ? error.message : String(error)}`);
});
