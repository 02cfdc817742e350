/**
 * A cached carve: what the carve cache keeps for each array an unchecked arena carved, and, for the
 * built-in host storages, the array itself.
 *
 * @module
 */

import type { DType, HostArray, PolArray, TypedArrayOf } from '@pol/core';
import { type ArrayFamily, familyKey, hostFamily, shapeText } from '@pol/core/backend';

const inspectKey = Symbol.for('nodejs.util.inspect.custom');

/** What of Node.js's inspect options the custom inspection reads (no import of node:util). */
interface InspectOptions {
  readonly depth?: number | null;
  readonly stylize?: (text: string, style: string) => string;
}

/**
 * One cached carve: what was carved at `carveStart`, with the fields the hit path compares laid out
 * on the entry itself (the dtype, and the first dim of a 1-D carve), so that a 1-D hit reads
 * nothing else.
 *
 * A carve of a built-in host storage makes no array object apart from its entry: the entry is the
 * host array (its `dtype`, `dims` and `data`, and the host family on its prototype), and
 * `carveArray` is undefined. A first carve then makes two objects, the view and this, where it made
 * three (a view, a wrapper and an entry: 40 bytes and one allocation more). Any other storage's
 * array (a WebAssembly memory's, a GPU buffer's, a `defineStorage` one's) is `carveArray`, and
 * `data` is undefined. Entries of both kinds are of this one class, so that the hit path sees one
 * shape.
 *
 * The cache's fields (`carveStart`, `carveEnd`, `carveArray`, `carveD0`) are plain properties, so a
 * host array of an unchecked arena shows them to `Object.keys` and `JSON.stringify` (the package
 * README says so, and that they are not to be written). Symbol keys would hide them, at a price
 * measured on every carve: a symbol is a module binding, and each read or write of a field named by
 * one loads and checks that binding first (about a tenth of a first carve's instructions). Names no
 * program gives its own fields by accident, and `carveArray` undefined rather than the entry
 * itself, so that no host array refers to itself (which `JSON.stringify` refuses).
 *
 * Its fields are declared, not defined: a class field is first set to undefined, and a field that
 * has held undefined keeps numbers as tagged values, which the hit path then had to check before
 * each compare; assigned once here, the start, end and first dim are small integers in place.
 */
export class CacheEntry<D extends DType = DType> implements HostArray<D> {
  // How messages name it: a static getter keeps `instanceof` fast (CONTRIBUTING.md, "Class names").
  static get name(): string {
    return 'HostArray';
  }
  declare readonly [familyKey]: ArrayFamily;
  declare readonly dtype: D;
  /** Interned: frozen and shared; validated when carved. */
  declare readonly dims: readonly number[];
  /** The view, for a host storage's carve; undefined in the entry of any other storage's array. */
  declare readonly data: TypedArrayOf<D>;
  /** Where the carve starts in the arena's region. */
  declare readonly carveStart: number;
  /** `carveStart` + the bytes the carve took (the storage's reserve of its byte length). */
  declare readonly carveEnd: number;
  /** Another storage's array; undefined when the entry is the array (see {@link arrayOf}). */
  declare readonly carveArray: PolArray | undefined;
  /**
   * `dims[0]` when `dims` has one element, else -1 (no dim is negative): the rank and the first dim
   * in one field. A compare of it with a caller's first dim also checks that this is at least 0,
   * which no carve of another rank is.
   */
  declare readonly carveD0: number;

  /**
   * The entry of `array`, or, with `array` undefined, the host array over `data`. `d0` is already
   * folded as the field is (a first dim, or -1 for another rank): reading it from frozen dims is slow
   * (see CarveSize).
   */
  constructor(
    start: number,
    dtype: D,
    dims: readonly number[],
    end: number,
    array: PolArray | undefined,
    d0: number,
    data?: TypedArrayOf<D>,
  ) {
    this.dtype = dtype;
    this.dims = dims;
    this.data = data as TypedArrayOf<D>;
    this.carveStart = start;
    this.carveEnd = end;
    this.carveArray = array;
    this.carveD0 = d0;
  }

  toString(): string {
    return `HostArray(${shapeText(this.dtype, this.dims)})`;
  }

  // Node.js's console shows what it shows of core's host arrays, not the cache's fields: the three
  // fields, or `[HostArray]` past the depth it prints.
  [inspectKey](depth: number, options: InspectOptions, inspect: (value: unknown, options: InspectOptions) => string): string {
    if (depth < 0) return options.stylize === undefined ? '[HostArray]' : options.stylize('[HostArray]', 'special');
    const shown = { dtype: this.dtype, dims: this.dims, data: this.data };
    return `HostArray ${inspect(shown, { ...options, depth })}`;
  }
}

Object.defineProperty(CacheEntry.prototype, familyKey, { value: hostFamily });

/** The array an entry hands out: the entry itself for a host storage's carve, else its `carveArray`. */
export function arrayOf(entry: CacheEntry): PolArray {
  const array = entry.carveArray;
  return array === undefined ? entry : array;
}
