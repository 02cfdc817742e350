/**
 * `pointer(array, memory)`: where a host array's bytes are in a WebAssembly memory, as the byte
 * offset a WASM export takes.
 *
 * @module
 */

import { type DType, type HostArray, InvalidArgumentError } from '@pol/core';
import { describeValue } from '@pol/core/backend';
import { ForeignMemoryError } from './errors.js';
import { offsetInMemory } from './host.js';
import type { WasmMemory } from './slab.js';

/**
 * The absolute byte offset of `array`'s first element in `memory`: the pointer a WebAssembly
 * export takes for it. An array carved from an arena over a region of the memory keeps its offset
 * across `memory.grow` (its `data` re-derives a view over the new buffer at the same offset), so a
 * pointer taken once stays right; only `TypedArray`s taken from `.data` before a grow go stale.
 *
 * @throws {ForeignMemoryError} when `array`'s bytes are not in `memory` (a `Similar` array, or one
 * from an arena over another memory or buffer): an export given its offset would read and write
 * other bytes of the module's heap.
 * @throws {InvalidArgumentError} when `array` is not a host array.
 * @throws {StaleArrayError} for an array of a checked arena that has died.
 * @example
 * ```ts
 * import { Arena, pointer } from '@pol/arena';
 * import { alloc } from '@pol/core';
 * const memory = new WebAssembly.Memory({ initial: 1, maximum: 2 });
 * const arena = new Arena(memory, { byteOffset: 4096, byteLength: 8192 });
 * const x = alloc(arena, 'float32', 4);
 * console.log(pointer(x, memory)); // 4096
 * memory.grow(1);
 * console.log(pointer(x, memory), x.data.length); // 4096 4
 * ```
 */
export function pointer<D extends DType>(array: HostArray<D>, memory: WasmMemory): number {
  // The arrays of an arena over the memory answer without a read of memory.buffer.
  const known = offsetInMemory(array, memory);
  if (known !== undefined && known >= 0) return known;
  const data = (array as { data?: unknown } | null | undefined)?.data;
  if (!ArrayBuffer.isView(data)) {
    throw new InvalidArgumentError(
      `pointer(array, memory) needs a host array (an object with dtype, dims and a TypedArray data), got ${describeValue(array)}. ` +
        'Pass an array carved from an arena over the memory.',
    );
  }
  const buffer = (memory as { buffer?: unknown } | null | undefined)?.buffer;
  if (data.buffer !== buffer) {
    throw new ForeignMemoryError(
      `pointer(array, memory): ${describeValue(array)} is not in this memory: its bytes are in ` +
        (buffer === undefined ? 'some buffer, and the second argument is no WebAssembly memory' : 'another buffer') +
        ', so the offset would name other bytes of the module. Carve the array from an arena over a region of the memory ' +
        '(new Arena(memory, { byteOffset, byteLength })), and copy data in with array.data.set(values).',
    );
  }
  return data.byteOffset;
}
