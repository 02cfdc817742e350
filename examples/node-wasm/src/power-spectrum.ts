/**
 * A power spectrum on KissFFT's real FFT, as a Pol kernel, with every byte it touches in one region
 * of the module's memory:
 *
 * - the region: one `_malloc` at start-up, of `regionBytes(...)`, with an arena over it;
 * - KissFFT's state for each size (its twiddles and its own work buffer), carved once from the
 *   arena and built in place by `kiss_fftr_alloc`, with no `malloc` of its own;
 * - the input, an arena array that the program writes its samples into (`x.data.set(...)`);
 * - per call, the power spectrum (the output) from the arena, and the complex spectrum the FFT
 *   writes (scratch) from the verb's frame.
 */
import { Arena, pointer, type WasmMemory } from '@pol/arena';
import { alloc, describe, type HostArray, InvalidArgumentError, Undef } from '@pol/core';
import { Allocating } from '@pol/verbs';
import type { KissFft, KissFftModule } from './kissfft.js';

type F32 = HostArray<'float32'>;
type U8 = HostArray<'uint8'>;

/** The frequency bins of a real FFT of `n` points: `n / 2 + 1` (0 to the Nyquist frequency). */
export function bins(n: number): number {
  return (n >> 1) + 1;
}

/** An array's element count, from its dims (never its data: describers must not read data). */
function lengthOf(x: F32): number {
  const dims = x.dims;
  let n = 1;
  for (let i = 0; i < dims.length; i++) n *= dims[i] ?? 0;
  return n;
}

/** Run `f` with a 4-byte `size_t` cell on the module's stack holding `value`; the stack is restored after. */
function withSizeCell<T>(kiss: KissFft, value: number, f: (cell: number) => T): T {
  const m = kiss.module;
  const sp = m.stackSave();
  try {
    const cell = m.stackAlloc(4);
    new Uint32Array(kiss.memory.buffer, cell, 1)[0] = value;
    return f(cell);
  } finally {
    m.stackRestore(sp);
  }
}

/**
 * The bytes KissFFT's state for a real FFT of `n` points takes, as the library answers it
 * (`kiss_fftr_alloc(n, 0, NULL, &lenmem)`): nothing is allocated, the answer's cell is on the stack.
 */
export function configBytes(kiss: KissFft, n: number): number {
  checkSize(n);
  return withSizeCell(kiss, 0, (cell) => {
    kiss.module._kiss_fftr_alloc(n, 0, 0, cell);
    return new Uint32Array(kiss.memory.buffer, cell, 1)[0] ?? 0;
  });
}

function checkSize(n: number): void {
  if (!Number.isSafeInteger(n) || n < 2 || n % 2 !== 0) {
    throw new InvalidArgumentError(`a real FFT needs an even number of points (KissFFT's kiss_fftr), got ${n}.`);
  }
}

/**
 * KissFFT's real forward FFT for one size, its state carved from `arena` (so it lives, and goes,
 * with the arena's allocations made before the loop). The kernel below takes it as an input; the
 * verb keys its plan on this object's identity.
 */
export class RealFft {
  /** The number of real points. */
  readonly n: number;
  /** KissFFT's state, in place: a `uint8` array of `configBytes(kiss, n)` bytes. */
  readonly config: U8;
  readonly #module: KissFftModule;
  readonly #memory: WasmMemory;
  readonly #config: number;

  constructor(kiss: KissFft, arena: Arena<'host'>, n: number) {
    const bytes = configBytes(kiss, n);
    this.n = n;
    this.config = alloc(arena, 'uint8', bytes);
    this.#module = kiss.module;
    this.#memory = kiss.memory;
    // A pointer stays right when the memory grows (an array's offset never moves): take it once.
    this.#config = pointer(this.config, kiss.memory);
    const built = withSizeCell(kiss, bytes, (cell) => kiss.module._kiss_fftr_alloc(n, 0, this.#config, cell));
    if (built !== this.#config) throw new Error(`kiss_fftr_alloc(${n}) did not build its state in the ${bytes} bytes given`);
  }

  /**
   * `kiss_fftr`: the `n` real samples of `x` in, `n / 2 + 1` complex bins (interleaved re, im) out
   * into `spectrum`, both arrays of the module's memory (else `ForeignMemoryError`). Out of place,
   * so KissFFT allocates nothing.
   */
  forward(x: F32, spectrum: F32): void {
    const n = this.n;
    if (x.dtype !== 'float32' || lengthOf(x) !== n) {
      throw new InvalidArgumentError(`RealFft(${n}).forward: x must be float32 [${n}], got ${x.dtype} [${x.dims.join(', ')}].`);
    }
    if (spectrum.dtype !== 'float32' || lengthOf(spectrum) !== 2 * bins(n)) {
      throw new InvalidArgumentError(`RealFft(${n}).forward: the spectrum must be float32 [${2 * bins(n)}].`);
    }
    this.#module._kiss_fftr(this.#config, pointer(x, this.#memory), pointer(spectrum, this.#memory));
  }
}

/**
 * The power spectrum of `x`, `|X_k|^2` for each bin `k` of its real FFT, into `out.power`. The
 * complex spectrum `options.spectrum` is scratch: KissFFT writes it, this reads it, and it dies
 * with the call.
 *
 * The rule for WebAssembly memory: take `.data` after the WASM call, never before. A call may grow
 * the memory, which detaches every view of the old buffer; an array's `.data` re-derives a view of
 * the new one each time it is read.
 */
export const powerSpectrumInto = describe(
  function powerSpectrumInto(out: { power: F32 }, fft: RealFft, x: F32, options: { spectrum: F32 }): void {
    fft.forward(x, options.spectrum);
    const s = options.spectrum.data;
    const p = out.power.data;
    for (let k = 0; k < p.length; k++) {
      const re = s[2 * k] ?? 0;
      const im = s[2 * k + 1] ?? 0;
      p[k] = re * re + im * im;
    }
  },
  {
    outputs: (_fft: RealFft, x: F32) => ({ power: Undef('float32', [bins(lengthOf(x))]) }),
    scratch: (_fft: RealFft, x: F32) => ({ spectrum: Undef('float32', [2 * bins(lengthOf(x))]) }),
  },
);

/** `powerSpectrum(space, fft, x)`: `power` from the space, `spectrum` from the verb's frame. */
export const powerSpectrum = Allocating(powerSpectrumInto);

/** Where each carve starts in the region (the arena's default alignment). */
export const ALIGNMENT = 256;

const aligned = (bytes: number): number => Math.ceil(bytes / ALIGNMENT) * ALIGNMENT;

/**
 * The region's size for plans of `sizes` (each with its input), and one call at a time: for each
 * size its state and its input, then the largest call's output (`power`, from the arena) and
 * scratch (`spectrum`, from the verb's frame, above the output). Every carve starts on the arena's
 * alignment; the last one, the scratch, ends the region. This is exactly the watermark of a loop
 * that has called every size once.
 */
export function regionBytes(kiss: KissFft, sizes: readonly number[]): number {
  let kept = 0;
  let call = 0;
  for (const n of sizes) {
    kept += aligned(configBytes(kiss, n)) + aligned(4 * n);
    call = Math.max(call, aligned(4 * bins(n)) + 8 * bins(n));
  }
  return kept + call;
}

/** One size's plan and its input array. */
export interface Plan {
  readonly fft: RealFft;
  /** The input: write the samples into `x.data` (it is in the module's memory, so no call copies it). */
  readonly x: F32;
}

/** The region, its arena, and a plan per size. */
export interface Workspace extends Disposable {
  readonly kiss: KissFft;
  /** The region's first byte in the module's memory (what `_malloc` returned). */
  readonly region: number;
  readonly bytes: number;
  readonly arena: Arena<'host'>;
  readonly plans: ReadonlyMap<number, Plan>;
  /** Dispose of the arena and give the region back to the module (`_free`). */
  close(): void;
}

/**
 * Set up: one `_malloc` of `regionBytes(kiss, sizes)`, an arena over exactly those bytes, and for
 * each size a `RealFft` and an input, carved in that order (so `regionBytes` is the watermark of a
 * loop over these sizes).
 */
export function openWorkspace(kiss: KissFft, sizes: readonly number[]): Workspace {
  const bytes = regionBytes(kiss, sizes);
  const region = kiss.module._malloc(bytes);
  if (region === 0) throw new Error(`kissfft-wasm: malloc(${bytes}) failed`);
  const arena = new Arena(kiss.memory, { byteOffset: region, byteLength: bytes, alignment: ALIGNMENT });
  const plans = new Map<number, Plan>();
  for (const n of sizes) plans.set(n, { fft: new RealFft(kiss, arena, n), x: alloc(arena, 'float32', n) });
  let open = true;
  const close = (): void => {
    if (!open) return;
    open = false;
    arena.dispose();
    kiss.module._free(region);
  };
  return { kiss, region, bytes, arena, plans, close, [Symbol.dispose]: close };
}
