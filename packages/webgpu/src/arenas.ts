/**
 * The arenas Pol knows over each device slab: made by `deviceArena`, or named to `capture` in its
 * `arenas` option. A graph pins the region it uses in each of them.
 *
 * @module
 */

import { type Arena, isArena } from '@pol/arena';
import { InvalidArgumentError } from '@pol/core';
import { describeValue } from '@pol/core/backend';

const arenasBySlab = new WeakMap<object, Set<Arena<'gpu'>>>();

/** Remember that `arena` carves from its slab. */
export function registerArena(arena: Arena<'gpu'>): void {
  const slab = arena.slab;
  let set = arenasBySlab.get(slab);
  if (set === undefined) {
    set = new Set();
    arenasBySlab.set(slab, set);
  }
  set.add(arena);
}

/** The arenas Pol knows over `slab`. */
export function arenasOver(slab: object): readonly Arena<'gpu'>[] {
  const set = arenasBySlab.get(slab);
  return set === undefined ? [] : [...set];
}

/** Throw unless `x` is an arena over a device slab of `device`; `what` names the call. */
export function assertDeviceArena(x: unknown, device: GPUDevice, what: string): asserts x is Arena<'gpu'> {
  if (!isArena(x) || x.storage.kind !== 'gpu') {
    throw new InvalidArgumentError(
      `${what} needs arenas over device slabs (deviceArena(device, bytes), or new Arena(deviceSlab(device, bytes))), got ${describeValue(x)}.`,
    );
  }
  if ((x.slab as { readonly device: GPUDevice }).device !== device) {
    throw new InvalidArgumentError(
      `${what}: ${String(x)} carves from a slab of another device; pass arenas of the captured device only.`,
    );
  }
}
