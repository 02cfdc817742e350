// Internal: what a call plan needs to know of the specs its describers returned, read once when the
// plan is made: their top-level names, whether the result allocates anything, the data arrays they
// pass through, and (for checked mode) where a later answer differs.

import { isArray, isUndef, type Spec, type Undef } from '@pol/core';
import { describeValue, isPlainObject, sameDims, shapeText, valueText } from '@pol/core/backend';

/** The names a spec describes at its top, in the order it materializes them. */
export function namesOf(spec: Spec): string[] {
  const names: string[] = [];
  for (const key in spec) if (Object.hasOwn(spec, key)) names.push(key);
  return names;
}

/** Whether `value` (a spec, or a value in one) holds an Undef, something to allocate. */
export function allocatesAnything(value: unknown): boolean {
  if (isUndef(value)) return true;
  if (isArray(value)) return false;
  if (Array.isArray(value)) return value.some(allocatesAnything);
  if (!isPlainObject(value)) return false;
  for (const key in value) if (Object.hasOwn(value, key) && allocatesAnything(value[key])) return true;
  return false;
}

/** The data arrays `value` passes through. */
export function arraysIn(value: unknown, into: unknown[]): void {
  if (isUndef(value)) return;
  if (isArray(value)) into.push(value);
  else if (Array.isArray(value)) for (const element of value) arraysIn(element, into);
  else if (isPlainObject(value)) for (const key in value) if (Object.hasOwn(value, key)) arraysIn(value[key], into);
}

/** Where a spec `now` differs from the spec `before` (same buffers: same structure, Undefs of the same dtype, dims and zeroing, the same arrays), or `undefined`. */
export function difference(
  before: unknown,
  now: unknown,
  path: string,
): { readonly path: string; readonly expected: string; readonly got: string } | undefined {
  if (isUndef(before)) {
    if (isUndef(now) && now.dtype === before.dtype && sameDims(now.dims, before.dims) && now.zeroed === before.zeroed)
      return undefined;
    return { path, expected: words(before), got: words(now) };
  }
  if (isArray(before))
    return now === before ? undefined : { path, expected: `the same ${valueText(before)} array`, got: words(now) };
  if (Array.isArray(before)) {
    if (!Array.isArray(now) || now.length !== before.length) return { path, expected: words(before), got: words(now) };
    for (let i = 0; i < before.length; i++) {
      const d = difference(before[i], now[i], `${path}[${i}]`);
      if (d !== undefined) return d;
    }
    return undefined;
  }
  const names = namesOf(before as Spec);
  if (!isPlainObject(now)) return { path, expected: words(before), got: words(now) };
  const got = namesOf(now as Spec);
  if (got.length !== names.length || got.some((name, i) => name !== names[i]))
    return { path, expected: words(before), got: words(now) };
  for (const name of names) {
    const d = difference((before as Spec)[name], now[name], path === '' ? name : `${path}.${name}`);
    if (d !== undefined) return d;
  }
  return undefined;
}

function words(value: unknown): string {
  if (isUndef(value)) {
    const u = value as Undef;
    const text = `Undef(${shapeText(u.dtype, u.dims)})`;
    return u.zeroed ? `zeroed(${text})` : text;
  }
  if (isArray(value)) return `an array ${valueText(value)}`;
  if (Array.isArray(value)) return `a list of ${value.length}`;
  if (isPlainObject(value)) return `a group { ${namesOf(value as Spec).join(', ')} }`;
  return describeValue(value);
}
