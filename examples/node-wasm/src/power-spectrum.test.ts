import { Arena, ForeignMemoryError, MissingRegionError, mark, pointer, retract, watermark } from '@pol/arena';
import { hostArray, InvalidArgumentError } from '@pol/core';
import { seededRandom } from '@pol/verbs/examples';
import { beforeAll, describe, expect, test } from 'vitest';
import { checkAgainstReference, SIZES, steadyLoop, tolerance } from './demo.js';
import { countAllocations, type KissFft, loadKissFft } from './kissfft.js';
import { bins, configBytes, openWorkspace, powerSpectrum, RealFft, regionBytes, type Workspace } from './power-spectrum.js';
import { largest, peakRelativeError, referencePower, testSignal, toneBins } from './reference.js';

const MiB = 2 ** 20;

let kiss: KissFft;

beforeAll(async () => {
  kiss = await loadKissFft();
});

/** A fresh module (its own memory), for the tests that grow it. */
async function freshWorkspace(sizes: readonly number[]): Promise<Workspace> {
  return openWorkspace(await loadKissFft(), sizes);
}

describe('the module', () => {
  test("is kissfft-wasm's emscripten module, with its memory, and leaves no process-wide handler behind", async () => {
    const before = [process.listeners('uncaughtException').length, process.listeners('unhandledRejection').length];
    const k = await loadKissFft();
    expect([process.listeners('uncaughtException').length, process.listeners('unhandledRejection').length]).toEqual(before);
    expect(k.memory.buffer).toBe(k.module.HEAPU8.buffer);
    expect(k.memory.buffer.byteLength).toBe(16 * MiB);
  });

  test('says how many bytes its state needs for a size, allocating nothing', () => {
    const counter = countAllocations(kiss);
    try {
      expect(configBytes(kiss, 256)).toBe(2836);
      expect(configBytes(kiss, 65_536)).toBe(655_636);
    } finally {
      counter.restore();
    }
    expect(counter.mallocs()).toBe(0);
    expect(() => configBytes(kiss, 255)).toThrow(InvalidArgumentError);
  });

  test('an arena over the whole memory is refused: it holds the module heap, so the region must be named', () => {
    // @ts-expect-error: the types ask for the region too, over a WebAssembly memory.
    expect(() => new Arena(kiss.memory)).toThrow(MissingRegionError);
  });
});

describe('the workspace', () => {
  test('is one _malloc at start-up, an arena over exactly those bytes, and a plan and input per size', () => {
    const counter = countAllocations(kiss);
    const ws = openWorkspace(kiss, SIZES);
    counter.restore();
    try {
      expect(counter.mallocs()).toBe(1);
      expect(ws.bytes).toBe(regionBytes(kiss, SIZES));
      expect(ws.arena.byteOffset).toBe(ws.region);
      expect(ws.arena.capacity).toBe(ws.bytes);
      expect([...ws.plans.keys()]).toEqual([...SIZES]);
      for (const [n, { fft, x }] of ws.plans) {
        expect(fft.n).toBe(n);
        expect(x.dims).toEqual([n]);
        const at = pointer(x, kiss.memory);
        expect(at).toBeGreaterThanOrEqual(ws.region);
        expect(at + 4 * n).toBeLessThanOrEqual(ws.region + ws.bytes);
      }
    } finally {
      ws.close();
    }
    expect(counter.frees()).toBe(0);
  });

  test('close() disposes of the arena and gives the region back; a new workspace may take it', () => {
    const first = openWorkspace(kiss, [256]);
    const { region } = first;
    first.close();
    expect(first.arena.disposed).toBe(true);
    first.close(); // twice is fine
    using second = openWorkspace(kiss, [256]);
    expect(second.region).toBe(region);
  });
});

describe('results against the plain-JavaScript reference', () => {
  // The tolerance, 2 u log2(n) ||X|| / max |X_k| of the largest bin with u = 2^-24, is argued in
  // demo.ts (tolerance): an FFT's rounding error grows with its log2(n) stages and the spectrum's norm.
  test.each(SIZES)('the test signal, n = %i: within tolerance, peaks at its tones', (n) => {
    using ws = openWorkspace(kiss, [n]);
    const [check] = checkAgainstReference(ws);
    expect(check?.error).toBeLessThanOrEqual(check?.tolerance ?? 0);
    expect(check?.peaks).toEqual([...toneBins(n)]);
  });

  test.each(SIZES)('white noise, n = %i: within tolerance', (n) => {
    using ws = openWorkspace(kiss, [n]);
    const { fft, x } = ws.plans.get(n) ?? expect.unreachable();
    const random = seededRandom(n + 7);
    for (let i = 0; i < n; i++) x.data[i] = 2 * random() - 1;
    const { power } = powerSpectrum(ws.arena, fft, x);
    expect(power.dims).toEqual([bins(n)]);
    const reference = referencePower(x.data);
    expect(peakRelativeError(power.data, reference)).toBeLessThanOrEqual(tolerance(reference));
  });

  test('the tolerance is over ten times what the transforms are off by, and far under a wrong bin', () => {
    using ws = openWorkspace(kiss, SIZES);
    for (const c of checkAgainstReference(ws)) {
      expect(c.error).toBeGreaterThan(0);
      expect(c.error).toBeLessThan(c.tolerance / 10);
    }
    // One wrong bin in a thousand of the peak is far outside it.
    const reference = referencePower(testSignal(256));
    const wrong = Float64Array.from(reference);
    wrong[3] = (wrong[3] ?? 0) + 1e-3 * Math.max(...reference);
    expect(peakRelativeError(wrong, reference)).toBeGreaterThan(100 * tolerance(reference));
  });
});

describe('the steady loop', () => {
  test('allocates nothing: no _malloc or _free, no byte written outside the region, the same arrays, the watermark still', async () => {
    using ws = openWorkspace(kiss, SIZES);
    for (const [n, { x }] of ws.plans) x.data.set(testSignal(n));
    const run = await steadyLoop(ws, (n) => Math.max(32, 2 ** 18 / n));
    expect(run.calls).toBeGreaterThan(0);
    expect(run.mallocs).toBe(0);
    expect(run.frees).toBe(0);
    expect(run.outsideWrites).toBe(0);
    expect(run.newArrays).toBe(0);
    expect(run.arraysCreatedAfter).toBe(run.arraysCreatedBefore);
    expect(run.watermarkAfter).toBe(run.watermarkBefore);
    // Every size has run once: the region is exactly the watermark.
    expect(run.watermarkAfter).toBe(ws.bytes);
    expect(ws.arena.describe().openFrames).toBe(0);
  });

  test('allocates no JavaScript object (bytes per call, between two full collections)', async () => {
    expect((globalThis as { gc?: unknown }).gc, 'vitest.config.ts runs the tests with --expose-gc').toBeTypeOf('function');
    using ws = openWorkspace(kiss, [256, 4096]);
    const run = await steadyLoop(ws, (n) => Math.max(64, 2 ** 20 / n));
    // The smallest JavaScript object is 16 bytes: less than one byte a call is none at all.
    expect(run.bytesPerCall).toBeLessThan(1);
  });

  test('the verb takes its output from the arena, its scratch from a frame above it, and gives both back', () => {
    using ws = openWorkspace(kiss, [256]);
    const { fft, x } = ws.plans.get(256) ?? expect.unreachable();
    const start = mark(ws.arena);
    const offset = ws.arena.describe().offset;
    const { power } = powerSpectrum(ws.arena, fft, x);
    // power stays (it is the caller's), the spectrum was released when the verb returned.
    expect(ws.arena.describe().offset).toBe(offset + 4 * bins(256));
    expect(watermark(ws.arena)).toBe(ws.bytes);
    expect(pointer(power, kiss.memory)).toBe(ws.region + offset);
    retract(ws.arena, start);
    expect(ws.arena.describe().offset).toBe(offset);
  });
});

describe('the module grows its memory', () => {
  test('between calls: views taken before are detached, the arrays re-derive, the results are the same', async () => {
    using ws = await freshWorkspace([4096]);
    const { memory, module } = ws.kiss;
    const { fft, x } = ws.plans.get(4096) ?? expect.unreachable();
    x.data.set(testSignal(4096));
    const start = mark(ws.arena);
    const before = Float32Array.from(powerSpectrum(ws.arena, fft, x).power.data);
    retract(ws.arena, start);
    const stale = x.data;
    const size = memory.buffer.byteLength;
    expect(module._malloc(64 * MiB)).not.toBe(0);
    expect(memory.buffer.byteLength).toBeGreaterThan(size);
    expect(stale.byteLength).toBe(0); // detached by the grow
    expect(x.data.buffer).toBe(memory.buffer); // re-derived
    expect(x.data.length).toBe(4096);
    const { power } = powerSpectrum(ws.arena, fft, x);
    expect(power.data.buffer).toBe(memory.buffer);
    expect(Array.from(power.data)).toEqual(Array.from(before));
  });

  test('inside a kernel call: the kernel reads .data after the WASM call, so it reads the grown memory', async () => {
    using ws = await freshWorkspace([256, 65_536]);
    const { memory, module } = ws.kiss;
    for (const [n, { x }] of ws.plans) x.data.set(testSignal(n));
    // Stand-in for a library call that grows the memory (a malloc of its own): kiss_fftr, then a
    // malloc of the memory's whole size, which it must grow for.
    const fftr = module._kiss_fftr;
    let grown = 0;
    module._kiss_fftr = (cfg, timedata, freqdata) => {
      fftr(cfg, timedata, freqdata);
      const size = memory.buffer.byteLength;
      module._malloc(size); // more than is free, whatever the heap holds
      if (memory.buffer.byteLength > size) grown++;
    };
    try {
      for (const [n, { fft, x }] of ws.plans) {
        const start = mark(ws.arena);
        const { power } = powerSpectrum(ws.arena, fft, x);
        const reference = referencePower(x.data);
        expect(peakRelativeError(power.data, reference), `n = ${n}`).toBeLessThanOrEqual(tolerance(reference));
        expect(largest(power.data, 2)).toEqual([...toneBins(n)]);
        retract(ws.arena, start);
      }
    } finally {
      module._kiss_fftr = fftr;
    }
    expect(grown).toBe(2);
  });
});

describe('refusals', () => {
  test('an input outside the module memory: ForeignMemoryError, and the arena is as it was', () => {
    using ws = openWorkspace(kiss, [256]);
    const { fft } = ws.plans.get(256) ?? expect.unreachable();
    const before = ws.arena.describe();
    const outside = hostArray(testSignal(256)); // a garbage-collected Float32Array
    expect(() => powerSpectrum(ws.arena, fft, outside)).toThrow(ForeignMemoryError);
    expect(() => pointer(outside, kiss.memory)).toThrow(ForeignMemoryError);
    const after = ws.arena.describe();
    expect([after.offset, after.watermark, after.openFrames]).toEqual([before.offset, before.watermark, before.openFrames]);
  });

  test("an input in another module's memory: ForeignMemoryError", async () => {
    using mine = openWorkspace(kiss, [256]);
    using theirs = await freshWorkspace([256]);
    const { fft } = mine.plans.get(256) ?? expect.unreachable();
    const { x } = theirs.plans.get(256) ?? expect.unreachable();
    expect(() => powerSpectrum(mine.arena, fft, x)).toThrow(ForeignMemoryError);
  });

  test('an input of the wrong length: InvalidArgumentError, and the arena is as it was', () => {
    using ws = openWorkspace(kiss, [256, 4096]);
    const small = ws.plans.get(256)?.fft ?? expect.unreachable();
    const { x } = ws.plans.get(4096) ?? expect.unreachable();
    const offset = ws.arena.describe().offset;
    expect(() => powerSpectrum(ws.arena, small, x)).toThrow(InvalidArgumentError);
    expect(ws.arena.describe().offset).toBe(offset);
  });

  test('an odd size: InvalidArgumentError (a real FFT needs an even one)', () => {
    using ws = openWorkspace(kiss, [256]);
    expect(() => new RealFft(kiss, ws.arena, 257)).toThrow(InvalidArgumentError);
  });
});
