/**
 * The references the results are checked against, in plain JavaScript and double precision: the
 * power spectrum by the definition of the DFT (O(n^2)), and by a textbook radix-2 FFT (O(n log n),
 * for sizes where the definition is too slow; it is itself checked against the definition).
 */
import { seededRandom } from '@pol/verbs/examples';

/**
 * `|X_k|^2` for `k = 0 .. n/2`, where `X_k = sum_j x_j e^(-2 pi i jk / n)`: the DFT as defined,
 * with the angle reduced exactly (`jk mod n`) before its cosine and sine are looked up.
 */
export function dftPower(x: ArrayLike<number>): Float64Array {
  const n = x.length;
  const cos = new Float64Array(n);
  const sin = new Float64Array(n);
  for (let t = 0; t < n; t++) {
    cos[t] = Math.cos((2 * Math.PI * t) / n);
    sin[t] = Math.sin((2 * Math.PI * t) / n);
  }
  const power = new Float64Array((n >> 1) + 1);
  for (let k = 0; k < power.length; k++) {
    let re = 0;
    let im = 0;
    for (let j = 0, t = 0; j < n; j++, t = (t + k) % n) {
      const v = x[j] ?? 0;
      re += v * (cos[t] ?? 0);
      im -= v * (sin[t] ?? 0);
    }
    power[k] = re * re + im * im;
  }
  return power;
}

/** The same power spectrum by an iterative radix-2 FFT (n a power of two). */
export function fftPower(x: ArrayLike<number>): Float64Array {
  const n = x.length;
  if (n < 2 || (n & (n - 1)) !== 0) throw new RangeError(`fftPower needs a power of two, got ${n}`);
  const re = new Float64Array(n);
  const im = new Float64Array(n);
  // Bit-reversed order.
  const bits = Math.log2(n);
  for (let i = 0; i < n; i++) {
    let r = 0;
    for (let b = 0; b < bits; b++) r |= ((i >> b) & 1) << (bits - 1 - b);
    re[r] = x[i] ?? 0;
  }
  for (let size = 2; size <= n; size *= 2) {
    const half = size / 2;
    for (let k = 0; k < half; k++) {
      const angle = (-2 * Math.PI * k) / size;
      const wr = Math.cos(angle);
      const wi = Math.sin(angle);
      for (let start = 0; start < n; start += size) {
        const a = start + k;
        const b = a + half;
        const br = re[b] ?? 0;
        const bi = im[b] ?? 0;
        const tr = wr * br - wi * bi;
        const ti = wr * bi + wi * br;
        const ar = re[a] ?? 0;
        const ai = im[a] ?? 0;
        re[a] = ar + tr;
        im[a] = ai + ti;
        re[b] = ar - tr;
        im[b] = ai - ti;
      }
    }
  }
  const power = new Float64Array((n >> 1) + 1);
  for (let k = 0; k < power.length; k++) power[k] = (re[k] ?? 0) ** 2 + (im[k] ?? 0) ** 2;
  return power;
}

/** The reference for `n` points: by definition up to 4,096 points, by the radix-2 FFT above that. */
export function referencePower(x: ArrayLike<number>): Float64Array {
  return x.length <= 4096 || (x.length & (x.length - 1)) !== 0 ? dftPower(x) : fftPower(x);
}

/** The two tones of the test signal, as bins of an `n`-point transform. */
export function toneBins(n: number): readonly [number, number] {
  return [n / 16, n / 4 + 3];
}

/**
 * The test signal: a tone of amplitude 1 at bin n/16, one of amplitude 0.5 at bin n/4 + 3, and
 * uniform noise of amplitude 0.1 (seeded). Its power spectrum peaks at those two bins, at about
 * (n/2)^2 and (n/4)^2.
 */
export function testSignal(n: number, seed = 1): Float32Array {
  const [a, b] = toneBins(n);
  const random = seededRandom(seed);
  const x = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    x[i] = Math.sin((2 * Math.PI * a * i) / n) + 0.5 * Math.cos((2 * Math.PI * b * i) / n) + 0.2 * (random() - 0.5);
  }
  return x;
}

/** The largest error of `power` against `reference`, as a fraction of the reference's largest bin. */
export function peakRelativeError(power: ArrayLike<number>, reference: ArrayLike<number>): number {
  let peak = 0;
  let worst = 0;
  for (let k = 0; k < reference.length; k++) {
    peak = Math.max(peak, reference[k] ?? 0);
    worst = Math.max(worst, Math.abs((power[k] ?? Number.NaN) - (reference[k] ?? 0)));
  }
  if (power.length !== reference.length) return Number.POSITIVE_INFINITY;
  return worst / peak;
}

/** The indices of the `count` largest values (largest first). */
export function largest(values: ArrayLike<number>, count: number): number[] {
  return Array.from({ length: values.length }, (_, i) => i)
    .sort((i, j) => (values[j] ?? 0) - (values[i] ?? 0))
    .slice(0, count);
}
