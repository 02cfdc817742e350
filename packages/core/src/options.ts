import { InvalidArgumentError } from './errors.js';
import { describeValue } from './value.js';

const noOptions: Readonly<Record<string, unknown>> = Object.freeze({});

/**
 * Read a call's trailing options object against the keys it knows: `undefined` reads as no
 * options, and the object itself comes back (nothing is copied, so a call that reads options on a
 * hot path allocates nothing), typed as a partial record of the known keys with `unknown` values
 * for the caller to check one by one.
 *
 * @param call - the call as the user wrote it, for messages: `'new Arena(slab, options)'`.
 * @param options - what the user passed.
 * @param known - every key the call accepts.
 * @throws {InvalidArgumentError} when `options` is neither `undefined` nor an object (an array, a
 * number, `null`), or has an own key the call does not know; the message names the call and every
 * known key, and a key that differs from a known one only in case is pointed out.
 * @example
 * ```ts
 * import { readOptions } from '@pol/core/backend';
 * const o = readOptions('capture(device, step, options)', { label: 'forward' }, ['arenas', 'label']);
 * console.log(o.label, readOptions('capture(device, step, options)', undefined, ['label']).label); // 'forward' undefined
 * try {
 *   readOptions('new Arena(slab, options)', { Alignment: 64 }, ['alignment', 'checked']);
 * } catch (e) {
 *   console.log((e as Error).message); // "new Arena(slab, options) has no option 'Alignment' (did you mean 'alignment'?). Its options are 'alignment' and 'checked'."
 * }
 * ```
 */
export function readOptions<const K extends string>(
  call: string,
  options: unknown,
  known: readonly K[],
): { readonly [P in K]?: unknown } {
  if (options === undefined) return noOptions as { readonly [P in K]?: unknown };
  if (typeof options !== 'object' || options === null || Array.isArray(options) || ArrayBuffer.isView(options)) {
    throw new InvalidArgumentError(
      `${call} takes an options object, got ${describeValue(options)}. ` +
        (known.length === 0
          ? 'It takes no options: leave them out.'
          : `Its options are ${list(known)}; leave them out for the defaults.`),
    );
  }
  for (const key in options) {
    if (Object.hasOwn(options, key) && !known.includes(key as K)) throw unknownOption(call, key, known);
  }
  return options as { readonly [P in K]?: unknown };
}

function unknownOption(call: string, key: string, known: readonly string[]): InvalidArgumentError {
  const lower = key.toLowerCase();
  const near = known.find((k) => k.toLowerCase() === lower);
  const hint = near === undefined ? '' : ` (did you mean '${near}'?)`;
  return new InvalidArgumentError(
    known.length === 0
      ? `${call} has no option '${key}': it takes no options. Leave the options out.`
      : `${call} has no option '${key}'${hint}. Its options are ${list(known)}.`,
  );
}

function list(keys: readonly string[]): string {
  const quoted = keys.map((k) => `'${k}'`);
  if (quoted.length <= 1) return quoted[0] ?? 'none';
  return `${quoted.slice(0, -1).join(', ')} and ${quoted.at(-1)}`;
}
