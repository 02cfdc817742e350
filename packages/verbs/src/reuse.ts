// Internal: the one rule by which a verb hands out an object it made on an earlier call. An object
// a verb hands out (a result, the options object a kernel receives) is never written again. When
// the space reuses its arrays (an arena in steady state returns the same array objects call after
// call), the next call hands the very same object out again exactly when it would hold the very
// same values; otherwise it makes a fresh one. So a steady loop on an arena makes no garbage, and
// an object kept from an earlier call never changes under its holder.
//
// The objects made last are kept by the space they were made from, in a WeakMap: they live exactly
// as long as that space does, so a verb never keeps a result (or the arena behind it) alive, and
// two arenas used in turn each get their own objects back. One lookup per call finds them all. (A
// WeakRef would keep them as weakly, but its deref is a runtime call on every call.)

/** What a plan made last from one space: the objects to hand out again when a call would hold the same values. */
export interface Made {
  result: Record<string, unknown> | undefined;
  returned: Record<string, unknown> | undefined;
  options: Record<string, unknown> | undefined;
  /** The caller's option keys `options` was made with, in order. */
  optionKeys: readonly string[];
}

/**
 * What a verb remembers of a space it was called on, space first: that it is a space (so the
 * next call need not ask, see `KnownSpaces`), whether calls on it are checked, and the plan it was
 * last called with there, with that plan's `Made` record for the space (so a steady call finds it
 * without the plan's lookup).
 */
export class SpaceRecord {
  plan: object | undefined = undefined;
  made: Made | undefined = undefined;
  /** Whether calls on the space are checked: fixed when the arena is made, so asked once. */
  checked = false;
}

/**
 * The spaces a verb was called on first, each with its record, kept as long as the space lives
 * (a `WeakMap`: a verb never keeps a space alive). Why: "is the first argument a space?" is core's
 * `isSpace`, which every package asks of every kind of value, so its property reads are megamorphic
 * and cost more than a whole steady call's other checks; one identity lookup answers it for a space
 * this verb has seen. Only spaces with savepoints (arenas and their frames, whose arrays come back
 * call after call) are remembered: a host `Similar` made for one call would only fill the map.
 */
export class KnownSpaces {
  readonly #bySpace = new WeakMap<object, SpaceRecord>();

  /** The record of `x` when this verb was called on it first before; anything else: undefined. */
  get(x: unknown): SpaceRecord | undefined {
    // WeakMap.get answers undefined for a primitive, without a test here.
    return this.#bySpace.get(x as object);
  }

  /** Remember `space`, checked to be a space by the caller, with the plan it was just called with. */
  add(space: object, plan: object, made: Made, checked: boolean): void {
    const record = new SpaceRecord();
    record.plan = plan;
    record.made = made;
    record.checked = checked;
    this.#bySpace.set(space, record);
  }
}

/** A plan's `Made` records, one per space, kept as long as the space lives. */
export class MadeBySpace {
  readonly #bySpace = new WeakMap<object, Made>();

  /** The record for `space`, made on its first use. */
  for(space: object): Made {
    let made = this.#bySpace.get(space);
    if (made === undefined) {
      made = { result: undefined, returned: undefined, options: undefined, optionKeys: [] };
      this.#bySpace.set(space, made);
    }
    return made;
  }
}

/**
 * `{ [names[j]]: values[j] }` (and `extra: extraValue` after them when `extra` is given): `last`
 * when it holds exactly these values, else a fresh object.
 */
export function sameOrFresh(
  last: Readonly<Record<string, unknown>> | undefined,
  names: readonly string[],
  values: readonly unknown[],
  extra?: string,
  extraValue?: unknown,
): Record<string, unknown> {
  if (last !== undefined && holds(last, names, values) && (extra === undefined || last[extra] === extraValue)) {
    return last as Record<string, unknown>;
  }
  const out: Record<string, unknown> = {};
  for (let j = 0; j < names.length; j++) out[names[j] as string] = values[j];
  if (extra !== undefined) out[extra] = extraValue;
  return out;
}

function holds(last: Readonly<Record<string, unknown>>, names: readonly string[], values: readonly unknown[]): boolean {
  for (let j = 0; j < names.length; j++) if (last[names[j] as string] !== values[j]) return false;
  return true;
}

/** Set every name of a staging object back to `undefined`, so that it keeps nothing alive between calls. */
export function clearNames(staging: Record<string, unknown>, names: readonly string[]): void {
  for (let j = 0; j < names.length; j++) staging[names[j] as string] = undefined;
}
