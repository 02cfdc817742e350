/**
 * The bind-group cache: one GPUBindGroup per (layout, [(buffer, offset, size)]). An arena that
 * repeats its allocation sequence hands out the same ranges every step, so a steady loop finds
 * every bind group here and creates none.
 *
 * @module
 */

import { InvalidArgumentError } from '@pol/core';
import { describeValue } from '@pol/core/backend';
import { isPlainGpuArray } from './array.js';
import { type BufferOwner, ownerOf } from './buffers.js';
import { assertAlive, assertDevice, deviceName, knownState } from './device.js';
import { errorText, GpuAllocationError } from './errors.js';
import { stateOf } from './instrument.js';

// A trie over the bindings: layout → (buffer → offset → size → node) per binding, in binding order.
// A lookup walks WeakMap/Map gets only, so a hit allocates nothing. The same edge is also kept
// under each unchecked GpuArray that took it (its range never changes), so a steady step, which
// binds the same arrays, pays one WeakMap get per binding instead of three gets and an owner's.
class Node {
  group: GPUBindGroup | undefined;
  device: GPUDevice | undefined;
  next: WeakMap<GPUBuffer, Map<number, Map<number, Node>>> | undefined;
  byArray: WeakMap<object, Node> | undefined;
  /** The owners of the group's buffers (a leaf's): a hit on a released one is a miss, which refuses it. */
  owners: readonly (BufferOwner | undefined)[] | undefined;
}

/** Keep the edge from `node` to `next` under the unchecked GpuArray `array` too. */
function remember(node: Node, array: object, next: Node): void {
  node.byArray ??= new WeakMap();
  node.byArray.set(array, next);
}

/** Whether every buffer of a cached group is still there. */
function alive(owners: readonly (BufferOwner | undefined)[] | undefined): boolean {
  if (owners === undefined) return true;
  for (let i = 0; i < owners.length; i++) if (owners[i]?.released !== undefined) return false;
  return true;
}

const roots = new WeakMap<GPUBindGroupLayout, Node>();

/**
 * The bind group of `layout` binding `bindings[i]` at binding number `i`, made once and cached:
 * later calls with the same layout and the same (buffer, offset, size) of every binding return the
 * same GPUBindGroup without creating anything or allocating. A GpuArray is a binding, so
 * `bindGroup(device, layout, [x, w, y])` is the usual call. The layout's bindings must be buffers
 * numbered 0, 1, 2, … (what a compute kernel over arrays has).
 *
 * The cache holds each group as long as its layout and buffers are alive (weakly otherwise); it
 * has no size limit, which a bump arena never needs: it hands out the same ranges every step. The
 * layout is keyed by identity; pipelines made after the device met Pol (see `instrument`) return
 * the same object from `getBindGroupLayout(i)` on every call, so asking for it each step is fine.
 * Bindings of another device, or of a released array, are refused before anything is created.
 *
 * @throws {InvalidArgumentError} for a bad device, layout or binding (naming its index), a
 * binding whose buffer was released (a destroyed slab, a closed Similar frame), or one of another
 * device.
 * @throws {StaleArrayError} (`@pol/arena`) for a released array of a checked arena.
 * @throws {DeviceLostError} when the device is lost.
 * @throws {GpuAllocationError} when `device.createBindGroup` throws.
 * @example
 * ```ts
 * import { alloc } from '@pol/core';
 * import { bindGroup, deviceArena } from '@pol/webgpu';
 * const arena = deviceArena(device, 1 << 16); // the device meets Pol before its pipelines are made
 * const module = device.createShaderModule({
 *   code: `@group(0) @binding(0) var<storage, read_write> x: array<f32>;
 *   @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3u) {
 *     if (id.x < arrayLength(&x)) { x[id.x] *= 2.0; }
 *   }`,
 * });
 * const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
 * const layout = pipeline.getBindGroupLayout(0);
 * const groups = new Set<GPUBindGroup>();
 * for (let step = 0; step < 1000; step++) {
 *   const x = alloc(arena, 'float32', [256]); // the same range every step...
 *   groups.add(bindGroup(device, layout, [x])); // ...so the same group: created once, then found
 *   arena.reset();
 * }
 * console.log(groups.size); // 1
 * ```
 */
export function bindGroup(device: GPUDevice, layout: GPUBindGroupLayout, bindings: readonly GPUBufferBinding[]): GPUBindGroup {
  let node = Array.isArray(bindings) ? roots.get(layout) : undefined;
  for (let i = 0; node !== undefined && i < bindings.length; i++) {
    const b = bindings[i];
    if (typeof b !== 'object' || b === null) {
      node = undefined;
      break;
    }
    const plain = isPlainGpuArray(b);
    let next = plain ? node.byArray?.get(b) : undefined;
    if (next === undefined) {
      // A checked array's `buffer` throws StaleArrayError here, for a released one.
      next = node.next
        ?.get(b.buffer)
        ?.get(b.offset ?? 0)
        ?.get(b.size ?? -1);
      if (next !== undefined && plain) remember(node, b, next);
    }
    node = next;
  }
  if (node?.group !== undefined && node.device === device && alive(node.owners) && knownState(device)?.lost === undefined) {
    return node.group;
  }
  return miss(device, layout, bindings);
}

function miss(device: GPUDevice, layout: GPUBindGroupLayout, bindings: readonly GPUBufferBinding[]): GPUBindGroup {
  assertDevice(device, 'bindGroup(device, layout, bindings)');
  if (typeof layout !== 'object' || layout === null) {
    throw new InvalidArgumentError(
      `bindGroup(device, layout, bindings) needs a GPUBindGroupLayout (pipeline.getBindGroupLayout(0), or device.createBindGroupLayout(...)), got ${describeValue(layout)}.`,
    );
  }
  if (!Array.isArray(bindings)) {
    throw new InvalidArgumentError(
      `bindGroup(device, layout, bindings) needs an array of buffer bindings (GpuArrays, or { buffer, offset, size }), got ${describeValue(bindings)}.`,
    );
  }
  for (let i = 0; i < bindings.length; i++) checkBinding(device, bindings[i], i);
  const state = stateOf(device);
  assertAlive(state, 'create a bind group');
  const entries = bindings.map((resource, binding) => ({ binding, resource }));
  const descriptor: GPUBindGroupDescriptor = { layout, entries, label: 'pol bind group' };
  let group: GPUBindGroup;
  try {
    group = device.createBindGroup(descriptor);
  } catch (cause) {
    throw new GpuAllocationError(`device.createBindGroup failed on ${deviceName(device)}: ${errorText(cause)}.`, { cause });
  }
  let node = roots.get(layout);
  if (node === undefined) {
    node = new Node();
    roots.set(layout, node);
  }
  for (const b of bindings) {
    const from: Node = node;
    node.next ??= new WeakMap();
    let offsets = node.next.get(b.buffer);
    if (offsets === undefined) {
      offsets = new Map();
      node.next.set(b.buffer, offsets);
    }
    const offset = b.offset ?? 0;
    let sizes = offsets.get(offset);
    if (sizes === undefined) {
      sizes = new Map();
      offsets.set(offset, sizes);
    }
    const size = b.size ?? -1;
    let next = sizes.get(size);
    if (next === undefined) {
      next = new Node();
      sizes.set(size, next);
    }
    if (isPlainGpuArray(b)) remember(from, b, next);
    node = next;
  }
  node.group = group;
  node.device = device;
  node.owners = bindings.map((b) => ownerOf(b.buffer));
  return group;
}

function checkBinding(device: GPUDevice, b: unknown, i: number): void {
  const bad = (why: string) =>
    new InvalidArgumentError(
      `bindGroup: bindings[${i}] ${why}. Each binding is a GpuArray, or a GPUBufferBinding { buffer, offset?, size? }.`,
    );
  if (typeof b !== 'object' || b === null) throw bad(`is ${describeValue(b)}`);
  const { buffer, offset, size } = b as { buffer?: unknown; offset?: unknown; size?: unknown };
  if (typeof buffer !== 'object' || buffer === null) throw bad(`has no buffer (got ${describeValue(buffer)})`);
  if (offset !== undefined && (typeof offset !== 'number' || !Number.isSafeInteger(offset) || offset < 0)) {
    throw bad(`has offset ${describeValue(offset)}; an offset is a non-negative whole number of bytes`);
  }
  if (size !== undefined && (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 1)) {
    throw bad(`has size ${describeValue(size)}; a binding size is a positive whole number of bytes`);
  }
  const owner = ownerOf(buffer as GPUBuffer);
  if (owner === undefined) return;
  if (owner.device !== device) {
    throw new InvalidArgumentError(
      `bindGroup(device, layout, bindings): bindings[${i}] is ${describeValue(b)} of ${owner.name}, which belongs to ${deviceName(owner.device)}, ` +
        `not to ${deviceName(device)}: a bind group binds buffers of its own device only. Allocate it from an arena on ${deviceName(device)}.`,
    );
  }
  if (owner.released !== undefined) throw bad(`binds ${owner.name}, which is gone: ${owner.released}`);
}
