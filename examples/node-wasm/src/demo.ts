import { GCProfiler, getHeapSpaceStatistics } from 'node:v8';
import { mark, retract, watermark } from '@pol/arena';
import type { HostArray } from '@pol/core';
import { countAllocations, type KissFft, loadKissFft } from './kissfft.js';
import { configBytes, openWorkspace, powerSpectrum, type Workspace } from './power-spectrum.js';
import { largest, peakRelativeError, referencePower, testSignal } from './reference.js';

/** The sizes the demo transforms. */
export const SIZES = [256, 4096, 65_536] as const;

/**
 * The tolerance of a power spectrum computed in float32, as a fraction of its largest bin, for a
 * signal whose exact power spectrum (bins 0 to n/2) is `reference`.
 *
 * An FFT of n points rounds in each of its log2(n) stages, so the error of each bin is bounded by
 * about u log2(n) times the norm of the whole spectrum, ||X|| (u = 2^-24, float32's unit
 * roundoff). A bin's power |X_k|^2 then moves by at most about twice |X_k| times that. Over the
 * largest bin's power, max |X_k|^2: 2 u log2(n) ||X|| / max |X_k|. For the test signal (two tones)
 * the ratio of norms is about 1.6, so about 3 u log2(n): 1.5e-6 at 256 points, 3e-6 at 65,536, and
 * the errors measured are 20 to 50 times smaller. White noise has no dominant bin, so its ratio,
 * and its tolerance, are larger.
 */
export function tolerance(reference: ArrayLike<number>): number {
  const bins = reference.length;
  const n = 2 * (bins - 1);
  // ||X||^2 over all n bins, from the n/2 + 1 of a real signal: the others mirror bins 1 .. n/2 - 1.
  let energy = 0;
  let peak = 0;
  for (let k = 0; k < bins; k++) {
    const p = reference[k] ?? 0;
    energy += k === 0 || k === bins - 1 ? p : 2 * p;
    peak = Math.max(peak, p);
  }
  return 2 * 2 ** -24 * Math.log2(n) * Math.sqrt(energy / peak);
}

/** One size's check against the plain-JavaScript reference. */
export interface Check {
  readonly n: number;
  readonly configBytes: number;
  /** The two largest bins (the test signal's tones are at n/16 and n/4 + 3). */
  readonly peaks: readonly number[];
  readonly error: number;
  readonly tolerance: number;
}

/** Transform the test signal at each size once and compare with the reference. */
export function checkAgainstReference(ws: Workspace): Check[] {
  const checks: Check[] = [];
  for (const [n, { fft, x }] of ws.plans) {
    x.data.set(testSignal(n));
    const start = mark(ws.arena);
    const { power } = powerSpectrum(ws.arena, fft, x);
    // The reference reads the same float32 samples, so what differs is the FFT's arithmetic alone.
    const reference = referencePower(x.data);
    checks.push({
      n,
      configBytes: configBytes(ws.kiss, n),
      peaks: largest(power.data, 2),
      error: peakRelativeError(power.data, reference),
      tolerance: tolerance(reference),
    });
    retract(ws.arena, start);
  }
  return checks;
}

/** What a steady loop did. */
export interface SteadyRun {
  readonly calls: number;
  /** Calls of the module's malloc and free from JavaScript during the loop. */
  readonly mallocs: number;
  readonly frees: number;
  /** Bytes of the module's memory outside the region that differ after the loop. */
  readonly outsideWrites: number;
  /** Calls whose `power` was not the array the first call at that size got. */
  readonly newArrays: number;
  readonly watermarkBefore: number;
  readonly watermarkAfter: number;
  readonly arraysCreatedBefore: number;
  readonly arraysCreatedAfter: number;
  /** JavaScript bytes allocated per call (objects and ArrayBuffers), or undefined without `--expose-gc`. */
  readonly bytesPerCall: number | undefined;
}

const gc = (globalThis as { gc?: () => void }).gc;

/** Calls per batch at each size: about 40 ms of transforms (4 Mi samples), at least 64. */
export function defaultCalls(n: number): number {
  return Math.max(64, Math.round(2 ** 22 / n));
}

// The heap spaces JavaScript objects live in. V8 keeps compiled code and its metadata in spaces of
// their own, which grow when a compilation that ran on another thread is installed: on a loaded
// machine that can land inside a measured batch, by chance, and it is no object the call made.
const OBJECT_SPACES = new Set(['new_space', 'old_space', 'new_large_object_space', 'large_object_space']);

/** The bytes of JavaScript objects and ArrayBuffers alive now. */
function footprint(): number {
  let bytes = process.memoryUsage().arrayBuffers;
  for (const space of getHeapSpaceStatistics()) if (OBJECT_SPACES.has(space.space_name)) bytes += space.space_used_size;
  return bytes;
}

/** A full collection, then a wait until the ArrayBuffer sweeper (another thread) has settled. */
async function quiesce(): Promise<void> {
  gc?.();
  let last = process.memoryUsage().arrayBuffers;
  for (let i = 0; i < 40; i++) {
    await new Promise((resolve) => setTimeout(resolve, 5));
    const now = process.memoryUsage().arrayBuffers;
    if (now === last) return;
    last = now;
  }
}

/**
 * The growth of JavaScript objects and ArrayBuffers over `f()`, which must not let a collection
 * run (or the figure would count survivors, not allocations): NaN when one ran. The reading starts
 * after `quiesce` and one `f()` unmeasured: a full collection can discard compiled code, and V8
 * compiles it again some calls later, which must not fall inside the reading of a longer batch only.
 */
async function growth(f: () => void): Promise<number> {
  await quiesce();
  f();
  const profiler = new GCProfiler();
  profiler.start();
  const before = footprint();
  f();
  const after = footprint();
  const collections = profiler.stop().statistics.length;
  return collections > 0 ? Number.NaN : after - before;
}

/**
 * Batches of transforms at each size (`callsAt(n)` calls a batch), size after size, each as a steady program writes it: the verb
 * on the arena (`power` from the arena, `spectrum` from a frame), the result read, and a retract to
 * the mark taken before the loop. Everything is counted around the loop: `malloc`/`free` calls,
 * bytes written outside the region, array identities, the watermark, and JavaScript bytes
 * allocated per call at each size.
 *
 * (Size after size, because a verb hands back its previous result object on the same space only
 * when it would hold the same arrays: calls that alternate sizes on one arena get a fresh result
 * object each, about 100 bytes. A program that alternates sizes and wants no garbage gives each
 * size an arena of its own, over a region of its own.)
 */
export async function steadyLoop(ws: Workspace, callsAt: (n: number) => number = defaultCalls): Promise<SteadyRun> {
  const start = mark(ws.arena);
  // The first call at each size makes the arrays and the verb's result object; later ones reuse them.
  const firsts = new Map<number, HostArray<'float32'>>();
  for (const [n, { fft, x }] of ws.plans) {
    firsts.set(n, powerSpectrum(ws.arena, fft, x).power);
    retract(ws.arena, start);
  }
  const watermarkBefore = watermark(ws.arena);
  const arraysCreatedBefore = ws.arena.describe().arraysCreated;
  const memoryBefore = new Uint8Array(ws.kiss.memory.buffer).slice();
  const counter = countAllocations(ws.kiss);
  let newArrays = 0;
  let made = 0;
  // What the loop reads of each result: its length, a small integer. (A float read or summed here
  // would be boxed as a heap number while V8 has not optimized the loop yet, 16 bytes each, and be
  // counted against the call.)
  let read = 0;
  let bytesPerCall: number | undefined = gc === undefined ? undefined : 0;
  try {
    // One loop function per size, its batch length an argument (a closure made per batch would be
    // compiled again for each batch, and its code and feedback counted against the calls).
    const loops: { readonly calls: number; readonly loop: (count: number) => void }[] = [];
    for (const [n, { fft, x }] of ws.plans) {
      const first = firsts.get(n);
      const loop = (count: number): void => {
        for (let c = 0; c < count; c++) {
          const { power } = powerSpectrum(ws.arena, fft, x);
          read += power.data.length;
          if (power !== first) newArrays++;
          retract(ws.arena, start);
        }
        made += count;
      };
      loops.push({ calls: callsAt(n), loop });
    }
    // Warm-up, not measured: every size's batch, a full collection, and every batch again. V8
    // compiles the loops while they run, and a full collection can discard compiled code that
    // depended on objects that died (the first pass's), which then runs unoptimized for a while,
    // boxing the kernel's floats (about 70 B a call on Node.js 24 and 26, measured). The second
    // pass runs what the measured batches will run.
    for (const { calls, loop } of loops) loop(calls);
    await quiesce();
    for (const { calls, loop } of loops) loop(calls);
    if (gc !== undefined) {
      for (const { calls, loop } of loops) {
        // A batch of 2N calls less a batch of N, over N: what a batch costs whatever its length (the
        // measurement's own objects) cancels. The smallest of three tries in which no collection ran.
        let least = Number.POSITIVE_INFINITY;
        for (let tries = 0, clean = 0; clean < 3 && tries < 6; tries++) {
          const once = await growth(() => loop(calls));
          const twice = await growth(() => loop(2 * calls));
          if (Number.isNaN(once) || Number.isNaN(twice)) continue;
          clean++;
          least = Math.min(least, Math.max(0, twice - once) / calls);
        }
        bytesPerCall = Math.max(bytesPerCall ?? 0, least);
      }
    }
  } finally {
    counter.restore();
  }
  const memoryAfter = new Uint8Array(ws.kiss.memory.buffer);
  let outsideWrites = Math.abs(memoryAfter.length - memoryBefore.length);
  const end = ws.region + ws.bytes;
  for (let i = 0; i < memoryBefore.length; i++) {
    if ((i < ws.region || i >= end) && memoryBefore[i] !== memoryAfter[i]) outsideWrites++;
  }
  if (read < made) throw new Error('the loop read empty results');
  return {
    calls: made,
    mallocs: counter.mallocs(),
    frees: counter.frees(),
    outsideWrites,
    newArrays,
    watermarkBefore,
    watermarkAfter: watermark(ws.arena),
    arraysCreatedBefore,
    arraysCreatedAfter: ws.arena.describe().arraysCreated,
    bytesPerCall,
  };
}

const int = (n: number): string => n.toLocaleString('en-US');

/** Everything the demo prints, line by line. */
export async function demo(kiss?: KissFft): Promise<string[]> {
  const k = kiss ?? (await loadKissFft());
  const lines: string[] = [];
  const memory = k.memory.buffer.byteLength;
  const counter = countAllocations(k);
  const ws = openWorkspace(k, SIZES);
  counter.restore();
  try {
    lines.push(`kissfft-wasm (KissFFT compiled with emscripten): a module with ${int(memory / 2 ** 20)} MiB of memory`);
    lines.push(
      `region: ${int(ws.bytes)} bytes at byte ${int(ws.region)} of the module's memory, from ${counter.mallocs()} _malloc at start-up ` +
        '(regionBytes: the three plans and inputs, and the largest call)',
    );
    lines.push(`arena: ${String(ws.arena)}`);
    lines.push('');
    lines.push('      n  KissFFT state  largest bins  error vs JavaScript  tolerance  result');
    for (const c of checkAgainstReference(ws)) {
      lines.push(
        `${int(c.n).padStart(7)}  ${`${int(c.configBytes)} B`.padStart(13)}  ${c.peaks.join(', ').padStart(12)}  ` +
          `${c.error.toExponential(1).padStart(19)}  ${c.tolerance.toExponential(1).padStart(9)}  ${c.error <= c.tolerance ? 'match' : 'MISMATCH'}`,
      );
    }
    lines.push(
      '(error: the largest difference from a plain-JavaScript power spectrum in double precision, over its largest bin;',
      ' the DFT by its definition up to 4,096 points, a radix-2 FFT checked against it above)',
    );
    lines.push('');
    const run = await steadyLoop(ws);
    lines.push(`steady loop: ${int(run.calls)} calls of powerSpectrum(arena, fft, x) + retract, size after size`);
    lines.push(
      `  _malloc calls: ${run.mallocs}, _free calls: ${run.frees}; bytes written outside the region: ${int(run.outsideWrites)}`,
    );
    lines.push(
      `  new arrays: ${run.newArrays + run.arraysCreatedAfter - run.arraysCreatedBefore} (the same power array every call); ` +
        `watermark: ${int(run.watermarkAfter)} bytes, ${run.watermarkAfter === run.watermarkBefore ? 'unchanged' : `was ${int(run.watermarkBefore)}`}` +
        `${run.watermarkAfter === ws.bytes ? ', exactly the region' : ''}`,
    );
    lines.push(
      run.bytesPerCall === undefined
        ? '  JavaScript bytes allocated per call: not measured (run node with --expose-gc)'
        : `  JavaScript bytes allocated per call: ${run.bytesPerCall < 0.005 ? '0' : run.bytesPerCall.toFixed(2)} at the worst size ` +
            '(objects and ArrayBuffers, between two full collections, none during the loop)',
    );
  } finally {
    ws.close();
  }
  return lines;
}
