/**
 * What a dying device slab tells the arenas over it. An unchecked arena caches the arrays it carved
 * and hands them out again without asking the storage, so once a slab is destroyed (its buffer
 * destroyed, its device lost) each arena over it must forget them: its next carve then asks the
 * storage, which refuses the dead slab with the typed error a first carve gives. `@pol/arena`'s
 * storage hook `attach` hands over each new arena's `forget`; this module keeps them per slab.
 *
 * Nothing here keeps an arena or a slab alive: arenas are held by `WeakRef` (their `forget` in a
 * `WeakMap` keyed by the arena), and the device's loss listener holds only the list of references,
 * removed when the slab dies or is collected.
 *
 * @module
 */

import type { DeviceState, LossListener } from './device.js';

/** The arenas over one slab, and the listener that tells them when its device is lost. */
class Attached implements LossListener {
  readonly arenas: WeakRef<object>[] = [];

  constructor(readonly state: DeviceState) {}

  deviceLost(): void {
    forgetAll(this);
  }
}

const forgetOf = new WeakMap<object, () => void>();
const attachedBySlab = new WeakMap<object, Attached>();
// A slab collected before it died: its device stops holding the listener.
const unlisten = new FinalizationRegistry<Attached>((attached) => attached.state.listeners.delete(attached));

/** Remember `arena` over `slab` (a live slab of a live device), to call its `forget` when the slab dies. */
export function attachArena(slab: object, state: DeviceState, arena: object, forget: () => void): void {
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
