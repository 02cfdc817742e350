// biome-ignore-all lint/complexity/noArguments: each wrapper forwards `arguments` as received (and uses it for nothing else, which
// keeps V8 from materializing it), so that every call keeps its arity and the steady path allocates nothing.
/**
 * The instrumentation owner: the one place that wraps a GPUDevice's methods, once per device, and
 * dispatches each call to the hooks that are on:
 *
 * - **metadata** (always): what each bind group layout, bind group, pipeline layout, shader module
 *   and compute pipeline is, recorded as they are created (`metadata.ts`); compute pipelines
 *   return the same layout object from `getBindGroupLayout(i)` on every call;
 * - **bindings** (always): `createBindGroup` reads every entry in JavaScript first, so a released
 *   array is refused with a typed error before the device sees it, and so is a buffer of another
 *   device;
 * - **buffers** (always): each buffer the device creates gets an owner, and its `destroy` tells
 *   the graphs that use it;
 * - **checked usage scopes** (from the first checked arena on the device, `checked.ts`): command
 *   encoders get an observer that checks copies and dispatches, and so do the last encoders made
 *   before, from their next pass or copy on (a pass begun before is not checked);
 * - **capture recording** (while a captured step runs, `recorder.ts`): refusals, and an observer
 *   of each command encoder that records its commands;
 * - **placement planning** (while `planPlacement`'s warm-up runs, `placement.ts`): an observer of
 *   each compute pass that notes which arrays each dispatch binds, and how.
 *
 * Hooks never wrap anything themselves, and nothing is ever unwrapped: a hook is switched on or
 * off in the device's state, behind wrappers that stay. Nothing patches a prototype. The wrappers
 * on the calls a steady loop makes (`createCommandEncoder`, `queue.submit`, `queue.writeBuffer`)
 * cost a test of the hooks and a forward.
 *
 * @module
 */

import { InvalidArgumentError } from '@pol/core';
import { describeValue, shapeText } from '@pol/core/backend';
import { isGpuArray } from './array.js';
import { BufferOwner, bufferName, labelName, ownerOf, setOwner } from './buffers.js';
import { checkedEncoder } from './checked.js';
import { EagerClears } from './clears.js';
import { observe } from './commands.js';
import { assertDevice, type DeviceState, deviceName, knownState, markLost, registerState, UNCHECKED_ENCODERS } from './device.js';
import { Usage } from './flags.js';
import type { CommandObserver } from './hooks.js';
import {
  type BoundEntry,
  boundEntry,
  recordBindGroup,
  recordLayout,
  recordModule,
  recordPipeline,
  recordPipelineGroup,
  recordPipelineLayout,
} from './metadata.js';
import { define, type Method, wrap } from './patch.js';

/**
 * Hand a device to Pol before anything else touches it: Pol wraps its methods once, so that it
 * sees every bind group layout, shader module, pipeline and buffer created from now on. Returns
 * the device. Idempotent; the first device slab, bind group or capture on a device does it too.
 *
 * Call it right after `requestDevice()`, before compiling pipelines or creating buffers, when
 * the pipelines come from code that is not yours (third-party WGSL compiled first). What Pol has
 * not seen created, it cannot check or cache by: checked mode skips the bindings of layouts and
 * `'auto'` pipelines made earlier, a pipeline made earlier returns a new layout object from each
 * `getBindGroupLayout(i)` call in Dawn (so asking for it every dispatch misses `bindGroup`'s
 * cache: hold on to the layout instead), and a buffer made earlier cannot be watched by a graph
 * (capturing a step that uses one fails, saying so).
 *
 * @throws {InvalidArgumentError} when `device` is not a GPUDevice, or Pol cannot wrap its methods
 * (a frozen object).
 * @example
 * ```ts
 * import { alloc } from '@pol/core';
 * import { bindGroup, deviceArena, instrument } from '@pol/webgpu';
 * const adapter = await gpu.requestAdapter();
 * if (adapter === null) throw new Error('No WebGPU adapter.');
 * const mine = instrument(await adapter.requestDevice({ label: 'mine' })); // first, before anything is compiled
 * // third-party code compiles its pipelines first, asking for the layout at every dispatch
 * const module = mine.createShaderModule({
 *   code: `@group(0) @binding(0) var<storage, read_write> x: array<f32>;
 *   @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3u) { x[id.x] += 1.0; }`,
 * });
 * const pipeline = mine.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
 * const x = alloc(deviceArena(mine, 4096), 'float32', [64]);
 * const first = bindGroup(mine, pipeline.getBindGroupLayout(0), [x]);
 * console.log(bindGroup(mine, pipeline.getBindGroupLayout(0), [x]) === first); // true: found in the cache
 * mine.destroy();
 * ```
 */
export function instrument(device: GPUDevice): GPUDevice {
  stateOf(device, 'instrument(device)');
  return device;
}

/** Pol's state for `device`, instrumenting the device on first contact; `what` names the call, for a bad device. */
export function stateOf(device: GPUDevice, what = 'Pol'): DeviceState {
  const known = knownState(device);
  if (known !== undefined) return known;
  assertDevice(device, what);
  const queue = device.queue;
  const state: DeviceState = {
    device,
    lost: undefined,
    checked: false,
    unchecked: { encoders: Array.from({ length: UNCHECKED_ENCODERS }, () => undefined), next: 0 },
    recorder: undefined,
    planner: undefined,
    listeners: new Set(),
    clears: new EagerClears(device, {
      createCommandEncoder: device.createCommandEncoder,
      submit: queue.submit,
      writeBuffer: queue.writeBuffer,
    }),
    raw: { writeBuffer: queue.writeBuffer, onSubmittedWorkDone: queue.onSubmittedWorkDone },
  };
  try {
    wrapDevice(state);
    wrapQueue(state, queue);
  } catch (cause) {
    throw new InvalidArgumentError(
      `Pol could not instrument ${deviceName(device)}: ${cause instanceof Error ? cause.message : String(cause)}. ` +
        'Hand Pol a GPUDevice as requestDevice() made it (not frozen, not a proxy that refuses new properties).',
    );
  }
  registerState(state);
  watchLoss(state);
  return state;
}

function watchLoss(state: DeviceState): void {
  const lost = (state.device as { lost?: unknown }).lost;
  if (lost === undefined || lost === null || typeof (lost as PromiseLike<unknown>).then !== 'function') return;
  (lost as Promise<{ reason?: unknown; message?: unknown }>).then(
    (info) => markLost(state, String(info?.reason ?? 'unknown'), String(info?.message ?? '')),
    () => markLost(state, 'unknown', ''),
  );
}

// Each wrapper asks the hooks before forwarding (a refusal reaches nothing), and records after (a
// call the device rejected records nothing). Recording metadata never breaks a call.
function wrapDevice(state: DeviceState): void {
  const device = state.device;
  wrap(
    device,
    'destroy',
    (original) =>
      function (this: unknown) {
        const result = original.apply(this, arguments as unknown as unknown[]);
        markLost(state, 'destroyed', 'device.destroy() was called');
        return result;
      },
  );
  const refused = (name: string, after?: (result: unknown, descriptor: unknown) => void) =>
    wrap(
      device,
      name,
      (original) =>
        function (this: unknown, descriptor: unknown) {
          state.recorder?.refuse('device', name, [descriptor]);
          const result = original.apply(this, arguments as unknown as unknown[]);
          if (after !== undefined) quietly(after, result, descriptor);
          return result;
        },
    );
  refused('createBuffer', (buffer) => adoptBuffer(state, buffer));
  refused('createTexture');
  refused('createQuerySet');
  refused('createShaderModule', recordModule);
  refused('createComputePipeline', (pipeline, descriptor) => {
    recordPipeline(pipeline, descriptor);
    stableLayouts(pipeline);
  });
  refused('createRenderPipeline');
  refused('createRenderPipelineAsync');
  wrap(
    device,
    'createComputePipelineAsync',
    (original) =>
      function (this: unknown, descriptor: unknown) {
        state.recorder?.refuse('device', 'createComputePipelineAsync', [descriptor]);
        return Promise.resolve(original.apply(this, arguments as unknown as unknown[])).then((pipeline) => {
          quietly(recordPipeline, pipeline, descriptor);
          quietly(stableLayouts, pipeline, undefined);
          return pipeline;
        });
      },
  );
  refused('createBindGroupLayout', recordLayout);
  refused('createPipelineLayout', recordPipelineLayout);
  wrap(
    device,
    'createBindGroup',
    (original) =>
      function (this: unknown, descriptor: unknown) {
        checkBindings(state, descriptor);
        const group = original.apply(this, arguments as unknown as unknown[]);
        quietly(recordBindGroup, group, descriptor);
        return group;
      },
  );
  wrap(
    device,
    'createCommandEncoder',
    (original) =>
      function (this: unknown) {
        const encoder = original.apply(this, arguments as unknown as unknown[]);
        if (encoder === null || typeof encoder !== 'object') return encoder;
        if (state.checked || state.recorder !== undefined || state.planner !== undefined) {
          observe(encoder, encoderObservers(state));
        }
        if (!state.checked) {
          // Noted, at the cost of a store: checking may switch on while this encoder is open.
          const unchecked = state.unchecked;
          unchecked.encoders[unchecked.next] = encoder;
          unchecked.next = (unchecked.next + 1) % UNCHECKED_ENCODERS;
        }
        return encoder;
      },
  );
}

function wrapQueue(state: DeviceState, queue: GPUQueue): void {
  wrap(
    queue,
    'submit',
    (original) =>
      function (this: unknown, commandBuffers: unknown) {
        const recorder = state.recorder;
        if (recorder !== undefined) return recorder.submit(original, this, [commandBuffers]);
        if (state.clears.count !== 0) state.clears.flush();
        return original.apply(this, arguments as unknown as unknown[]);
      },
  );
  // A buffer write lands after the clears noted before it, and a wait covers them. Texture writes
  // cannot observe a buffer's bytes (a copy from a buffer to a texture is a submitted command), so
  // they need no flush.
  for (const name of ['writeBuffer', 'writeTexture', 'copyExternalImageToTexture', 'onSubmittedWorkDone']) {
    const flushes = name === 'writeBuffer' || name === 'onSubmittedWorkDone';
    wrap(
      queue,
      name,
      (original) =>
        function (this: unknown) {
          state.recorder?.refuse('queue', name, noArgs);
          if (flushes && state.clears.count !== 0) state.clears.flush();
          return original.apply(this, arguments as unknown as unknown[]);
        },
    );
  }
}

// What a refusal that names no argument is handed.
const noArgs: readonly unknown[] = Object.freeze([]);

function encoderObservers(state: DeviceState): CommandObserver[] {
  const observers: CommandObserver[] = [];
  if (state.recorder !== undefined) observers.push(state.recorder.encoder());
  if (state.checked) observers.push(checkedEncoder(state));
  if (state.planner !== undefined) observers.push(state.planner.encoder());
  return observers;
}

function quietly(f: (result: unknown, descriptor: unknown) => void, result: unknown, descriptor: unknown): void {
  try {
    f(result, descriptor);
  } catch {
    // Metadata is best effort: a descriptor Pol cannot read only means fewer checks.
  }
}

// Dawn returns a new layout object from every getBindGroupLayout call, which would make every
// lookup in a cache keyed by layout miss: hand out the first one again, and learn its types.
function stableLayouts(pipeline: unknown): void {
  if (pipeline === null || typeof pipeline !== 'object') return;
  const seen = new Map<number, unknown>();
  wrap(
    pipeline,
    'getBindGroupLayout',
    (original) =>
      function (this: unknown, index: unknown) {
        if (typeof index === 'number' && seen.has(index)) return seen.get(index);
        const layout = original.apply(this, arguments as unknown as unknown[]);
        if (typeof index === 'number' && layout !== null && typeof layout === 'object') {
          seen.set(index, layout);
          recordPipelineGroup(pipeline, index, layout);
        }
        return layout;
      },
  );
}

// --- buffers -----------------------------------------------------------------------------------

/**
 * A buffer the device just created: it gets a client owner (Pol's own buffers replace it with
 * theirs), a `destroy` that tells the owner, and, if it can be mapped, a `mapAsync` that a
 * recording refuses.
 */
function adoptBuffer(state: DeviceState, buffer: unknown): void {
  if (buffer === null || typeof buffer !== 'object') return;
  const b = buffer as GPUBuffer;
  setOwner(b, new BufferOwner('client', state.device, labelName(b)));
  define(b, 'destroy', destroyBuffer);
  if (typeof b.usage === 'number' && (b.usage & (Usage.MAP_READ | Usage.MAP_WRITE)) !== 0) {
    define(b, 'mapAsync', mapBuffer(state));
  }
}

// One function for every buffer: the original is the prototype's, found on the buffer's own chain.
// The device's noted clears go first: one of them may be of this buffer.
const destroyBuffer: Method = function (this: unknown) {
  const buffer = this as GPUBuffer;
  const owner = ownerOf(buffer);
  const clears = owner === undefined ? undefined : knownState(owner.device)?.clears;
  if (clears !== undefined && clears.count !== 0) clears.flush();
  const result = (Object.getPrototypeOf(buffer) as GPUBuffer).destroy.call(buffer);
  owner?.release(`${bufferName(buffer)} was destroyed (buffer.destroy())`);
  return result;
};

const mapFunctions = new WeakMap<DeviceState, Method>();

function mapBuffer(state: DeviceState): Method {
  let map = mapFunctions.get(state);
  if (map === undefined) {
    map = function (this: unknown) {
      // No flush of noted clears: a slab's buffer cannot be mapped (MAP usage is refused with
      // STORAGE), so a map reads only what a submitted copy wrote, and that submit flushed first.
      state.recorder?.refuse('buffer', 'mapAsync', noArgs);
      const proto = Object.getPrototypeOf(this) as GPUBuffer;
      return (proto.mapAsync as unknown as Method).apply(this, arguments as unknown as unknown[]);
    };
    mapFunctions.set(state, map);
  }
  return map;
}

// --- bindings ----------------------------------------------------------------------------------

/**
 * Read every buffer entry of a bind group descriptor in JavaScript, before the device does: a
 * checked array that was released throws its `StaleArrayError` here (thrown from inside the
 * native call, it would abort the process), and an array or buffer that is gone, or belongs to
 * another device, is refused.
 */
function checkBindings(state: DeviceState, descriptor: unknown): void {
  const entries = (descriptor as { entries?: unknown } | undefined)?.entries;
  if (!Array.isArray(entries)) return;
  for (const entry of entries as ({ binding?: unknown; resource?: unknown } | undefined)[]) {
    const bound = boundEntry(entry);
    if (bound !== undefined) checkBound(state, bound);
  }
}

function checkBound(state: DeviceState, bound: BoundEntry): void {
  const owner = ownerOf(bound.buffer);
  if (owner === undefined) return;
  const what = isGpuArray(bound.resource)
    ? `${shapeText(bound.resource.dtype, bound.resource.dims)} of ${owner.name}`
    : `${owner.name} (${describeValue(bound.resource)})`;
  if (owner.device !== state.device) {
    throw new InvalidArgumentError(
      `A bind group on ${deviceName(state.device)} cannot bind ${what} at binding ${bound.binding}: it belongs to ${deviceName(owner.device)}, ` +
        'and a bind group binds buffers of its own device only. Allocate the array from an arena on the device that runs the kernel.',
    );
  }
  if (owner.released !== undefined) {
    throw new InvalidArgumentError(
      `A bind group on ${deviceName(state.device)} cannot bind ${what} at binding ${bound.binding}: it is gone (${owner.released}). Bind live arrays only.`,
    );
  }
}
