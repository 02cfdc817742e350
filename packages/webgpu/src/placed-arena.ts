/**
 * A placed arena: one device arena per slab of a {@link Placement}, and a space over them that
 * carves the carve of ordinal n from slab `placement.slabOf(n)`. Frames and savepoints rewind
 * every slab and the ordinal together, so a step that repeats its carves lands on the same
 * (slab, offset) pairs every time: bind groups come from the cache, and a captured step replays.
 *
 * @module
 */

import { type Arena, type Mark, mark, retract } from '@pol/arena';
import { type ArrayOf, byteLength, type DType, InvalidArgumentError, type Space } from '@pol/core';
import { describeValue, readOptions, shapeText } from '@pol/core/backend';
import { deviceName } from './device.js';
import { PlacementError } from './errors.js';
import { deviceArena } from './factories.js';
import { bindingSize } from './limits.js';
import { PositionedSpace } from './marking-frame.js';
import type { Placement } from './placement.js';

/**
 * A space over the slabs of a placement (see {@link placedArena}): `alloc(arena, …)`,
 * `scratchspace(arena, …)`, verbs and specs work on it as on an arena.
 *
 * @example
 * ```ts
 * import { alloc, scratchspace, type Space } from '@pol/core';
 * import { type PlacedArena, placedArena, planPlacement } from '@pol/webgpu';
 * const steps = (space: Space<'gpu'>) =>
 *   scratchspace(space, (frame) => alloc(frame, 'float32', [16]).offset);
 * const placement = await planPlacement(device, (space) => void steps(space));
 * const arena: PlacedArena = placedArena(device, placement, { label: 'block' });
 * console.log(steps(arena) === steps(arena), arena.carves, arena.arenas.length); // true 0 1
 * arena.destroy();
 * ```
 */
export interface PlacedArena extends Space<'gpu'> {
  /** The placement it follows. */
  readonly placement: Placement;
  /** Its arenas, one per slab (slab `i` is `arenas[i]`): ordinary `deviceArena`s. */
  readonly arenas: readonly Arena<'gpu'>[];
  /** The ordinal of the next carve. */
  readonly carves: number;
  /** Its label. */
  readonly label: string;
  /** Release everything carved, on every slab, and start again at ordinal 0. */
  reset(): void;
  /** Destroy its slabs (once the work submitted so far is done). */
  destroy(): void;
}

/**
 * Options of {@link placedArena}.
 *
 * @example
 * ```ts
 * import { alloc } from '@pol/core';
 * import { type PlacedArenaOptions, placedArena, planPlacement } from '@pol/webgpu';
 * const placement = await planPlacement(device, (space) => void alloc(space, 'float32', [4]));
 * const options: PlacedArenaOptions = { label: 'activations', checked: true };
 * const arena = placedArena(device, placement, options);
 * console.log(arena.arenas[0]?.checked, arena.label); // true 'activations'
 * arena.destroy();
 * ```
 */
export interface PlacedArenaOptions {
  /** A name for the slabs and messages. Default: the placement's label. */
  readonly label?: string;
  /** Make its arenas checked (see `deviceArena`). Default false. */
  readonly checked?: boolean;
}

interface PlacedPosition {
  readonly ordinal: number;
  readonly marks: readonly Mark[];
}

class PlacedArenaImpl extends PositionedSpace<PlacedPosition> implements PlacedArena {
  // How messages name it: a static getter keeps `instanceof` fast (CONTRIBUTING.md, "Class names").
  static override get name(): string {
    return 'PlacedArena';
  }
  #ordinal = 0;
  readonly #start: PlacedPosition;

  constructor(
    readonly device: GPUDevice,
    readonly placement: Placement,
    readonly arenas: readonly Arena<'gpu'>[],
    readonly label: string,
  ) {
    super();
    this.#start = this.position();
  }

  get carves(): number {
    return this.#ordinal;
  }

  alloc<D extends DType>(dtype: D, dims: readonly number[]): ArrayOf<'gpu', D> {
    const n = this.#ordinal;
    const placement = this.placement;
    if (n >= placement.carves) {
      throw new PlacementError(
        `${String(this)} cannot carve ${shapeText(dtype, dims)}: it would be carve #${n}, and placement '${placement.label}' holds ${placement.carves} ` +
          '(the warm-up carved no more). Carve the same arrays, in the same order, as the warm-up did, or plan the placement again with this step.',
      );
    }
    const bytes = bindingSize(byteLength(dtype, dims));
    if (bytes > placement.bytesOf(n)) {
      throw new PlacementError(
        `${String(this)} cannot carve ${shapeText(dtype, dims)} (${bytes} bytes) as carve #${n}: the warm-up's carve #${n} was ` +
          `${placement.bytesOf(n)} bytes, and the slabs are sized for that. Carve the same arrays as the warm-up did, or plan again.`,
      );
    }
    const array = (this.arenas[placement.slabOf(n)] as Arena<'gpu'>).alloc(dtype, dims);
    this.#ordinal = n + 1;
    return array;
  }

  position(): PlacedPosition {
    return { ordinal: this.#ordinal, marks: this.arenas.map((a) => mark(a)) };
  }

  rewind(token: PlacedPosition): void {
    this.#ordinal = token.ordinal;
    this.arenas.forEach((a, i) => {
      retract(a, token.marks[i] as Mark);
    });
  }

  reset(): void {
    while (this.frames.length > 0) this.frames[0]?.close();
    this.rewind(this.#start);
  }

  destroy(): void {
    for (const a of this.arenas) a.slab.destroy();
  }

  override toString(): string {
    return `PlacedArena('${this.label}', ${this.arenas.length} slabs on ${deviceName(this.device)}, carve #${this.#ordinal})`;
  }
}

const optionKeys = ['label', 'checked'] as const;

/**
 * Make the slabs of `placement` (one `deviceArena` each, of exactly the size the plan measured,
 * with the usage its carves need) and a space over them that follows it: the carve of ordinal n
 * goes to slab `placement.slabOf(n)`. Carve the same arrays in the same order as the warm-up of
 * {@link planPlacement} did; a carve past the plan, or larger than the warm-up's at its ordinal,
 * is refused with {@link PlacementError}. Capture a step on it as on any device arena: its arenas
 * are known to Pol, so a graph pins what it binds.
 *
 * @throws {InvalidArgumentError} for a bad device, placement or option.
 * @throws everything `deviceArena` throws; nothing is left allocated when it throws.
 * @example
 * ```ts
 * import { alloc } from '@pol/core';
 * import { placedArena, planPlacement } from '@pol/webgpu';
 * const placement = await planPlacement(device, (space) => {
 *   alloc(space, 'float32', [64]);
 *   alloc(space, 'int32', [8]);
 * });
 * const arena = placedArena(device, placement);
 * const x = alloc(arena, 'float32', [64]); // carve #0, on slab placement.slabOf(0)
 * console.log(x.buffer === arena.arenas[placement.slabOf(0)]?.slab.buffer); // true
 * arena.destroy();
 * ```
 */
export function placedArena(device: GPUDevice, placement: Placement, options?: PlacedArenaOptions): PlacedArena {
  const call = 'placedArena(device, placement, options)';
  if (
    !(placement instanceof Object) ||
    typeof (placement as { slabOf?: unknown }).slabOf !== 'function' ||
    !Array.isArray(placement.bytes)
  ) {
    throw new InvalidArgumentError(
      `${call} needs a Placement from planPlacement(device, warmUp), got ${describeValue(placement)}.`,
    );
  }
  const o = readOptions(call, options, optionKeys);
  if (o.label !== undefined && typeof o.label !== 'string') {
    throw new InvalidArgumentError(`${call}: label must be a string, got ${describeValue(o.label)}.`);
  }
  if (o.checked !== undefined && typeof o.checked !== 'boolean') {
    throw new InvalidArgumentError(`${call}: checked must be true or false, got ${describeValue(o.checked)}.`);
  }
  const label = o.label ?? placement.label;
  const arenas: Arena<'gpu'>[] = [];
  try {
    placement.bytes.forEach((bytes, i) => {
      arenas.push(
        deviceArena(device, bytes, {
          label: `${label} slab ${i}`,
          usage: placement.usage[i] ?? 0,
          alignment: placement.alignment,
          checked: o.checked === true,
        }),
      );
    });
  } catch (error) {
    for (const a of arenas) a.slab.destroy();
    throw error;
  }
  return new PlacedArenaImpl(device, placement, Object.freeze(arenas), label);
}
