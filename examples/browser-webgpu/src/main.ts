/**
 * The page: train the perceptron on the browser's WebGPU, and redraw the picture after every step.
 * When it ends, `document.body.dataset.status` is `done` (with `window.polResult` set), or
 * `unsupported` (no WebGPU here) or `failed`, and the status line says why.
 */
import { instrument } from '@pol/webgpu';
import { type CapturedRun, trainOnGpu } from '@pol/webgpu/examples';
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

/**
 * How to get WebGPU, for a browser that has none: shown under the status line when the page
 * cannot run. WebGPU also needs a secure context (https, or http on localhost or 127.0.0.1).
 */
const howToGetWebGpu = [
  'Chrome and Edge 113 or newer have WebGPU on Windows, macOS and ChromeOS; on Android, Chrome 121 or newer.',
  'On Linux, where WebGPU is not on for every GPU by default, start Chrome or Chromium with --enable-unsafe-webgpu --enable-features=Vulkan (or turn on chrome://flags/#enable-unsafe-webgpu and chrome://flags/#enable-vulkan, then restart). Without a GPU, Chromium runs WebGPU on SwiftShader, its CPU Vulkan driver.',
  'Firefox 141 or newer has WebGPU on Windows; elsewhere, set dom.webgpu.enabled to true in about:config.',
  'Safari 26 or newer has WebGPU; in older Safari, turn on WebGPU under Develop > Feature Flags.',
  'Open the page over https, or from localhost or 127.0.0.1: browsers offer WebGPU only in a secure context.',
];

function showHowToGetWebGpu(): void {
  const list = document.createElement('ul');
  list.id = 'how-to-get-webgpu';
  for (const line of howToGetWebGpu) {
    const item = document.createElement('li');
    item.textContent = line;
    list.append(item);
  }
  status.after(list);
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
    finish('unsupported', 'This browser has no WebGPU (navigator.gpu is missing). How to get it:');
    showHowToGetWebGpu();
    return;
  }
  const adapter = await navigator.gpu.requestAdapter();
  if (adapter === null) {
    finish(
      'unsupported',
      'This browser has WebGPU, but no adapter (navigator.gpu.requestAdapter() gave null): it is turned off or blocked for this GPU. How to get it:',
    );
    showHowToGetWebGpu();
    return;
  }
  // Handed to Pol before the kernels compile, so that checked mode knows their layouts.
  const device = instrument(await adapter.requestDevice({ label: 'pol example' }));
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
        paramsBytes: run.paramsBytes,
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
