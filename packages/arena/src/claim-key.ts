/**
 * The one internal option of `new Arena`: how `claimRegion` hands an arena its claim. Keyed by a
 * symbol this package never exports, so no caller can pass it; `readOptions` reads string keys only.
 *
 * @module
 */

/** What an arena over a claimed region of a shared slab is told about its claim. */
export interface ClaimHooks {
  /** The epoch the arena starts at: the region's generation, new with every claim. */
  readonly epoch: number;
  /** Give the claim back; called once, by `dispose()`. */
  readonly release: () => void;
}

/** The options key of {@link ClaimHooks}. */
export const claimKey: unique symbol = Symbol('@pol/arena claim');
