/**
 * A small seeded pseudo-random generator (mulberry32): the same seed gives the same sequence on
 * every run and runtime, so examples and tests are deterministic.
 *
 * @example
 * ```ts
 * import { seededRandom } from '@pol/verbs/examples';
 * const random = seededRandom(42);
 * const a = random(); // in [0, 1)
 * ```
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A standard normal sample from a uniform generator (Box–Muller).
 *
 * @example
 * ```ts
 * import { seededRandom, normal } from '@pol/verbs/examples';
 * const z = normal(seededRandom(1));
 * ```
 */
export function normal(random: () => number): number {
  const u = 1 - random();
  const v = random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}
