/**
 * Dims as backends keep them: frozen so that nobody changes an array's shape behind its back,
 * interned so that a steady loop asking for the same shape gets the same array back, and compared
 * without allocating.
 *
 * @module
 */
import { elementCount } from './shape.js';

/**
 * `dims` as a frozen array the caller cannot change later: `dims` itself when it is already
 * frozen (every Pol array's and Undef's dims are), else a frozen copy. For backends that keep
 * dims on the arrays they make. A loop rather than `slice()`, because V8 copies frozen arrays
 * through a slow path.
 *
 * @example
 * ```ts
 * import { frozenDims } from '@pol/core/backend';
 * const dims = frozenDims([2, 3]);
 * console.log(Object.isFrozen(dims), frozenDims(dims) === dims); // true true
 * ```
 */
export function frozenDims(dims: readonly number[]): readonly number[] {
  if (Object.isFrozen(dims)) return dims;
  const copy: number[] = [];
  for (let i = 0; i < dims.length; i++) copy.push(dims[i] as number);
  return Object.freeze(copy);
}

// The intern table: a trie keyed by one dim per level, so that a lookup walks the caller's dims
// with one Map read per dim and allocates nothing. `dims` on a node is the canonical array for the
// path that leads to it (`[]` at the root).
interface InternNode {
  dims: readonly number[] | undefined;
  next: Map<number, InternNode> | undefined;
}

const internRoot: InternNode = { dims: Object.freeze([]), next: undefined };
let internedCount = 1;

// How many distinct shapes internDims keeps. Past it, new shapes get a frozen copy that is not
// kept, so a program that sweeps through millions of sizes cannot grow the table without end.
export const internLimit = 65_536;

/**
 * A frozen array equal to `dims`, shared by every caller that asks for equal dims: the first call
 * for a shape keeps it (`dims` itself when it is already frozen, else a frozen copy), and every
 * later call returns that same array without copying anything. Backends put it on the arrays they
 * make, so that a steady loop's carves share their dims and a dims compare can start with `===`.
 *
 * The table holds up to 65,536 shapes; past that, a new shape gets a fresh frozen
 * copy, so identity is a fast path, never the only test: compare with {@link sameDims}.
 *
 * @throws {InvalidShapeError} when `dims` is not an array of non-negative safe integers (checked
 * the first time a shape is seen; a repeat is already known to be valid).
 * @example
 * ```ts
 * import { internDims } from '@pol/core/backend';
 * const a = internDims([2, 3]);
 * const b = internDims([2, 3]); // a repeat: no copy
 * console.log(a === b, Object.isFrozen(a), a); // true true [ 2, 3 ]
 * ```
 */
export function internDims(dims: readonly number[]): readonly number[] {
  if (!Array.isArray(dims)) return internMiss(dims);
  let node = internRoot;
  for (let i = 0; i < dims.length; i++) {
    const next = node.next?.get(dims[i] as number);
    if (next === undefined) return internMiss(dims);
    node = next;
  }
  return node.dims ?? internMiss(dims);
}

// The dims internDim handed out last for each n modulo `recentSlots`, and their n (-1: none): a
// loop that asks for a few sizes again and again reads them here, without the Map lookup of the
// table's first level, which was most of what `alloc(space, dtype, n)` added to the space's own
// alloc on a steady carve.
const recentSlots = 64;
const recentSizes: number[] = new Array<number>(recentSlots).fill(-1);
const recentDims: (readonly number[])[] = new Array<readonly number[]>(recentSlots).fill(internRoot.dims as readonly number[]);

/**
 * `internDims([n])` without an array to pass: the interned dims of a 1-D array of `n` elements,
 * for `alloc(space, dtype, n)` and for a space's `[allocLengthKey]` (which gets a length, and may
 * need dims).
 *
 * @throws {InvalidShapeError} when `n` is not a non-negative safe integer.
 * @example
 * ```ts
 * import { internDim, internDims } from '@pol/core/backend';
 * console.log(internDim(8) === internDims([8])); // true
 * ```
 */
export function internDim(n: number): readonly number[] {
  // The recent hit here, the rest apart: inlined into alloc's loop with the space's own carve, a
  // larger internDim left V8's inlining budget short of the carve's hit path. An empty slot holds
  // -1, which no valid n is: `n >= 0` keeps it from matching.
  const slot = n & (recentSlots - 1);
  if (recentSizes[slot] === n && n >= 0) return recentDims[slot] as readonly number[];
  return internDimSlow(n, slot);
}

function internDimSlow(n: number, slot: number): readonly number[] {
  const dims = internRoot.next?.get(n)?.dims ?? internMiss([n]);
  recentSizes[slot] = n;
  recentDims[slot] = dims;
  return dims;
}

// Only valid dims ever enter the table, so a walk that finds a node has matched valid numbers.
function internMiss(dims: readonly number[]): readonly number[] {
  elementCount(dims);
  if (internedCount >= internLimit) return frozenDims(dims);
  let node = internRoot;
  for (let i = 0; i < dims.length; i++) {
    const d = dims[i] as number;
    node.next ??= new Map();
    let next = node.next.get(d);
    if (next === undefined) {
      next = { dims: undefined, next: undefined };
      node.next.set(d, next);
    }
    node = next;
  }
  if (node.dims === undefined) {
    node.dims = frozenDims(dims);
    internedCount++;
  }
  return node.dims;
}

/**
 * Whether two dims arrays are equal, element by element, without allocating.
 *
 * @example
 * ```ts
 * import { sameDims } from '@pol/core/backend';
 * console.log(sameDims([2, 3], [2, 3]), sameDims([2, 3], [3, 2]), sameDims([], [])); // true false true
 * ```
 */
export function sameDims(a: readonly number[], b: readonly number[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
