/**
 * Loading kissfft-wasm (KissFFT compiled with emscripten, from npm) and the few things this
 * template needs of its module: its memory, `malloc`/`free`, the stack, and the real FFT.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { WasmMemory } from '@pol/arena';

/**
 * The part of kissfft-wasm's emscripten module this template calls. The package declares these
 * (lib/wasm_module.d.ts) but not for the loader used here, so they are written out again.
 * Pointers and sizes are byte offsets into the module's memory.
 */
export interface KissFftModule {
  /** The module's exports; its `WebAssembly.Memory` is one of them (emscripten shortens the names). */
  readonly asm: Readonly<Record<string, unknown>>;
  /** Views over the memory; emscripten replaces them when its own `malloc` grows the memory. */
  readonly HEAPU8: Uint8Array;
  readonly HEAPF32: Float32Array;
  /** `malloc(bytes)`: a pointer, 0 when out of memory. A plain property, so that a test can count calls. */
  _malloc: (bytes: number) => number;
  _free: (ptr: number) => void;
  /**
   * KissFFT's `kiss_fftr_alloc(nfft, inverse_fft, mem, lenmem)`. With `mem = 0` and `lenmem`
   * pointing at a `size_t` (4 bytes in wasm32), it writes there the bytes the state for `nfft`
   * points needs and returns 0; with `mem` pointing at that many bytes it builds the state there
   * (twiddle factors and its work buffer) and returns `mem`, calling no `malloc`.
   */
  _kiss_fftr_alloc: (nfft: number, inverse: number, mem: number, lenmem: number) => number;
  /** `kiss_fftr(cfg, timedata, freqdata)`: nfft real floats in, nfft/2 + 1 complex (re, im) floats out. */
  _kiss_fftr: (cfg: number, timedata: number, freqdata: number) => void;
  stackSave: () => number;
  stackRestore: (sp: number) => void;
  stackAlloc: (bytes: number) => number;
}

/** A loaded module and its memory. */
export interface KissFft {
  readonly module: KissFftModule;
  readonly memory: WasmMemory;
}

// WebAssembly.Memory without the DOM lib (this template's types are Node's, which have no WebAssembly).
const { WebAssembly: wasm } = globalThis as unknown as {
  WebAssembly: { Memory: new (descriptor: { initial: number }) => WasmMemory };
};

const require = createRequire(import.meta.url);

/**
 * Instantiate a fresh copy of kissfft-wasm's module, with a memory of its own (16 MiB at first; it
 * grows when its `malloc` runs out).
 *
 * The package's own entry point (`require('kissfft-wasm')`) instantiates a module as it loads, and
 * its emscripten glue, written before Node.js had `fetch`, then fetches the `.wasm` file by path,
 * which Node.js 18 and later refuse ("Failed to parse URL"). So this calls the glue's factory
 * (`lib/kissfft.js`) with the binary read from the package, as emscripten's `wasmBinary` option
 * allows. The glue also installs process-wide `uncaughtException` and `unhandledRejection`
 * handlers (an unhandled rejection anywhere would abort the module); those are removed again, so
 * the program keeps Node.js's own behaviour.
 */
export async function loadKissFft(): Promise<KissFft> {
  const factory = require('kissfft-wasm/lib/kissfft.js') as (overrides: { wasmBinary: Uint8Array }) => Promise<KissFftModule>;
  const wasmBinary = readFileSync(require.resolve('kissfft-wasm/lib/kissfft.wasm'));
  const exceptions = new Set(process.listeners('uncaughtException'));
  const rejections = new Set(process.listeners('unhandledRejection'));
  const module = await factory({ wasmBinary });
  for (const l of process.listeners('uncaughtException')) if (!exceptions.has(l)) process.off('uncaughtException', l);
  for (const l of process.listeners('unhandledRejection')) if (!rejections.has(l)) process.off('unhandledRejection', l);
  const memory = Object.values(module.asm).find((value): value is WasmMemory => value instanceof wasm.Memory);
  if (memory === undefined) throw new Error('kissfft-wasm: no WebAssembly.Memory among the module exports');
  settle(module);
  return { module, memory };
}

/**
 * Call each function this template uses once, harmlessly. Emscripten's glue starts each
 * `module._name` as a stub that, on its first call, replaces `module._name` with the export
 * itself: a wrapper put there before that first call (a counter, a test's stand-in) would be
 * overwritten by the first call it passes on. After this, every `module._name` is the export.
 */
function settle(module: KissFftModule): void {
  module._free(module._malloc(0));
  const sp = module.stackSave();
  try {
    // KissFFT's state for 2 points, built on the stack, and one transform of 2 samples.
    const cell = module.stackAlloc(4);
    const view = () => new DataView(module.HEAPU8.buffer);
    view().setUint32(cell, 0, true);
    module._kiss_fftr_alloc(2, 0, 0, cell);
    const config = module.stackAlloc(view().getUint32(cell, true));
    const samples = module.stackAlloc(2 * 4);
    const bins = module.stackAlloc(4 * 4);
    module._kiss_fftr(module._kiss_fftr_alloc(2, 0, config, cell), samples, bins);
  } finally {
    module.stackRestore(sp);
  }
}

/**
 * Count the calls to the module's `malloc` and `free` from JavaScript from now on, by wrapping them
 * (`restore()` puts the originals back). KissFFT's own C code calls its `malloc` directly, past
 * this wrapper: the tests check that the loop writes no byte outside its region instead, which any
 * `malloc` would (its bookkeeping lives in the memory).
 */
export function countAllocations(kiss: KissFft): {
  readonly mallocs: () => number;
  readonly frees: () => number;
  restore(): void;
} {
  const m = kiss.module;
  const malloc = m._malloc;
  const free = m._free;
  let mallocs = 0;
  let frees = 0;
  m._malloc = (bytes) => {
    mallocs++;
    return malloc(bytes);
  };
  m._free = (ptr) => {
    frees++;
    free(ptr);
  };
  return {
    mallocs: () => mallocs,
    frees: () => frees,
    restore: () => {
      m._malloc = malloc;
      m._free = free;
    },
  };
}
