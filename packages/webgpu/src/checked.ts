/**
 * The checked-mode hook: before a compute dispatch reaches the device, compare the buffer ranges
 * its bind groups bind, and refuse what WebGPU would reject later, asynchronously (one buffer
 * bound writable and read-only, two overlapping writable ranges); and refuse a copy within one
 * buffer at `copyBufferToBuffer`.
 *
 * The hook is on for a device from the first checked arena over one of its slabs (`startChecking`).
 * The owner then gives each command encoder the device makes an observer from here, and so does
 * `startChecking` to the last encoders made before (the device state's ring), which were maybe
 * still open; a compute pass they had begun already stays unchecked. The observer watches
 * `copyBufferToBuffer` and `beginComputePass`, and each compute pass remembers the pipeline and
 * bind groups set and checks them at `dispatchWorkgroups(Indirect)`. That costs a few closures per
 * encoder and pass, which is why it is reserved for checked mode.
 *
 * @module
 */

import { shapeText } from '@pol/core/backend';
import { isGpuArray } from './array.js';
import { bufferName, ownerOf } from './buffers.js';
import { observe } from './commands.js';
import { type DeviceState, deviceName } from './device.js';
import { UsageConflictError } from './errors.js';
import type { BufferBindingKind } from './flags.js';
import type { Args, CommandObserver } from './hooks.js';
import { bindGroupInfo, layoutOf, pipelineGroupCount } from './metadata.js';
import { isDeviceSlab } from './slab.js';

/** A bind group as set on a pass: the group and its dynamic offsets. */
export interface SetGroup {
  readonly group: GPUBindGroup;
  readonly offsets: readonly number[] | undefined;
}

interface Range {
  readonly buffer: GPUBuffer;
  readonly offset: number;
  readonly size: number;
  readonly kind: BufferBindingKind | 'indirect';
  readonly where: string;
  readonly resource: unknown;
}

const encoderMethods: ReadonlySet<string> = new Set(['copyBufferToBuffer', 'beginComputePass']);
const passMethods: ReadonlySet<string> = new Set([
  'setPipeline',
  'setBindGroup',
  'dispatchWorkgroups',
  'dispatchWorkgroupsIndirect',
]);

/**
 * Switch checked mode on for `state`'s device, for good: every encoder it makes from now on is
 * checked, and so are the last ones it made before (any still open), from their next pass or copy.
 */
export function startChecking(state: DeviceState): void {
  if (state.checked) return;
  state.checked = true;
  const encoders = state.unchecked.encoders;
  for (let i = 0; i < encoders.length; i++) {
    const encoder = encoders[i];
    encoders[i] = undefined;
    if (encoder !== undefined) observe(encoder, [checkedEncoder(state)]);
  }
}

/** The checked-mode observer of one command encoder of `state`'s device. */
export function checkedEncoder(state: DeviceState): CommandObserver {
  return {
    methods: encoderMethods,
    before(name, args) {
      if (name === 'copyBufferToBuffer') checkCopy(state, args);
    },
    pass: () => checkedPass(state),
  };
}

function checkedPass(state: DeviceState): CommandObserver {
  let pipeline: GPUComputePipeline | undefined;
  const groups: (SetGroup | undefined)[] = [];
  return {
    methods: passMethods,
    before(name, args) {
      if (name === 'dispatchWorkgroups') checkDispatch(state, pipeline, groups, undefined);
      else if (name === 'dispatchWorkgroupsIndirect') {
        checkDispatch(state, pipeline, groups, { buffer: args[0] as GPUBuffer, offset: args[1] as number });
      }
    },
    after(name, args) {
      if (name === 'setPipeline') pipeline = args[0] as GPUComputePipeline;
      else if (name === 'setBindGroup') {
        const index = args[0] as number;
        const group = args[1] as GPUBindGroup | null;
        groups[index] = group === null || group === undefined ? undefined : { group, offsets: dynamicOffsets(args) };
      }
    },
  };
}

/** The range a `copyBufferToBuffer` call reads and writes, in both call forms. */
export interface CopyRange {
  readonly source: GPUBuffer;
  readonly sourceOffset: number;
  readonly destination: GPUBuffer;
  readonly destinationOffset: number;
  readonly size: number;
}

/** Read `copyBufferToBuffer(source, sourceOffset, destination, destinationOffset, size?)` or `(source, destination, size?)`. */
export function copyRange(args: Args): CopyRange {
  const long = typeof args[1] === 'number';
  const source = args[0] as GPUBuffer;
  const sourceOffset = long ? (args[1] as number) : 0;
  const given = long ? args[4] : args[2];
  return {
    source,
    sourceOffset,
    destination: (long ? args[2] : args[1]) as GPUBuffer,
    destinationOffset: long ? (args[3] as number) : 0,
    size: typeof given === 'number' ? given : source.size - sourceOffset,
  };
}

function checkCopy(state: DeviceState, args: Args): void {
  const { source, sourceOffset: from, destination, destinationOffset: to, size } = copyRange(args);
  if (source !== destination) return;
  throw new UsageConflictError(
    `A copy on ${deviceName(state.device)} reads and writes one buffer: copyBufferToBuffer from bytes [${from}, ${from + size}) ` +
      `to bytes [${to}, ${to + size}) of ${bufferName(source)}. WebGPU refuses a copy within one buffer, even between disjoint ranges, ` +
      'so two arrays of one slab cannot be copied into each other this way. Copy with a small compute kernel, or keep the two arrays in different slabs.',
  );
}

/** `setBindGroup`'s dynamic offsets, as an array of its own (both call forms). */
export function dynamicOffsets(args: Args): readonly number[] | undefined {
  const offsets = args[2];
  if (offsets === undefined || offsets === null) return undefined;
  if (offsets instanceof Uint32Array) {
    const start = typeof args[3] === 'number' ? args[3] : 0;
    const length = typeof args[4] === 'number' ? args[4] : offsets.length - start;
    return Array.from(offsets.subarray(start, start + length));
  }
  return Array.from(offsets as Iterable<number>);
}

/**
 * Throw {@link UsageConflictError} if the dispatch binds one buffer both writable and read-only,
 * or two overlapping writable ranges. Entries whose binding type Pol does not know are skipped.
 */
export function checkDispatch(
  state: DeviceState,
  pipeline: GPUComputePipeline | undefined,
  groups: readonly (SetGroup | undefined)[],
  indirect: { readonly buffer: GPUBuffer; readonly offset: number } | undefined,
): void {
  const ranges: Range[] = [];
  const count = pipeline === undefined ? undefined : pipelineGroupCount(pipeline);
  const n = count === undefined ? groups.length : Math.min(count, groups.length);
  for (let g = 0; g < n; g++) {
    const set = groups[g];
    if (set === undefined) continue;
    const info = bindGroupInfo(set.group);
    const layout = info === undefined ? undefined : layoutOf(info.layout);
    if (info === undefined || layout === undefined) continue;
    for (const entry of info.entries) {
      const kind = layout.kinds.get(entry.binding);
      if (kind === undefined) continue;
      const d = layout.dynamic.indexOf(entry.binding);
      const offset = entry.offset + (d >= 0 ? (set.offsets?.[d] ?? 0) : 0);
      ranges.push({
        buffer: entry.buffer,
        offset,
        size: entry.size,
        kind,
        where: `group ${g} binding ${entry.binding}`,
        resource: entry.resource,
      });
    }
  }
  if (indirect !== undefined) {
    ranges.push({ ...indirect, size: 12, kind: 'indirect', where: 'the indirect dispatch arguments', resource: undefined });
  }
  for (let i = 0; i < ranges.length; i++) {
    const r = ranges[i] as Range;
    if (r.kind !== 'storage') continue;
    const owner = ownerOf(r.buffer);
    if (isDeviceSlab(owner) && owner.readOnly) throw writesReadOnly(state, r);
  }
  for (let i = 0; i < ranges.length; i++) {
    const a = ranges[i];
    if (a === undefined) continue;
    for (let j = i + 1; j < ranges.length; j++) {
      const b = ranges[j];
      if (b === undefined || b.buffer !== a.buffer) continue;
      const aw = a.kind === 'storage';
      const bw = b.kind === 'storage';
      if (aw !== bw) throw mixed(state, aw ? a : b, aw ? b : a);
      if (aw && a.offset < b.offset + b.size && b.offset < a.offset + a.size) throw aliased(state, a, b);
    }
  }
}

function describeRange(r: Range): string {
  const array = isGpuArray(r.resource) ? ` (${shapeText(r.resource.dtype, r.resource.dims)})` : '';
  return `${r.where} as '${r.kind}', bytes [${r.offset}, ${r.offset + r.size}) of ${bufferName(r.buffer)}${array}`;
}

// The advice depends on the read-only use: a 'read-only-storage' binding can become 'storage', but
// a uniform never can be writable, and neither can indirect arguments.
function mixedAdvice(readOnly: Range): string {
  if (readOnly.kind === 'read-only-storage') {
    return (
      "Bind every array of this slab that the dispatch uses as 'storage' (var<storage, read_write> in WGSL), " +
      "or keep read-only data such as weights in another slab, made read-only: deviceArena(device, bytes, { readOnly: true, label: 'weights' }) " +
      '(made without readOnly when an optimizer updates them in dispatches of its own). ' +
      'When the kernels are not yours and declare every input read, let Pol place the arrays on several slabs: planPlacement and placedArena.'
    );
  }
  const [what, usage] =
    readOnly.kind === 'uniform'
      ? ['A uniform binding can never be writable', 'UNIFORM']
      : ['Indirect arguments are read-only in the dispatch that uses them', 'INDIRECT'];
  return (
    `${what}, so keep that data in a slab of its own, apart from the arrays the dispatch writes: ` +
    `deviceArena(device, bytes, { usage: GPUBufferUsage.${usage} }).`
  );
}

function mixed(state: DeviceState, writable: Range, readOnly: Range): UsageConflictError {
  return new UsageConflictError(
    `A dispatch on ${deviceName(state.device)} binds ${bufferName(writable.buffer)} both as writable storage and read-only: ` +
      `${describeRange(writable)}, and ${describeRange(readOnly)}. WebGPU tracks usage per whole buffer within a dispatch, ` +
      `so this is a validation error even when the two ranges do not overlap. ${mixedAdvice(readOnly)}`,
  );
}

function writesReadOnly(state: DeviceState, r: Range): UsageConflictError {
  return new UsageConflictError(
    `A dispatch on ${deviceName(state.device)} binds ${describeRange(r)}, but that slab was made read-only: kernels only read its arrays. ` +
      "Bind it as var<storage, read> ('read-only-storage') or var<uniform> in the kernel, or, if the kernel must write it (an optimizer updating weights), " +
      'keep that data in an arena made without readOnly.',
  );
}

function aliased(state: DeviceState, a: Range, b: Range): UsageConflictError {
  const lo = Math.max(a.offset, b.offset);
  const hi = Math.min(a.offset + a.size, b.offset + b.size);
  return new UsageConflictError(
    `A dispatch on ${deviceName(state.device)} binds overlapping writable ranges of ${bufferName(a.buffer)}: ` +
      `${describeRange(a)}, and ${describeRange(b)}; they share bytes [${lo}, ${hi}). WebGPU refuses writable bindings that alias. ` +
      'Give each writable binding an array of its own (alloc them separately from the arena).',
  );
}
