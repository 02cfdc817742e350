/**
 * The arenas over each device slab, as `@pol/arena`'s storage hook `attach` reports every arena
 * made over one (by `deviceArena`, `placedArena` or `new Arena(deviceSlab(…))` alike). Pol uses
 * them twice:
 *
 * - **a dying slab's arenas forget their cached arrays.** An unchecked arena hands a repeated
 *   carve its cached array without asking the storage, so once a slab is destroyed (its buffer
 *   destroyed, its device lost) each arena over it must forget them: its next carve then asks the
 *   storage, which refuses the dead slab with the typed error a first carve gives;
 * - **a graph pins the bytes it binds in every arena over the slabs it uses** (`pins.ts`), so
 *   that no arena needs naming to `capture`.
 *
 * Nothing here keeps an arena or a slab alive: arenas are held by `WeakRef` (their `forget` in a
 * `WeakMap` keyed by the arena), and the device's loss listener holds only the list of references,
 * removed when the slab dies or is collected. An arena nobody holds can neither retract nor carve,
 * so there is nothing to pin in it or to make it forget.
 *
 * @module
 */

import { type Arena, isArena } from '@pol/arena';
import { InvalidArgumentError } from '@pol/core';
import { describeValue } from '@pol/core/backend';
import type { DeviceState, LossListener } from './device.js';

/** The arenas over one slab, and the listener that tells them when its device is lost. */
class Attached implements LossListener {
  readonly arenas: WeakRef<Arena<'gpu'>>[] = [];

  constructor(readonly state: DeviceState) {}

  deviceLost(): void {
    forgetAll(this);
  }
}

const forgetOf = new WeakMap<object, () => void>();
const attachedBySlab = new WeakMap<object, Attached>();
// A slab collected before it died: its device stops holding the listener.
const unlisten = new FinalizationRegistry<Attached>((attached) => attached.state.listeners.delete(attached));

/** Remember `arena` over `slab` (a live slab of a live device), to pin in it and to call its `forget` when the slab dies. */
export function attachArena(slab: object, state: DeviceState, arena: Arena<'gpu'>, forget: () => void): void {
  let attached = attachedBySlab.get(slab);
  if (attached === undefined) {
    attached = new Attached(state);
    attachedBySlab.set(slab, attached);
    state.listeners.add(attached);
    unlisten.register(slab, attached, attached);
  }
  const arenas = attached.arenas;
  // Drop the references to arenas already collected, so that a slab outliving many arenas keeps few.
  let kept = 0;
  for (const ref of arenas) if (ref.deref() !== undefined) arenas[kept++] = ref;
  arenas.length = kept;
  forgetOf.set(arena, forget);
  arenas.push(new WeakRef(arena));
}

/** The live arenas over `slab` (none once it died). */
export function arenasOver(slab: object): Arena<'gpu'>[] {
  const live: Arena<'gpu'>[] = [];
  for (const ref of attachedBySlab.get(slab)?.arenas ?? []) {
    const arena = ref.deref();
    if (arena !== undefined) live.push(arena);
  }
  return live;
}

/** `slab` died: every arena over it forgets its cached arrays, and its device stops listening for it. */
export function forgetArenas(slab: object): void {
  const attached = attachedBySlab.get(slab);
  if (attached === undefined) return;
  attachedBySlab.delete(slab);
  attached.state.listeners.delete(attached);
  unlisten.unregister(attached);
  forgetAll(attached);
}

function forgetAll(attached: Attached): void {
  const arenas = attached.arenas.splice(0);
  for (const ref of arenas) {
    const arena = ref.deref();
    if (arena !== undefined) forgetOf.get(arena)?.();
  }
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
