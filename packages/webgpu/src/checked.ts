/**
 * Checked mode's usage-scope check: before a compute dispatch is encoded, compare the buffer
 * ranges its bind groups bind and refuse what WebGPU would reject later, asynchronously.
 *
 * Installed on a device when a checked arena first carves from one of its slabs: from then on,
 * the device's command encoders are wrapped so that their compute passes remember the pipeline
 * and bind groups set, and check them at each `dispatchWorkgroups(Indirect)`; copies within one
 * buffer (which WebGPU also refuses) are caught at `copyBufferToBuffer`. The wrapping costs
 * a few closures per encoder and pass, which is why it is reserved for checked mode.
 *
 * @module
 */

import { bufferName, isGpuArray } from './array.js';
import { type BufferBindingKind, bindGroupInfo, type DeviceState, deviceName, layoutOf, pipelineGroupCount } from './device.js';
import { UsageConflictError } from './errors.js';
import { patch } from './patch.js';

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

/** Install dispatch checks on the device (once). */
export function enableChecks(state: DeviceState): void {
  if (state.checked) return;
  state.checked = true;
  patch(
    state.device,
    'createCommandEncoder',
    (original) =>
      function (this: unknown, ...args: unknown[]) {
        const encoder = original.apply(this, args);
        if (encoder !== null && typeof encoder === 'object') {
          patch(
            encoder,
            'copyBufferToBuffer',
            (copy) =>
              function (this: unknown, ...copyArgs: unknown[]) {
                checkCopy(state, copyArgs);
                return copy.apply(this, copyArgs);
              },
          );
          patch(
            encoder,
            'beginComputePass',
            (begin) =>
              function (this: unknown, ...passArgs: unknown[]) {
                const pass = begin.apply(this, passArgs);
                if (pass !== null && typeof pass === 'object') checkPass(state, pass);
                return pass;
              },
          );
        }
        return encoder;
      },
  );
}

function checkPass(state: DeviceState, pass: object): void {
  let pipeline: GPUComputePipeline | undefined;
  const groups: (SetGroup | undefined)[] = [];
  patch(
    pass,
    'setPipeline',
    (original) =>
      function (this: unknown, ...args: unknown[]) {
        const result = original.apply(this, args);
        pipeline = args[0] as GPUComputePipeline;
        return result;
      },
  );
  patch(
    pass,
    'setBindGroup',
    (original) =>
      function (this: unknown, ...args: unknown[]) {
        const result = original.apply(this, args);
        const [index, group] = args as [number, GPUBindGroup | null];
        groups[index] = group === null ? undefined : { group, offsets: dynamicOffsets(args) };
        return result;
      },
  );
  patch(
    pass,
    'dispatchWorkgroups',
    (original) =>
      function (this: unknown, ...args: unknown[]) {
        checkDispatch(state, pipeline, groups, undefined);
        return original.apply(this, args);
      },
  );
  patch(
    pass,
    'dispatchWorkgroupsIndirect',
    (original) =>
      function (this: unknown, ...args: unknown[]) {
        const [buffer, offset] = args as [GPUBuffer, number];
        checkDispatch(state, pipeline, groups, { buffer, offset });
        return original.apply(this, args);
      },
  );
}

// copyBufferToBuffer(source, sourceOffset, destination, destinationOffset, size?) or (source, destination, size?).
function checkCopy(state: DeviceState, args: readonly unknown[]): void {
  const long = typeof args[1] === 'number';
  const source = args[0] as GPUBuffer;
  if (source !== (long ? args[2] : args[1])) return;
  const from = long ? (args[1] as number) : 0;
  const to = long ? (args[3] as number) : 0;
  const given = long ? args[4] : args[2];
  const size = typeof given === 'number' ? given : source.size - from;
  throw new UsageConflictError(
    `A copy on ${deviceName(state.device)} reads and writes one buffer: copyBufferToBuffer from bytes [${from}, ${from + size}) ` +
      `to bytes [${to}, ${to + size}) of ${bufferName(source)}. WebGPU refuses a copy whose source and destination are the same buffer, ` +
      'even between disjoint ranges, so two arrays of one slab cannot be copied into each other this way. ' +
      'Copy with a small compute kernel, or keep the two arrays in different slabs.',
  );
}

/** `setBindGroup`'s dynamic offsets, as an array of its own (both call forms). */
export function dynamicOffsets(args: readonly unknown[]): readonly number[] | undefined {
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
  const array = isGpuArray(r.resource) ? ` (${r.resource.dtype}[${r.resource.dims.join(', ')}])` : '';
  return `${r.where} as '${r.kind}', bytes [${r.offset}, ${r.offset + r.size}) of ${bufferName(r.buffer)}${array}`;
}

function mixed(state: DeviceState, writable: Range, readOnly: Range): UsageConflictError {
  return new UsageConflictError(
    `A dispatch on ${deviceName(state.device)} binds ${bufferName(writable.buffer)} both as writable storage and read-only: ` +
      `${describeRange(writable)}, and ${describeRange(readOnly)}. WebGPU tracks usage per whole buffer within a dispatch, ` +
      'so this is a validation error even when the two ranges do not overlap. Bind every array of this slab that the dispatch uses as ' +
      "'storage' (var<storage, read_write> in WGSL), or keep read-only data such as weights in another slab.",
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
