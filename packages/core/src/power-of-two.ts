/**
 * Whether `n` is a power of two (1, 2, 4, …), as alignments and GPU limits must be. Exact for
 * every safe integer, past 2³¹ too, where JavaScript's bitwise operators no longer apply.
 *
 * @example
 * ```ts
 * import { isPowerOfTwo } from '@pol/core/backend';
 * console.log(isPowerOfTwo(256), isPowerOfTwo(2 ** 40), isPowerOfTwo(48), isPowerOfTwo(0), isPowerOfTwo('4')); // true true false false false
 * ```
 */
export function isPowerOfTwo(n: unknown): n is number {
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) return false;
  let m = n;
  // Halving is exact for integers, so this brings any safe power of two into the bitwise range.
  while (m > 0x40000000) {
    if (m % 2 !== 0) return false;
    m /= 2;
  }
  return (m & (m - 1)) === 0;
}
