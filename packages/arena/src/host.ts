import { type DType, type DTypeInfo, dtypeInfo, type HostArray, type TypedArrayOf } from '@pol/core';
import { type ArrayFamily, familyKey, hostFamily, makeHostArray, shapeText } from '@pol/core/backend';
import { InvalidSlabError } from './errors.js';
import type { WasmMemory } from './slab.js';
import type { ArrayLife, SlabStorage } from './types.js';

/**
 * The byte checked mode writes over released integer memory: 0xA5 reads as -91 (int8), 165
 * (uint8), 0xA5A5 (int16/uint16), 0xA5A5A5A5 (int32/uint32) and so on; floats get NaN instead.
 *
 * @example
 * ```ts
 * import { Arena } from '@pol/arena';
 * import { POISON_BYTE } from '@pol/arena/backend';
 * import { alloc, scratchspace } from '@pol/core';
 * const arena = new Arena(new ArrayBuffer(256), { checked: true });
 * const kept = scratchspace(arena, (frame) => alloc(frame, 'uint8', 4).data); // the raw view escapes
 * console.log(kept[0] === POISON_BYTE); // true: released bytes read as the pattern
 * ```
 */
export const POISON_BYTE = 0xa5;

// The last dtype viewed and its TypedArray class: a run of carves of one dtype looks it up once.
// '' before the first, so that the compare only ever sees strings (see CarveSize.dtype).
let lastDtype = '';
let LastTypedArray: DTypeInfo['TypedArray'] | undefined;

function view<D extends DType>(buffer: ArrayBufferLike, byteOffset: number, dtype: D, dims: readonly number[]): TypedArrayOf<D> {
  let TypedArray = LastTypedArray;
  if (dtype !== lastDtype || TypedArray === undefined) {
    TypedArray = dtypeInfo(dtype).TypedArray;
    LastTypedArray = TypedArray;
    lastDtype = dtype;
  }
  return viewOver(TypedArray, buffer, byteOffset, count(dims)) as TypedArrayOf<D>;
}

/**
 * A view, or a Pol error for a buffer that was detached after the arena was made (transferred, or
 * the buffer of a WebAssembly memory that has grown since), where the engine throws a bare TypeError.
 */
export function viewOver(TypedArray: DTypeInfo['TypedArray'], buffer: ArrayBufferLike, byteOffset: number, length: number) {
  try {
    return construct(TypedArray, buffer, byteOffset, length);
  } catch (error) {
    if (isDetached(buffer)) throw detachedLater(error);
    throw error;
  }
}

// `new TypedArray(buffer, byteOffset, length)` with the class a constant at each site: V8 builds a
// view of a class it knows inline, and one of a class read from a variable through its generic
// construct path, which took about a third of a first carve (measured). The classes of the
// dtypes the arena carves most first; any other (Float16Array, the 64-bit ones) generically.
function construct(TypedArray: DTypeInfo['TypedArray'], buffer: ArrayBufferLike, byteOffset: number, length: number) {
  switch (TypedArray) {
    case Float32Array:
      return new Float32Array(buffer, byteOffset, length);
    case Float64Array:
      return new Float64Array(buffer, byteOffset, length);
    case Int32Array:
      return new Int32Array(buffer, byteOffset, length);
    case Uint32Array:
      return new Uint32Array(buffer, byteOffset, length);
    case Uint8Array:
      return new Uint8Array(buffer, byteOffset, length);
    case Int8Array:
      return new Int8Array(buffer, byteOffset, length);
    case Uint16Array:
      return new Uint16Array(buffer, byteOffset, length);
    case Int16Array:
      return new Int16Array(buffer, byteOffset, length);
  }
  return new TypedArray(buffer, byteOffset, length);
}

function detachedLater(cause: unknown): InvalidSlabError {
  const error = new InvalidSlabError(
    "This arena's slab has been detached since the arena was made: it was transferred, or it is the buffer of a " +
      "WebAssembly memory that has grown (a grow detaches the old buffer and every view over it). For a module's memory, " +
      'make the arena over the memory itself, new Arena(memory, { byteOffset, byteLength }): its arrays follow every grow.',
  );
  (error as { cause?: unknown }).cause = cause;
  return error;
}

// prod(dims), for dims the arena or carve() has validated (a storage is only ever called with those):
// no checks, and a zero dim ends the product before huge ones could overflow it.
function count(dims: readonly number[]): number {
  let n = 1;
  for (let i = 0; i < dims.length; i++) {
    const d = dims[i] as number;
    if (d === 0) return 0;
    n *= d;
  }
  return n;
}

function poisonBytes(buffer: ArrayBufferLike, byteOffset: number, byteLength: number, dtype: DType | undefined): void {
  if (byteLength === 0) return;
  const info = dtype === undefined ? undefined : dtypeInfo(dtype);
  if (info?.float === true) {
    (new info.TypedArray(buffer, byteOffset, byteLength / info.byteSize) as Float64Array).fill(Number.NaN);
  } else {
    new Uint8Array(buffer, byteOffset, byteLength).fill(POISON_BYTE);
  }
}

/**
 * A host array over a WebAssembly memory. `memory.grow` detaches the memory's old ArrayBuffer and
 * every view over it, so `data` is re-derived from the current `memory.buffer` whenever that has
 * changed: the array stays valid across grows. A view of at least one element that is not detached
 * still has its length, and only a grow detaches a memory's buffer, so that is checked first: one
 * length read, where `memory.buffer` costs tens of nanoseconds in V8. A shared memory's grow
 * detaches nothing (its old views still see the same bytes), so over one every access compares
 * buffers, and `data.buffer` is always the memory's current one.
 */
class WasmHostArray<D extends DType> implements HostArray<D> {
  // How messages name it: a static getter keeps `instanceof` fast (CONTRIBUTING.md, "Class names").
  static get name(): string {
    return 'HostArray';
  }
  declare readonly [familyKey]: ArrayFamily;
  readonly #memory: WasmMemory;
  readonly #byteOffset: number;
  // Invariant: #view is a view over #buffer, and #buffer is the memory's buffer as of the last access.
  #buffer: ArrayBufferLike;
  #view: TypedArrayOf<D>;
  readonly #shared: boolean;

  constructor(
    readonly dtype: D,
    readonly dims: readonly number[],
    memory: WasmMemory,
    byteOffset: number,
  ) {
    this.#memory = memory;
    this.#byteOffset = byteOffset;
    this.#buffer = memory.buffer;
    this.#view = view(this.#buffer, byteOffset, dtype, dims);
    this.#shared = !(this.#buffer instanceof ArrayBuffer);
  }

  get data(): TypedArrayOf<D> {
    const current = this.#view;
    if (current.length !== 0 && !this.#shared) return current;
    return this.#rederived();
  }

  // Empty, or detached by a grow: a view over the memory's buffer now.
  #rederived(): TypedArrayOf<D> {
    const buffer = this.#memory.buffer;
    if (buffer !== this.#buffer) {
      this.#view = view(buffer, this.#byteOffset, this.dtype, this.dims);
      this.#buffer = buffer;
    }
    return this.#view;
  }

  toString(): string {
    return `HostArray(${shapeText(this.dtype, this.dims)} in WebAssembly.Memory)`;
  }

  /**
   * `array`'s byte offset in `memory` when it is an array of this class: -1 when it is over another
   * memory, undefined when it is of another class. Reads no buffer, so it costs a WASM call none of
   * the `memory.buffer` reads (tens of nanoseconds each) that `data` makes.
   */
  static offsetIn(array: unknown, memory: unknown): number | undefined {
    if (!(array instanceof WasmHostArray)) return undefined;
    return array.#memory === memory ? array.#byteOffset : -1;
  }
}

Object.defineProperty(WasmHostArray.prototype, familyKey, { value: hostFamily });

/**
 * A host array carved by a checked arena: every read of `data` first asks the carve's life, so an
 * array whose frame closed (or whose arena was reset) throws instead of aliasing reused bytes.
 * A different class from the unchecked arrays, so unchecked access never tests a flag.
 */
class CheckedHostArray<D extends DType> implements HostArray<D> {
  // How messages name it: a static getter keeps `instanceof` fast (CONTRIBUTING.md, "Class names").
  static get name(): string {
    return 'HostArray';
  }
  declare readonly [familyKey]: ArrayFamily;
  readonly #source: HostArray<D>;
  readonly #life: ArrayLife;

  constructor(source: HostArray<D>, life: ArrayLife) {
    this.#source = source;
    this.#life = life;
  }

  get dtype(): D {
    return this.#source.dtype;
  }

  get dims(): readonly number[] {
    return this.#source.dims;
  }

  get data(): TypedArrayOf<D> {
    this.#life.assertAlive();
    return this.#source.data;
  }

  toString(): string {
    return `HostArray(${shapeText(this.dtype, this.dims)}, checked, ${this.#life.alive ? 'live' : 'dead'})`;
  }

  /** The array a checked array guards, once it has checked it is alive; undefined for any other array. */
  static alive(array: unknown): HostArray | undefined {
    if (!(array instanceof CheckedHostArray)) return undefined;
    array.#life.assertAlive();
    return array.#source;
  }
}

Object.defineProperty(CheckedHostArray.prototype, familyKey, { value: hostFamily });

/**
 * Where a host array of this module (checked or not) lies in `memory`, without reading a buffer:
 * its byte offset, -1 for an array over another memory, or undefined for an array of another
 * kind (which the caller checks by its `data`).
 *
 * @throws {StaleArrayError} for a checked array that has died.
 */
export function offsetInMemory(array: unknown, memory: unknown): number | undefined {
  return WasmHostArray.offsetIn(CheckedHostArray.alive(array) ?? array, memory);
}

const WasmMemoryClass = (globalThis as { WebAssembly?: { Memory?: abstract new (...args: never[]) => unknown } }).WebAssembly
  ?.Memory;
const SharedBufferClass = (globalThis as { SharedArrayBuffer?: abstract new (...args: never[]) => unknown }).SharedArrayBuffer;

// The byteLength getters of the two buffer classes: each works on a buffer of its class from any
// realm and throws for anything else (it reads the buffer's internal slot), so a call of one is a
// brand check that neither a prototype nor a Symbol.toStringTag can fake.
const bufferByteLength = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, 'byteLength')?.get as (this: unknown) => number;
const sharedByteLength =
  SharedBufferClass === undefined
    ? undefined
    : (Object.getOwnPropertyDescriptor(SharedBufferClass.prototype, 'byteLength')?.get as (this: unknown) => number);

function hasSlot(getter: (this: unknown) => number, x: unknown): boolean {
  try {
    getter.call(x);
    return true;
  } catch {
    return false;
  }
}

// Whether `x` may be a buffer of another realm (a vm context, an iframe), which instanceof does not
// recognise: an object that is none of this realm's buffers, views or memories. Only such an
// object is brand-checked without an instanceof first, because a brand check that fails throws,
// and a thrown error costs microseconds: this realm's slabs each fail at most instanceof tests.
function mayBeForeignBuffer(x: unknown): boolean {
  return (
    typeof x === 'object' &&
    x !== null &&
    !(x instanceof ArrayBuffer) &&
    !(SharedBufferClass !== undefined && x instanceof SharedBufferClass) &&
    !ArrayBuffer.isView(x) &&
    !(WasmMemoryClass !== undefined && x instanceof WasmMemoryClass)
  );
}

/** Whether `x` is an ArrayBuffer, of this realm or another. */
function isArrayBuffer(x: unknown): x is ArrayBuffer {
  return (x instanceof ArrayBuffer || mayBeForeignBuffer(x)) && hasSlot(bufferByteLength, x);
}

/** Whether `x` is a SharedArrayBuffer, of this realm or another. */
export function isSharedArrayBuffer(x: unknown): x is SharedArrayBuffer {
  return (
    sharedByteLength !== undefined &&
    ((SharedBufferClass !== undefined && x instanceof SharedBufferClass) || mayBeForeignBuffer(x)) &&
    hasSlot(sharedByteLength, x)
  );
}

// A detached ArrayBuffer reads as zero bytes long, and constructing any view over it throws.
function isDetached(buffer: ArrayBufferLike): boolean {
  if (buffer.byteLength !== 0) return false;
  try {
    new Uint8Array(buffer, 0, 0);
    return false;
  } catch {
    return true;
  }
}

function checkBuffer(buffer: ArrayBufferLike, what: string): void {
  if ((buffer as { resizable?: unknown }).resizable === true) {
    throw new InvalidSlabError(
      `${what} is resizable: a resize that shrinks it would cut carved arrays short, and an arena never grows. ` +
        'Pass a fixed-length ArrayBuffer (new ArrayBuffer(n) without maxByteLength).',
    );
  }
  if (isDetached(buffer)) {
    throw new InvalidSlabError(
      `${what} is detached (transferred away), so it has no bytes to carve. Pass a live buffer, and do not transfer a slab while an arena uses it.`,
    );
  }
}

function hostCarve<D extends DType>(
  buffer: ArrayBufferLike,
  byteOffset: number,
  dtype: D,
  dims: readonly number[],
): HostArray<D> {
  return makeHostArray(dtype, dims, view(buffer, byteOffset, dtype, dims));
}

/** ArrayBuffer slabs: native TypedArray views. */
export const arrayBufferStorage: SlabStorage<ArrayBuffer, 'host'> = Object.freeze({
  name: 'ArrayBuffer',
  kind: 'host',
  residency: 'host',
  matches: (slab: unknown): slab is ArrayBuffer => isArrayBuffer(slab),
  byteLength: (slab: ArrayBuffer) => slab.byteLength,
  checkSlab: (slab: ArrayBuffer) => checkBuffer(slab, 'This ArrayBuffer'),
  carve: <D extends DType>(slab: ArrayBuffer, offset: number, dtype: D, dims: readonly number[]) =>
    hostCarve(slab, offset, dtype, dims),
  carveChecked: <D extends DType>(slab: ArrayBuffer, offset: number, dtype: D, dims: readonly number[], life: ArrayLife) =>
    new CheckedHostArray(hostCarve(slab, offset, dtype, dims), life),
  poison: (slab: ArrayBuffer, offset: number, byteLength: number, dtype?: DType) => poisonBytes(slab, offset, byteLength, dtype),
});

/** SharedArrayBuffer slabs: native TypedArray views. A growable one serves the length it had when the arena was made. */
export const sharedArrayBufferStorage: SlabStorage<SharedArrayBuffer, 'host'> = Object.freeze({
  name: 'SharedArrayBuffer',
  kind: 'host',
  residency: 'host',
  matches: (slab: unknown): slab is SharedArrayBuffer => isSharedArrayBuffer(slab),
  byteLength: (slab: SharedArrayBuffer) => slab.byteLength,
  carve: <D extends DType>(slab: SharedArrayBuffer, offset: number, dtype: D, dims: readonly number[]) =>
    hostCarve(slab, offset, dtype, dims),
  carveChecked: <D extends DType>(slab: SharedArrayBuffer, offset: number, dtype: D, dims: readonly number[], life: ArrayLife) =>
    new CheckedHostArray(hostCarve(slab, offset, dtype, dims), life),
  poison: (slab: SharedArrayBuffer, offset: number, byteLength: number, dtype?: DType) =>
    poisonBytes(slab, offset, byteLength, dtype),
});

/**
 * Uint8Array slabs (and Node.js Buffers, which are Uint8Arrays): views over the same buffer,
 * starting at the slab's own `byteOffset`.
 */
export const uint8ArrayStorage: SlabStorage<Uint8Array, 'host'> = Object.freeze({
  name: 'Uint8Array (or Node.js Buffer)',
  kind: 'host',
  residency: 'host',
  matches: (slab: unknown): slab is Uint8Array =>
    ArrayBuffer.isView(slab) && (slab as { [Symbol.toStringTag]?: unknown })[Symbol.toStringTag] === 'Uint8Array',
  byteLength: (slab: Uint8Array) => slab.byteLength,
  byteOffset: (slab: Uint8Array) => slab.byteOffset,
  checkSlab: (slab: Uint8Array) => checkBuffer(slab.buffer, "This Uint8Array's buffer"),
  carve: <D extends DType>(slab: Uint8Array, offset: number, dtype: D, dims: readonly number[]) =>
    hostCarve(slab.buffer, slab.byteOffset + offset, dtype, dims),
  carveChecked: <D extends DType>(slab: Uint8Array, offset: number, dtype: D, dims: readonly number[], life: ArrayLife) =>
    new CheckedHostArray(hostCarve(slab.buffer, slab.byteOffset + offset, dtype, dims), life),
  poison: (slab: Uint8Array, offset: number, byteLength: number, dtype?: DType) =>
    poisonBytes(slab.buffer, slab.byteOffset + offset, byteLength, dtype),
});

/**
 * WebAssembly.Memory slabs: arrays whose `data` follows the memory's current buffer, so a
 * `memory.grow` (which detaches the old one) never leaves a carved array over detached memory. The
 * arena's capacity is the memory's size when the arena was made; growing the memory does not grow it.
 */
export const wasmMemoryStorage: SlabStorage<WasmMemory, 'host'> = Object.freeze({
  name: 'WebAssembly.Memory',
  kind: 'host',
  residency: 'host',
  matches: (slab: unknown): slab is WasmMemory => WasmMemoryClass !== undefined && slab instanceof WasmMemoryClass,
  byteLength: (slab: WasmMemory) => slab.buffer.byteLength,
  carve: <D extends DType>(slab: WasmMemory, offset: number, dtype: D, dims: readonly number[]): HostArray<D> =>
    new WasmHostArray(dtype, dims, slab, offset),
  carveChecked: <D extends DType>(slab: WasmMemory, offset: number, dtype: D, dims: readonly number[], life: ArrayLife) =>
    new CheckedHostArray(new WasmHostArray(dtype, dims, slab, offset), life),
  poison: (slab: WasmMemory, offset: number, byteLength: number, dtype?: DType) =>
    poisonBytes(slab.buffer, offset, byteLength, dtype),
});

/**
 * The ArrayBuffer (or SharedArrayBuffer) that a built-in host storage makes its views over, for an
 * arena over `slab`: the slab itself, or a Uint8Array's (or Node.js Buffer's) buffer, which is the
 * same object for the view's whole life. Undefined for any other storage (a copy of a built-in with
 * its own `carve` included: only these very objects qualify), which carves through its `carve`.
 *
 * An arena with this buffer makes the view at absolute byte offset `o` itself, as
 * `viewOver(TypedArray, buffer, o, count)` (told the class and the count it already knows), and its
 * cache entry is the host array over it (see CacheEntry), where the storage's `carve` would wrap the
 * view with `makeHostArray`.
 */
export function viewBufferOf(storage: unknown, slab: unknown): ArrayBufferLike | undefined {
  if (storage === arrayBufferStorage || storage === sharedArrayBufferStorage) return slab as ArrayBufferLike;
  if (storage === uint8ArrayStorage) return (slab as Uint8Array).buffer;
  return undefined;
}
