// Internal: the one rule by which a verb hands out an object it made on an earlier call. An object
// a verb hands out (a result, the options object a kernel receives) is never written again. When
// the space reuses its arrays (an arena in steady state returns the same array objects call after
// call), the next call hands the very same object out again exactly when it would hold the very
// same values; otherwise it makes a fresh one. So a steady loop on an arena makes no garbage, and
// an object kept from an earlier call never changes under its holder.
//
// The object made last is kept by the space (or frame) it was made from, in a WeakMap: it lives
// exactly as long as that space does, so a verb never keeps a result (or the arena behind it)
// alive, and two arenas used in turn each get their own object back. (A WeakRef would keep it as
// weakly, but its deref is a runtime call on every call.)

/** The objects made last for one place in a plan, by the space they were made from. */
export type Reused = WeakMap<object, Record<string, unknown>>;

/**
 * `{ [names[j]]: values[j] }` (and `extra: extraValue` after them when `extra` is given): the
 * object made last under `key` when it holds exactly these values, else a fresh one, kept under
 * `key` for next time. With no key (`undefined`: a space whose arrays never repeat), always fresh.
 */
export function sameOrFresh(
  cache: Reused,
  key: object | undefined,
  names: readonly string[],
  values: readonly unknown[],
  extra?: string,
  extraValue?: unknown,
): Record<string, unknown> {
  if (key !== undefined) {
    const last = cache.get(key);
    if (last !== undefined && holds(last, names, values) && (extra === undefined || last[extra] === extraValue)) return last;
  }
  const out: Record<string, unknown> = {};
  for (let j = 0; j < names.length; j++) out[names[j] as string] = values[j];
  if (extra !== undefined) out[extra] = extraValue;
  if (key !== undefined) cache.set(key, out);
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
