/**
 * The metadata hook: what Pol records about a device's bind group layouts, bind groups, pipeline
 * layouts, shader modules and compute pipelines as they are created, in WeakMaps. It is what lets
 * checked mode compare the ranges a dispatch binds, and a graph find the buffers it must watch.
 *
 * @module
 */

import type { BufferBindingKind } from './flags.js';
import { bufferBindingsOfWgsl } from './wgsl.js';

/** The binding types of one bind group layout, by binding number. */
export interface LayoutInfo {
  readonly kinds: ReadonlyMap<number, BufferBindingKind>;
  /** Binding numbers with dynamic offsets, ascending (the order dynamic offsets apply in). */
  readonly dynamic: readonly number[];
}

/** One buffer entry of a bind group. */
export interface BoundEntry {
  readonly binding: number;
  readonly buffer: GPUBuffer;
  readonly offset: number;
  readonly size: number;
  /** The resource object as given (a GpuArray when one was bound), for messages. */
  readonly resource: unknown;
}

/** What a bind group binds. */
export interface BindGroupInfo {
  readonly layout: GPUBindGroupLayout;
  readonly entries: readonly BoundEntry[];
}

/** How a compute pipeline's bind group layouts are found. */
interface PipelineInfo {
  /** How many bind groups its layout has, if known. */
  readonly groups: number | undefined;
  /** The binding types of group `index`, if known. */
  readonly layoutInfo: (index: number) => LayoutInfo | undefined;
}

const layouts = new WeakMap<GPUBindGroupLayout, LayoutInfo>();
const bindGroups = new WeakMap<GPUBindGroup, BindGroupInfo>();
const pipelineLayouts = new WeakMap<object, readonly unknown[]>();
const pipelines = new WeakMap<object, PipelineInfo>();
const moduleCode = new WeakMap<GPUShaderModule, string>();

// Each recorder reads a descriptor the device has just accepted. Metadata is best effort: a
// descriptor Pol cannot read only means fewer checks, never a failed call.

/** `device.createBindGroupLayout(descriptor)` returned `layout`. */
export function recordLayout(layout: unknown, descriptor: unknown): void {
  if (layout === null || typeof layout !== 'object') return;
  const kinds = new Map<number, BufferBindingKind>();
  const dynamic: number[] = [];
  const entries = (descriptor as { entries?: unknown } | undefined)?.entries;
  if (Array.isArray(entries)) {
    for (const entry of entries as { binding?: unknown; buffer?: { type?: unknown; hasDynamicOffset?: unknown } }[]) {
      if (typeof entry?.binding !== 'number' || entry.buffer === undefined || entry.buffer === null) continue;
      const type = entry.buffer.type;
      kinds.set(entry.binding, type === 'storage' || type === 'read-only-storage' ? type : 'uniform');
      if (entry.buffer.hasDynamicOffset === true) dynamic.push(entry.binding);
    }
  }
  dynamic.sort((a, b) => a - b);
  layouts.set(layout as GPUBindGroupLayout, { kinds, dynamic });
}

/** `device.createBindGroup(descriptor)` returned `group`. */
export function recordBindGroup(group: unknown, descriptor: unknown): void {
  const d = descriptor as { layout?: unknown; entries?: unknown } | undefined;
  if (group === null || typeof group !== 'object' || d === undefined) return;
  if (typeof d.layout !== 'object' || d.layout === null || !Array.isArray(d.entries)) return;
  const entries: BoundEntry[] = [];
  for (const entry of d.entries as { binding?: unknown; resource?: unknown }[]) {
    const bound = boundEntry(entry);
    if (bound !== undefined) entries.push(bound);
  }
  bindGroups.set(group as GPUBindGroup, { layout: d.layout as GPUBindGroupLayout, entries });
}

/** The buffer a bind group entry's resource binds, with its range, if it binds one. */
export function boundEntry(entry: { binding?: unknown; resource?: unknown } | undefined): BoundEntry | undefined {
  if (entry === undefined || entry === null || typeof entry.binding !== 'number') return undefined;
  const resource = entry.resource as { buffer?: unknown; offset?: unknown; size?: unknown; usage?: unknown } | undefined;
  if (resource === undefined || resource === null || typeof resource !== 'object') return undefined;
  // A GPUBufferBinding ({ buffer, offset?, size? }, a GpuArray among them), or a GPUBuffer itself.
  if (typeof resource.buffer === 'object' && resource.buffer !== null) {
    const buffer = resource.buffer as GPUBuffer;
    const offset = typeof resource.offset === 'number' ? resource.offset : 0;
    const size = typeof resource.size === 'number' ? resource.size : buffer.size - offset;
    return { binding: entry.binding, buffer, offset, size, resource };
  }
  if (typeof resource.usage === 'number' && typeof resource.size === 'number') {
    const buffer = resource as unknown as GPUBuffer;
    return { binding: entry.binding, buffer, offset: 0, size: buffer.size, resource };
  }
  return undefined;
}

/** `device.createPipelineLayout(descriptor)` returned `layout`. */
export function recordPipelineLayout(layout: unknown, descriptor: unknown): void {
  const groups = (descriptor as { bindGroupLayouts?: unknown } | undefined)?.bindGroupLayouts;
  if (layout === null || typeof layout !== 'object' || !Array.isArray(groups)) return;
  pipelineLayouts.set(layout, [...groups]);
}

/** `device.createShaderModule(descriptor)` returned `module`. */
export function recordModule(module: unknown, descriptor: unknown): void {
  const code = (descriptor as { code?: unknown } | undefined)?.code;
  if (module !== null && typeof module === 'object' && typeof code === 'string') moduleCode.set(module as GPUShaderModule, code);
}

/** `device.createComputePipeline(Async)(descriptor)` made `pipeline`. */
export function recordPipeline(pipeline: unknown, descriptor: unknown): void {
  if (pipeline === null || typeof pipeline !== 'object') return;
  const d = descriptor as { layout?: unknown; compute?: { module?: unknown } } | undefined;
  if (d === undefined || d === null) return;
  if (d.layout === 'auto') {
    // WebGPU derives 'auto' layouts from the shader, so read the same declarations.
    const module = d.compute?.module;
    const code = typeof module === 'object' && module !== null ? moduleCode.get(module as GPUShaderModule) : undefined;
    if (code === undefined) return;
    const groups = bufferBindingsOfWgsl(code);
    let count = 0;
    for (const g of groups.keys()) count = Math.max(count, g + 1);
    pipelines.set(pipeline, { groups: count, layoutInfo: (index) => ({ kinds: groups.get(index) ?? new Map(), dynamic: [] }) });
  } else if (typeof d.layout === 'object' && d.layout !== null) {
    const explicit = pipelineLayouts.get(d.layout);
    pipelines.set(pipeline, {
      groups: explicit?.length,
      layoutInfo: (index) => {
        const layout = explicit?.[index];
        return typeof layout === 'object' && layout !== null ? layouts.get(layout as GPUBindGroupLayout) : undefined;
      },
    });
  }
}

/** `pipeline.getBindGroupLayout(index)` returned `layout` for the first time: learn its binding types. */
export function recordPipelineGroup(pipeline: object, index: number, layout: unknown): void {
  if (layout === null || typeof layout !== 'object' || layouts.has(layout as GPUBindGroupLayout)) return;
  const info = pipelines.get(pipeline)?.layoutInfo(index);
  if (info !== undefined) layouts.set(layout as GPUBindGroupLayout, info);
}

/** What a bind group binds, if Pol saw it created. */
export function bindGroupInfo(group: GPUBindGroup): BindGroupInfo | undefined {
  return bindGroups.get(group);
}

/** The binding types of a layout, if Pol saw it created (explicitly, or through an 'auto' pipeline). */
export function layoutOf(layout: GPUBindGroupLayout): LayoutInfo | undefined {
  return layouts.get(layout);
}

/** How many bind groups a pipeline's layout has, if Pol knows. */
export function pipelineGroupCount(pipeline: GPUComputePipeline): number | undefined {
  return pipelines.get(pipeline)?.groups;
}
