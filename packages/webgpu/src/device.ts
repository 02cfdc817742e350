/**
 * What Pol keeps per GPUDevice, and the metadata it records about the device's layouts, bind
 * groups and pipelines.
 *
 * On first contact with a device (its first device slab, bind group or capture), Pol wraps a few
 * of the device instance's *creation* methods (`createBindGroupLayout`, `createBindGroup`,
 * `createPipelineLayout`, `createShaderModule`, `createComputePipeline(Async)`) and `destroy`, so
 * that it knows what each bind group binds and with which binding type. Those calls are made at
 * set-up time, never in a steady loop, and the wrappers only record into WeakMaps and forward.
 * The compute pipelines it sees get a `getBindGroupLayout` that returns the same layout object for
 * the same index every time, so that bind groups cached by layout are found again.
 *
 * @module
 */

import { InvalidArgumentError } from '@pol/core';
import { DeviceLostError } from './errors.js';
import { type Method, patch } from './patch.js';
import { bufferBindingsOfWgsl } from './wgsl.js';

/** `GPUBufferUsage` flags, as numbers: the package must not depend on the global being defined. */
export const Usage = Object.freeze({
  MAP_READ: 0x0001,
  MAP_WRITE: 0x0002,
  COPY_SRC: 0x0004,
  COPY_DST: 0x0008,
  INDEX: 0x0010,
  VERTEX: 0x0020,
  UNIFORM: 0x0040,
  STORAGE: 0x0080,
  INDIRECT: 0x0100,
  QUERY_RESOLVE: 0x0200,
});

/** `GPUMapMode.READ`. */
export const MAP_MODE_READ = 0x0001;

/** How a buffer binding is used: WebGPU's three buffer binding types. */
export type BufferBindingKind = 'uniform' | 'storage' | 'read-only-storage';

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

/** Something that must learn when its device is lost (a graph). */
export interface LossListener {
  deviceLost(reason: string): void;
}

/** Pol's state for one device. */
export interface DeviceState {
  readonly device: GPUDevice;
  /** Set once the device is lost or destroyed. */
  lost: { readonly reason: string; readonly message: string } | undefined;
  /** Whether dispatch checks (checked mode) are installed on the device. */
  checked: boolean;
  /** The capture this device is recording, if any (set by `capture`). */
  recording: object | undefined;
  /** Graphs of this device that are still valid. */
  readonly listeners: Set<LossListener>;
}

const states = new WeakMap<GPUDevice, DeviceState>();
const layouts = new WeakMap<GPUBindGroupLayout, LayoutInfo>();
const bindGroups = new WeakMap<GPUBindGroup, BindGroupInfo>();
const pipelineGroups = new WeakMap<object, number>();
const pipelineLayouts = new WeakMap<object, readonly unknown[]>();
const moduleCode = new WeakMap<GPUShaderModule, string>();

/** Whether `x` looks like a GPUDevice (duck-typed: Dawn's and browsers' classes differ). */
export function isDevice(x: unknown): x is GPUDevice {
  if (typeof x !== 'object' || x === null) return false;
  const d = x as Partial<Record<'createBuffer' | 'createCommandEncoder' | 'queue' | 'limits', unknown>>;
  return (
    typeof d.createBuffer === 'function' &&
    typeof d.createCommandEncoder === 'function' &&
    typeof d.queue === 'object' &&
    d.queue !== null &&
    typeof d.limits === 'object' &&
    d.limits !== null
  );
}

/** `device 'label'`, or `an unlabeled device`. */
export function deviceName(device: GPUDevice): string {
  const label = typeof device.label === 'string' ? device.label : '';
  return label === '' ? 'an unlabeled device' : `device '${label}'`;
}

/** Throw unless `x` is a device; `what` names the call. */
export function assertDevice(x: unknown, what: string): asserts x is GPUDevice {
  if (!isDevice(x)) {
    throw new InvalidArgumentError(
      `${what} needs a GPUDevice, got ${describe(x)}. Get one with (await navigator.gpu.requestAdapter()).requestDevice() ` +
        "(in Node.js, from the 'webgpu' package's create([]).requestAdapter()).",
    );
  }
}

function describe(x: unknown): string {
  if (x === null || x === undefined) return String(x);
  if (typeof x !== 'object') return typeof x === 'string' ? `'${x}'` : String(x);
  const name = (x as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === 'string' && name !== 'Object' ? `a ${name}` : 'a plain object';
}

/**
 * Pol's state for `device`, made (and the device's creation methods wrapped) on first contact.
 */
export function stateOf(device: GPUDevice): DeviceState {
  let state = states.get(device);
  if (state === undefined) {
    state = { device, lost: undefined, checked: false, recording: undefined, listeners: new Set() };
    states.set(device, state);
    track(state);
  }
  return state;
}

/**
 * Call `f` once the work submitted to the device so far has finished (at once if the device is
 * lost). While the device records a capture, `onSubmittedWorkDone` is refused, so the wait starts
 * right after the capture's synchronous part ends instead.
 */
export function whenIdle(state: DeviceState, f: () => void): void {
  if (state.lost !== undefined) {
    f();
    return;
  }
  if (state.recording !== undefined) {
    Promise.resolve().then(() => whenIdle(state, f));
    return;
  }
  let done = false;
  const once = () => {
    if (done) return;
    done = true;
    f();
  };
  try {
    state.device.queue.onSubmittedWorkDone().then(once, once);
  } catch {
    once();
  }
}

/** Pol's state for `device` if it has met the device, without making one. */
export function knownState(device: GPUDevice): DeviceState | undefined {
  return states.get(device);
}

/** Throw {@link DeviceLostError} if the device is lost; `what` names the operation refused. */
export function assertAlive(state: DeviceState, what: string): void {
  const lost = state.lost;
  if (lost !== undefined) {
    throw new DeviceLostError(
      lost.reason,
      `Cannot ${what}: ${deviceName(state.device)} was ${lost.reason === 'destroyed' ? 'destroyed' : 'lost'}` +
        `${lost.message === '' ? '' : ` (${lost.message})`}, and nothing more can run on it. ` +
        'Request a new device, and make new device slabs, arenas and graphs on it.',
    );
  }
}

function markLost(state: DeviceState, reason: string, message: string): void {
  if (state.lost !== undefined) return;
  state.lost = { reason, message };
  for (const listener of [...state.listeners]) listener.deviceLost(reason);
  state.listeners.clear();
}

// The wrappers below forward first and record after: a call the device rejects records nothing,
// and a failure to record (an exotic descriptor) never breaks the call.
function track(state: DeviceState): void {
  const device = state.device;
  const lost = (device as { lost?: unknown }).lost;
  if (lost !== undefined && lost !== null && typeof (lost as PromiseLike<unknown>).then === 'function') {
    (lost as Promise<{ reason?: unknown; message?: unknown }>).then(
      (info) => markLost(state, String(info?.reason ?? 'unknown'), String(info?.message ?? '')),
      () => markLost(state, 'unknown', ''),
    );
  }
  patch(
    device,
    'destroy',
    (original) =>
      function (this: unknown, ...args: unknown[]) {
        const result = original.apply(this, args);
        markLost(state, 'destroyed', 'device.destroy() was called');
        return result;
      },
  );
  after(device, 'createBindGroupLayout', (layout, descriptor) => {
    if (layout !== null && typeof layout === 'object') layouts.set(layout as GPUBindGroupLayout, layoutInfo(descriptor));
  });
  after(device, 'createBindGroup', (group, descriptor) => {
    if (group !== null && typeof group === 'object') recordBindGroup(group as GPUBindGroup, descriptor);
  });
  after(device, 'createPipelineLayout', (layout, descriptor) => {
    const groups = (descriptor as { bindGroupLayouts?: unknown } | undefined)?.bindGroupLayouts;
    if (layout === null || typeof layout !== 'object' || !Array.isArray(groups)) return;
    pipelineGroups.set(layout, groups.length);
    pipelineLayouts.set(layout, [...groups]);
  });
  after(device, 'createShaderModule', (module, descriptor) => {
    const code = (descriptor as { code?: unknown } | undefined)?.code;
    if (module !== null && typeof module === 'object' && typeof code === 'string')
      moduleCode.set(module as GPUShaderModule, code);
  });
  after(device, 'createComputePipeline', (pipeline, descriptor) => recordPipeline(pipeline, descriptor));
  patch(
    device,
    'createComputePipelineAsync',
    (original) =>
      function (this: unknown, ...args: unknown[]) {
        const promise = original.apply(this, args) as Promise<unknown>;
        return Promise.resolve(promise).then((pipeline) => {
          recordPipeline(pipeline, args[0]);
          return pipeline;
        });
      },
  );
}

function after(target: object, name: string, record: (result: unknown, descriptor: unknown) => void): void {
  patch(
    target,
    name,
    (original: Method) =>
      function (this: unknown, ...args: unknown[]) {
        const result = original.apply(this, args);
        try {
          record(result, args[0]);
        } catch {
          // Metadata is best effort: a descriptor Pol cannot read only means fewer checks.
        }
        return result;
      },
  );
}

function layoutInfo(descriptor: unknown): LayoutInfo {
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
  return { kinds, dynamic };
}

function recordBindGroup(group: GPUBindGroup, descriptor: unknown): void {
  const d = descriptor as { layout?: unknown; entries?: unknown } | undefined;
  if (d === undefined || typeof d.layout !== 'object' || d.layout === null || !Array.isArray(d.entries)) return;
  const entries: BoundEntry[] = [];
  for (const entry of d.entries as { binding?: unknown; resource?: unknown }[]) {
    const bound = boundEntry(entry);
    if (bound !== undefined) entries.push(bound);
  }
  bindGroups.set(group, { layout: d.layout as GPUBindGroupLayout, entries });
}

function boundEntry(entry: { binding?: unknown; resource?: unknown } | undefined): BoundEntry | undefined {
  if (entry === undefined || typeof entry.binding !== 'number') return undefined;
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

function recordPipeline(pipeline: unknown, descriptor: unknown): void {
  if (pipeline === null || typeof pipeline !== 'object') return;
  const d = descriptor as { layout?: unknown; compute?: { module?: unknown } } | undefined;
  if (d === undefined) return;
  let infoOf: (index: number) => LayoutInfo | undefined = () => undefined;
  if (d.layout === 'auto') {
    // WebGPU derives 'auto' layouts from the shader, so read the same declarations.
    const module = d.compute?.module;
    const code = typeof module === 'object' && module !== null ? moduleCode.get(module as GPUShaderModule) : undefined;
    if (code !== undefined) {
      const groups = bufferBindingsOfWgsl(code);
      let count = 0;
      for (const g of groups.keys()) count = Math.max(count, g + 1);
      pipelineGroups.set(pipeline, count);
      infoOf = (index) => ({ kinds: groups.get(index) ?? new Map(), dynamic: [] });
    }
  } else if (typeof d.layout === 'object' && d.layout !== null) {
    const count = pipelineGroups.get(d.layout);
    if (count !== undefined) pipelineGroups.set(pipeline, count);
    const explicit = pipelineLayouts.get(d.layout);
    infoOf = (index) => {
      const layout = explicit?.[index];
      return typeof layout === 'object' && layout !== null ? layouts.get(layout as GPUBindGroupLayout) : undefined;
    };
  }
  // getBindGroupLayout returns a new object on every call (in Dawn at least), which would defeat a
  // cache keyed by layout: hand out the first one again, and learn its binding types.
  const seen = new Map<number, unknown>();
  patch(
    pipeline,
    'getBindGroupLayout',
    (original) =>
      function (this: unknown, ...args: unknown[]) {
        const index = args[0];
        if (typeof index === 'number' && seen.has(index)) return seen.get(index);
        const layout = original.apply(this, args);
        if (typeof index === 'number' && layout !== null && typeof layout === 'object') {
          seen.set(index, layout);
          const info = infoOf(index);
          if (info !== undefined && !layouts.has(layout as GPUBindGroupLayout)) layouts.set(layout as GPUBindGroupLayout, info);
        }
        return layout;
      },
  );
}

/** Record a bind group made by Pol's cache (the device's wrapper records it too; this is for devices it could not wrap). */
export function noteBindGroup(group: GPUBindGroup, descriptor: GPUBindGroupDescriptor): void {
  if (!bindGroups.has(group)) recordBindGroup(group, descriptor);
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
  return pipelineGroups.get(pipeline);
}
