import { seededRandom } from '@pol/verbs/examples';
import { expect, test } from 'vitest';
import { dftPower, fftPower, largest, peakRelativeError, referencePower, testSignal, toneBins } from './reference.js';

test('the DFT by definition: an impulse has a flat spectrum, a tone one peak of (n/2)^2', () => {
  const impulse = new Float64Array(16);
  impulse[0] = 1;
  expect(Array.from(dftPower(impulse))).toEqual(new Array(9).fill(1));
  const n = 64;
  const tone = Float64Array.from({ length: n }, (_, i) => Math.cos((2 * Math.PI * 5 * i) / n));
  const power = dftPower(tone);
  expect(power.length).toBe(33);
  expect(power[5]).toBeCloseTo((n / 2) ** 2, 8);
  for (let k = 0; k < power.length; k++) if (k !== 5) expect(power[k]).toBeLessThan(1e-20);
});

test('the radix-2 FFT agrees with the definition (double precision: to 1e-12 of the largest bin)', () => {
  for (const n of [2, 8, 64, 1024]) {
    const random = seededRandom(n);
    const x = Float64Array.from({ length: n }, () => random() - 0.5);
    expect(peakRelativeError(fftPower(x), dftPower(x)), `n = ${n}`).toBeLessThan(1e-12);
  }
  expect(() => fftPower(new Float64Array(12))).toThrow(RangeError);
});

test('the reference is the definition up to 4,096 points, the FFT above', () => {
  const x = testSignal(8192);
  expect(referencePower(x)).toEqual(fftPower(x));
  const small = testSignal(256);
  expect(referencePower(small)).toEqual(dftPower(small));
});

test('the test signal peaks at its two tones', () => {
  for (const n of [256, 4096]) expect(largest(referencePower(testSignal(n)), 2)).toEqual([...toneBins(n)]);
});

test('peakRelativeError: the worst difference over the largest bin; a length mismatch or NaN never passes', () => {
  expect(peakRelativeError([4, 1], [4, 2])).toBe(0.25);
  expect(peakRelativeError([4], [4, 2])).toBe(Number.POSITIVE_INFINITY);
  expect(peakRelativeError([Number.NaN, 2], [4, 2]) <= 1).toBe(false);
});
