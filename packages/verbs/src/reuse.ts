// Internal: the one rule by which a verb hands out an object it made on an earlier call. An object
// a verb hands out (a result, the options object a kernel receives) is never written again. When
// the space reuses its arrays (an arena in steady state returns the same array objects call after
// call), the next call hands the very same object out again exactly when it would hold the very
// same values; otherwise it makes a fresh one. So a steady loop on an arena makes no garbage, and
// an object kept from an earlier call never changes under its holder.
//
// The object made last is found through its key: the first array in it that the space handed out
// this call. It is kept in a WeakMap under that array, so it lives exactly as long as the array
// does: a verb never keeps a result (or the arena behind it) alive. (A WeakRef would do the same,
// but its deref costs a runtime call on every call.) A call whose object holds no array from the
// space (every buffer the caller's) has no key, and gets a fresh object.

/** The objects made last for one place in a plan, by key. */
export type Reused = WeakMap<object, Record<string, unknown>>;

/**
 * `{ [names[j]]: from[names[j]] }` (and `extra: extraValue` after them when `extra` is given):
 * the object made last under `key` when it holds exactly these values, else a fresh one, kept
 * under `key` for next time. With no key (`undefined`), always a fresh one.
 */
export function sameOrFresh(
  cache: Reused,
  key: object | undefined,
  names: readonly string[],
  from: Readonly<Record<string, unknown>>,
  extra?: string,
  extraValue?: unknown,
): Record<string, unknown> {
  if (key !== undefined) {
    const last = cache.get(key);
    if (last !== undefined && holds(last, names, from) && (extra === undefined || last[extra] === extraValue)) return last;
  }
  const out: Record<string, unknown> = {};
  for (let j = 0; j < names.length; j++) {
    const name = names[j] as string;
    out[name] = from[name];
  }
  if (extra !== undefined) out[extra] = extraValue;
  if (key !== undefined) cache.set(key, out);
  return out;
}

function holds(
  last: Readonly<Record<string, unknown>>,
  names: readonly string[],
  from: Readonly<Record<string, unknown>>,
): boolean {
  for (let j = 0; j < names.length; j++) {
    const name = names[j] as string;
    if (last[name] !== from[name]) return false;
  }
  return true;
}

/**
 * The key of an object about to be made from `staging`: the value of the first of `leaves` (names
 * the spec describes as an Undef) that the caller did not supply, when `reuse`; else `undefined`.
 */
export function keyOf(
  leaves: readonly string[],
  staging: Readonly<Record<string, unknown>>,
  supplied: Readonly<Record<string, unknown>> | undefined,
  reuse: boolean,
): object | undefined {
  if (!reuse) return undefined;
  for (let j = 0; j < leaves.length; j++) {
    const name = leaves[j] as string;
    if (supplied?.[name] === undefined) return staging[name] as object;
  }
  return undefined;
}

/** Set every name of a staging object back to `undefined`, so that it keeps nothing alive between calls. */
export function clearNames(staging: Record<string, unknown>, names: readonly string[]): void {
  for (let j = 0; j < names.length; j++) staging[names[j] as string] = undefined;
}
