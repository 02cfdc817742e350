// Internal: the one rule by which a verb hands out an object it made on an earlier call. An object
// a verb hands out (a result, the options object a kernel receives) is never written again. When
// the space reuses its arrays (an arena in steady state returns the same array objects call after
// call), the next call hands the very same object out again exactly when it would hold the very
// same values; otherwise it makes a fresh one. So a steady loop on an arena makes no garbage, and
// an object kept from an earlier call never changes under its holder.

/** Where the object made last is kept: weakly, so that a verb never keeps its results (and their arena) alive. */
export interface Reused {
  last: WeakRef<Record<string, unknown>> | undefined;
}

/**
 * `{ [names[j]]: from[names[j]] }` (and `extra: extraValue` after them when `extra` is given):
 * the object made last for `cache` when `reuse` and it holds exactly these values, else a fresh
 * one, kept for next time when `reuse`.
 */
export function sameOrFresh(
  cache: Reused,
  names: readonly string[],
  from: Readonly<Record<string, unknown>>,
  reuse: boolean,
  extra?: string,
  extraValue?: unknown,
): Record<string, unknown> {
  if (reuse) {
    const last = cache.last?.deref();
    if (last !== undefined && holds(last, names, from) && (extra === undefined || last[extra] === extraValue)) return last;
  }
  const out: Record<string, unknown> = {};
  for (let j = 0; j < names.length; j++) {
    const name = names[j] as string;
    out[name] = from[name];
  }
  if (extra !== undefined) out[extra] = extraValue;
  if (reuse) cache.last = new WeakRef(out);
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

/** Set every name of a staging object back to `undefined`, so that it keeps nothing alive between calls. */
export function clearNames(staging: Record<string, unknown>, names: readonly string[]): void {
  for (let j = 0; j < names.length; j++) staging[names[j] as string] = undefined;
}
