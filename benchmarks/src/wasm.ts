/**
 * WebAssembly: the node-wasm example's loop (KissFFT's real FFT from kissfft-wasm, then the power
 * spectrum, as a Pol verb over a region of the module's memory) against the ways of calling the
 * same library without Pol: as its README says (`rfft(input)`: a plan, the buffers, the copies and
 * the frees on every call), copying in and out of buffers allocated once, the same calls on
 * pointers prepared by hand (the floor), the floor's calls on arrays (pointers and views read from
 * them each call), and the example's lifetimes by hand without the verb (an arena and a frame
 * around the same kernel body: what the verb's shell is measured against).
 */
import { createRequire } from 'node:module';
import { carve, mark, pointer, retract } from '@pol/arena';
import { alloc, type HostArray, scratchspace } from '@pol/core';
import { type KissFft, loadKissFft } from 'pol-example-node-wasm/kissfft';
import { bins, openWorkspace, powerSpectrum, type RealFft, type Workspace } from 'pol-example-node-wasm/power-spectrum';
import { type Comparison, compare, type Measurement, type RunOptions, type SuiteResult } from './model.js';
import { measureOps } from './op.js';

export const wasmSizes = [256, 4096, 65_536] as const;

/** `WebAssembly: kissfft-wasm real FFT + power spectrum, n = 4,096 float32` */
export function wasmSection(n: number): string {
  return `WebAssembly: kissfft-wasm real FFT + power spectrum, n = ${n.toLocaleString('en-US')} float32`;
}

/** The share of the copy-per-call path's time that its copies take, above which Pol must be ahead of it. */
export const COPIES_SHARE = 0.1;

/** kissfft-wasm's own API, as its README says to call it. */
interface KissFftApi {
  rfft(input: Float32Array): Float32Array;
}

let api: Promise<KissFftApi> | undefined;

/**
 * The package's entry point, loaded once. It instantiates its module as it loads, and its
 * emscripten glue fetches the `.wasm` by path when a global `fetch` exists, which Node.js 18 and
 * later refuse; with `fetch` hidden while it loads, the glue reads the file instead. (A user on
 * Node.js 18+ must do the same, or load the glue as the example does.) The process-wide handlers
 * the glue installs are removed, as the example does.
 */
function readmeApi(): Promise<KissFftApi> {
  api ??= (async () => {
    const require = createRequire(import.meta.url);
    const global = globalThis as { fetch?: unknown };
    const fetch = global.fetch;
    const exceptions = new Set(process.listeners('uncaughtException'));
    const rejections = new Set(process.listeners('unhandledRejection'));
    let loaded: KissFftApi;
    global.fetch = undefined;
    try {
      loaded = require('kissfft-wasm') as KissFftApi;
    } finally {
      global.fetch = fetch;
    }
    await (require('kissfft-wasm/lib/wasm') as { waitLoading(): Promise<void> }).waitLoading();
    for (const l of process.listeners('uncaughtException')) if (!exceptions.has(l)) process.off('uncaughtException', l);
    for (const l of process.listeners('unhandledRejection')) if (!rejections.has(l)) process.off('unhandledRejection', l);
    return loaded;
  })();
  return api;
}

/** The test signal: two tones and a little noise (any signal does: the FFT's work does not depend on it). */
function samples(n: number): Float32Array {
  const x = new Float32Array(n);
  for (let i = 0; i < n; i++)
    x[i] = Math.sin((2 * Math.PI * 5 * i) / n) + 0.25 * Math.cos((2 * Math.PI * 17 * i) / n) + 0.01 * (i % 7);
  return x;
}

// The power loop, once per way: the kernel's loop, written out again in each, so that no way's loop
// shares V8's type feedback (and its compiled code) with another's.
function readmePowerInto(power: Float32Array, spectrum: Float32Array): Float32Array {
  for (let k = 0; k < power.length; k++) {
    const re = spectrum[2 * k] ?? 0;
    const im = spectrum[2 * k + 1] ?? 0;
    power[k] = re * re + im * im;
  }
  return power;
}

function copyPowerInto(power: Float32Array, spectrum: Float32Array): Float32Array {
  for (let k = 0; k < power.length; k++) {
    const re = spectrum[2 * k] ?? 0;
    const im = spectrum[2 * k + 1] ?? 0;
    power[k] = re * re + im * im;
  }
  return power;
}

function arraysPowerInto(power: Float32Array, spectrum: Float32Array): Float32Array {
  for (let k = 0; k < power.length; k++) {
    const re = spectrum[2 * k] ?? 0;
    const im = spectrum[2 * k + 1] ?? 0;
    power[k] = re * re + im * im;
  }
  return power;
}

function framedPowerInto(power: Float32Array, spectrum: Float32Array): Float32Array {
  for (let k = 0; k < power.length; k++) {
    const re = spectrum[2 * k] ?? 0;
    const im = spectrum[2 * k + 1] ?? 0;
    power[k] = re * re + im * im;
  }
  return power;
}

function floorPowerInto(power: Float32Array, spectrum: Float32Array): Float32Array {
  for (let k = 0; k < power.length; k++) {
    const re = spectrum[2 * k] ?? 0;
    const im = spectrum[2 * k + 1] ?? 0;
    power[k] = re * re + im * im;
  }
  return power;
}

/**
 * The example's workspace for `n` points, its input holding `signal`: the plan and the input carved
 * once from an arena over one malloc'd region, the samples written in once (the program produces
 * them there). Each way that runs on Pol's arrays has one of its own.
 */
function workspaceWith(kiss: KissFft, n: number, signal: Float32Array): { ws: Workspace; fft: RealFft; x: HostArray<'float32'> } {
  const ws = openWorkspace(kiss, [n]);
  const plan = ws.plans.get(n);
  if (plan === undefined) throw new Error(`no plan for ${n}`);
  plan.x.data.set(signal);
  return { ws, fft: plan.fft, x: plan.x };
}

/** Each way, one transform of `n` samples into their power spectrum per call. */
export interface WasmOps {
  readonly pol: () => unknown;
  readonly readme: () => unknown;
  readonly copy: () => unknown;
  readonly floor: () => unknown;
  /** The floor's calls on arrays carved once: each call reads their pointers and views, as any kernel given arrays does. */
  readonly arrays: () => unknown;
  /** Pol's arena and frame by hand, without the verb: what the example's lifetimes cost on their own. */
  readonly framed: () => unknown;
  /** Every way's power spectrum of the same samples, after one call each (for the test). */
  readonly results: () => { readonly [way: string]: Float32Array };
  /** Give the buffers back. */
  readonly close: () => void;
}

/** The six ways, at one size, on `kiss` (Pol's, the copies' and the floor's) and the package's own module (its README's). */
export async function wasmOps(kiss: KissFft, n: number): Promise<WasmOps> {
  const { rfft } = await readmeApi();
  const signal = samples(n);
  const m = kiss.module;

  // Pol: the example's verb on its workspace.
  const { ws, fft, x } = workspaceWith(kiss, n, signal);
  const start = mark(ws.arena);
  const pol = () => {
    const { power } = powerSpectrum(ws.arena, fft, x);
    retract(ws.arena, start);
    return power;
  };

  // The README's way: rfft(input) makes a plan, buffers for the input and the output, copies in,
  // transforms, copies the output out into a new Float32Array (of 2n floats) and frees it all.
  const readmePower = new Float32Array(bins(n));
  const readme = () => readmePowerInto(readmePower, rfft(signal));

  // Every other row runs on the bytes Pol's steady call uses: KissFFT's state and the input carved
  // once, and where the call's power (from the arena) and spectrum (from its frame, above the power)
  // land. Rows on buffers of their own measured a few percent apart at n = 256 for where the
  // buffers fell alone (the same calls, in the same run, at other offsets), which is as much as the
  // distance the rows are there to take apart. They run one after another, so sharing is safe.
  const memory = kiss.memory;
  const config = pointer(fft.config, memory);
  const input = pointer(x, memory);
  const power = alloc(ws.arena, 'float32', bins(n));
  const frame = scratchspace(ws.arena);
  const spectrum = pointer(alloc(frame, 'float32', 2 * bins(n)), memory);
  frame.close();
  const powerAt = pointer(power, memory);
  retract(ws.arena, start);
  const landed = pointer(pol() as HostArray<'float32'>, memory);
  if (landed !== powerAt)
    throw new Error(`Pol's power landed at ${landed}, not at ${powerAt}: the rows would not share their bytes`);

  // Copies per call: HEAPF32.set in, kiss_fftr, slice out, the power (the same samples over x).
  const copyPower = new Float32Array(bins(n));
  const copy = () => {
    m.HEAPF32.set(signal, input >> 2);
    m._kiss_fftr(config, input, spectrum);
    return copyPowerInto(copyPower, m.HEAPF32.slice(spectrum >> 2, (spectrum >> 2) + 2 * bins(n)));
  };

  // The floor: the same kiss_fftr and power on pointers and views prepared by hand, the samples in place.
  const floorSpectrum = new Float32Array(memory.buffer, spectrum, 2 * bins(n));
  const floorPower = new Float32Array(memory.buffer, powerAt, bins(n));
  const floor = () => {
    m._kiss_fftr(config, input, spectrum);
    return floorPowerInto(floorPower, floorSpectrum);
  };

  // The floor's calls on arrays made once over those bytes (`carve`), each call reading their
  // pointers (`pointer`) and views (`.data`) as a kernel handed arrays must: no checks, no carve
  // from an arena, no frame. Against the floor, what taking buffers as arrays costs by itself.
  const arraysSpectrum = carve(memory, spectrum, 'float32', [2 * bins(n)]);
  const arraysPower = carve(memory, powerAt, 'float32', [bins(n)]);
  const arrays = () => {
    m._kiss_fftr(config, pointer(x, memory), pointer(arraysSpectrum, memory));
    arraysPowerInto(arraysPower.data, arraysSpectrum.data);
    return arraysPower;
  };

  // Pol's lifetimes by hand, without the verb, on Pol's own arena and mark: the power from the
  // arena, the spectrum from a frame opened and closed around the call, the kernel's own checks and
  // pointers (RealFft.forward), the views read from the arrays, a retract to the loop's mark. What
  // any kernel written to the example's contract (outputs from the caller's space, scratch from a
  // frame) costs before a verb is put around it; the verb's shell is the difference between this
  // row and Pol's.
  const framed = () => {
    const power = alloc(ws.arena, 'float32', bins(n));
    const frame = scratchspace(ws.arena);
    const spectrum = alloc(frame, 'float32', 2 * bins(n));
    fft.forward(x, spectrum);
    framedPowerInto(power.data, spectrum.data);
    frame.close();
    retract(ws.arena, start);
    return power;
  };

  return {
    pol,
    readme,
    copy,
    floor,
    arrays,
    framed,
    results: () => ({
      pol: Float32Array.from((pol() as { data: Float32Array }).data),
      readme: Float32Array.from(readme()),
      copy: Float32Array.from(copy()),
      floor: Float32Array.from(floor()),
      arrays: Float32Array.from((arrays() as { data: Float32Array }).data),
      framed: Float32Array.from((framed() as { data: Float32Array }).data),
    }),
    close: () => ws.close(),
  };
}

const labels: Readonly<Record<keyof Omit<WasmOps, 'results' | 'close'>, string>> = {
  pol: 'Pol powerSpectrum(arena, fft, x) + retract (the node-wasm example)',
  readme: "kissfft-wasm's README: rfft(input), then the power",
  copy: 'HEAPF32.set in, _kiss_fftr, HEAPF32.slice out, then the power',
  floor: '_kiss_fftr and the power on pointers prepared by hand (floor)',
  arrays: 'the floor on arrays carved once: pointers and views read from them each call, no checks',
  framed: "Pol's arena and a frame by hand, no verb: alloc, scratchspace, forward, the power, close, retract",
};

/** The WebAssembly suite: a section per size. */
export async function wasmSuite(run: RunOptions): Promise<SuiteResult> {
  const measurements: Measurement[] = [];
  const comparisons: Comparison[] = [];
  const kiss = await loadKissFft();
  // One set of operations made and dropped first, as the host suite does: V8 compiles a function
  // made only once so far for its own closure, which would favour the first size.
  (await wasmOps(kiss, wasmSizes[0])).close();
  for (const n of wasmSizes) {
    const section = wasmSection(n);
    run.log(section);
    const ops = await wasmOps(kiss, n);
    // A bytes batch of the ways that allocate nothing: about 4 Mi samples, at least 512 calls, so that
    // a few bytes a batch costs once (its first call after the collection that starts it) read as
    // under a byte a call. The ways that
    // allocate start at 8 calls, and are sized from there to a 1 MiB batch.
    const batch = Math.max(512, Math.round(2 ** 22 / n));
    const names = ['pol', 'readme', 'copy', 'floor', 'arrays', 'framed'] as const;
    const specs = names.map((name) => ({
      id: `wasm.${name}.${n}`,
      section,
      label: labels[name],
      pol: name === 'pol',
      unit: 'call' as const,
      op: ops[name],
      bytesOps: name === 'readme' || name === 'copy' ? 8 : batch,
      maxBytesOps: batch,
    }));
    // Rotated rounds: the ways that allocate (a new array or more a call) leave the collector work
    // that would otherwise always slow the way measured after them. Twelve: at n = 256 the rows
    // differ by a few percent, and six let one disturbed run put the floor on arrays, which does
    // all the floor's work and more, a fifth below the floor.
    const results = await measureOps(specs, run, 12, true);
    ops.close();
    measurements.push(...results);
    const [pol, readme, copy, floor, arrays, framed] = results as [
      Measurement,
      Measurement,
      Measurement,
      Measurement,
      Measurement,
      Measurement,
    ];
    // What the copies (and the slice's new array) cost, as a share of the copy-per-call path.
    const share = (copy.timeNs - floor.timeNs) / copy.timeNs;
    run.log(`  the copies are ${(100 * share).toFixed(1)}% of the copy-per-call path's time`);
    comparisons.push(
      compare(pol, floor, { kind: 'ratio-at-most', value: 1.05, zeroBytes: true }),
      // The target: ahead of the copies wherever they are more than a tenth of that call.
      compare(pol, copy, share > COPIES_SHARE ? { kind: 'faster-at-least', value: 1 } : undefined),
      compare(pol, readme),
      compare(copy, floor, undefined, 'time-ratio'),
      // What any kernel given arrays pays, and the example's lifetimes without the verb, against
      // the floor: the parts of Pol's distance from it that no verb can take back.
      compare(arrays, floor, undefined, 'time-ratio'),
      compare(framed, floor, undefined, 'time-ratio'),
    );
  }
  return { measurements, comparisons };
}
