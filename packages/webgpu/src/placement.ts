/**
 * Placement: which slab each carve of a step goes to, so that no dispatch binds one GPUBuffer both
 * read-only and writable, which WebGPU refuses (its usage scope is the whole buffer, per
 * dispatch). Third-party WGSL declares its inputs `var<storage, read>`, so the arrays that one
 * dispatch reads were written by the dispatch before: one arena cannot hold them all, and when
 * the pattern of reads and writes has an odd cycle (a residual connection around an odd number of
 * dispatches), two cannot either.
 *
 * `planPlacement` runs a warm-up step once, eagerly and for real, on a *planning space* that gives
 * every carve a buffer of its own (so every dispatch is valid, whatever the kernels declare),
 * while the device's instrumentation notes what each dispatch binds, and how. Carves are known by
 * their *ordinal*: the n-th carve since the space was last rewound (frames rewind it, as they
 * retract an arena). Two carves conflict when one dispatch binds one of them writable and the
 * other read-only (a `read` storage binding, a uniform, indirect arguments); the conflict graph is
 * coloured with few colours (`colouring.ts`), a colour being a slab; each slab is sized by running
 * the warm-up's carves and rewinds again through a bump allocator per slab. `placedArena` then
 * makes the slabs and carves ordinal n from slab `slabOf(n)`: the same sequence of carves lands
 * at the same (slab, offset) pairs every time, so bind groups are found in the cache and a
 * captured step replays.
 *
 * @module
 */

import type { Arena } from '@pol/arena';
import { type ArrayOf, byteLength, type DType, InvalidArgumentError, type Space } from '@pol/core';
import { describeValue, isAsyncFunction, isThenable, readOptions } from '@pol/core/backend';
import { dynamicOffsets, type SetGroup } from './checked.js';
import { colour, count } from './colouring.js';
import { assertAlive, assertDevice, type DeviceState, deviceName } from './device.js';
import { PlacementError } from './errors.js';
import { deviceArena } from './factories.js';
import { Usage } from './flags.js';
import type { Args, CommandObserver, PlanningHook } from './hooks.js';
import { stateOf } from './instrument.js';
import { bindingSize, checkAlignment, defaultAlignment } from './limits.js';
import { PositionedSpace } from './marking-frame.js';
import { bindGroupInfo, layoutOf, pipelineGroupCount } from './metadata.js';
import { refuseWhileRecording } from './recorder.js';

/**
 * Where each carve of a step goes: made by {@link planPlacement}, used by {@link placedArena}.
 *
 * @example
 * ```ts
 * import { alloc } from '@pol/core';
 * import { type Placement, planPlacement } from '@pol/webgpu';
 * const placement: Placement = await planPlacement(device, (space) => {
 *   alloc(space, 'float32', [256]); // no dispatch: nothing conflicts, one slab
 *   alloc(space, 'float32', [256]);
 * });
 * console.log(placement.slabs, placement.carves, placement.bytes, placement.slabOf(1)); // 1 2 [ 2048 ] 0
 * ```
 */
export interface Placement {
  /** Its label (`planPlacement`'s option, or `'placement'`), for the slabs' labels and messages. */
  readonly label: string;
  /** How many slabs the carves need. */
  readonly slabs: number;
  /** Each slab's size in bytes: the peak the warm-up's carves reach in it. */
  readonly bytes: readonly number[];
  /** Extra `GPUBufferUsage` each slab needs (UNIFORM where a carve is bound as a uniform, INDIRECT for indirect arguments). */
  readonly usage: readonly number[];
  /** The alignment the slabs were sized with (and their arenas get). */
  readonly alignment: number;
  /** How many carve ordinals the warm-up used: a placed arena refuses more. */
  readonly carves: number;
  /** Pairs of carves that must not share a buffer. */
  readonly conflicts: number;
  /** The slab of the carve with this ordinal. */
  slabOf(carve: number): number;
  /** The largest binding size the warm-up carved at this ordinal: a placed arena refuses a larger carve there. */
  bytesOf(carve: number): number;
}

/**
 * Options of {@link planPlacement}.
 *
 * @example
 * ```ts
 * import { alloc } from '@pol/core';
 * import { planPlacement, type PlacementOptions } from '@pol/webgpu';
 * const options: PlacementOptions = { label: 'block' };
 * const placement = await planPlacement(device, (space) => void alloc(space, 'float32', [4]), options);
 * console.log(placement.label); // 'block'
 * ```
 */
export interface PlacementOptions {
  /** A name for messages and the slabs' labels. Default `'placement'`. */
  readonly label?: string;
  /** The placed arenas' alignment (a power of two, at least the device's offset alignments). Default: `deviceArena`'s. */
  readonly alignment?: number;
}

type Event =
  | { readonly k: 'carve'; readonly ordinal: number; readonly bytes: number }
  | { readonly k: 'mark'; readonly id: number }
  | { readonly k: 'rewind'; readonly id: number };

interface PlanningPosition {
  readonly ordinal: number;
  readonly id: number;
}

/** The warm-up's space: every carve an arena of its own; a log of carves and rewinds. */
class PlanningSpace extends PositionedSpace<PlanningPosition> {
  // How messages name it: a static getter keeps `instanceof` fast (CONTRIBUTING.md, "Class names").
  static override get name(): string {
    return 'planning space';
  }
  readonly log: Event[] = [];
  readonly byBuffer = new Map<GPUBuffer, number>();
  readonly own: Arena<'gpu'>[] = [];
  readonly largest: number[] = [];
  ordinal = 0;
  #marks = 0;

  constructor(
    readonly device: GPUDevice,
    readonly label: string,
  ) {
    super();
  }

  alloc<D extends DType>(dtype: D, dims: readonly number[]): ArrayOf<'gpu', D> {
    const bytes = bindingSize(byteLength(dtype, dims));
    const arena = deviceArena(this.device, bytes, {
      label: `${this.label} planning #${this.ordinal}`,
      usage: Usage.UNIFORM | Usage.INDIRECT,
    });
    this.own.push(arena);
    const array = arena.alloc(dtype, dims);
    const n = this.ordinal++;
    this.byBuffer.set(arena.slab.buffer, n);
    this.largest[n] = Math.max(this.largest[n] ?? 0, bytes);
    this.log.push({ k: 'carve', ordinal: n, bytes });
    return array;
  }

  position(): PlanningPosition {
    const id = this.#marks++;
    this.log.push({ k: 'mark', id });
    return { ordinal: this.ordinal, id };
  }

  rewind(token: PlanningPosition): void {
    this.ordinal = token.ordinal;
    this.log.push({ k: 'rewind', id: token.id });
  }

  override toString(): string {
    return `the planning space of placement '${this.label}'`;
  }
}

/** The placement hook: what each dispatch of the warm-up binds, by carve ordinal. */
class Planner implements PlanningHook {
  /** Conflicting pairs of carve ordinals, as 'a,b' with a < b. */
  readonly edges = new Set<string>();
  readonly usage = new Map<number, number>();
  unknown: string | undefined;

  constructor(readonly space: PlanningSpace) {}

  encoder(): CommandObserver {
    return { methods: passMethodsOfEncoder, pass: () => this.#pass() };
  }

  #pass(): CommandObserver {
    let pipeline: GPUComputePipeline | undefined;
    const groups: (SetGroup | undefined)[] = [];
    return {
      methods: passMethods,
      before: (name: string, args: Args) => {
        if (name === 'dispatchWorkgroups') this.dispatch(pipeline, groups, undefined);
        else if (name === 'dispatchWorkgroupsIndirect') this.dispatch(pipeline, groups, args[0] as GPUBuffer);
      },
      after: (name: string, args: Args) => {
        if (name === 'setPipeline') pipeline = args[0] as GPUComputePipeline;
        else if (name === 'setBindGroup') {
          const group = args[1] as GPUBindGroup | null | undefined;
          groups[args[0] as number] =
            group === null || group === undefined ? undefined : { group, offsets: dynamicOffsets(args) };
        }
      },
    };
  }

  dispatch(
    pipeline: GPUComputePipeline | undefined,
    groups: readonly (SetGroup | undefined)[],
    indirect: GPUBuffer | undefined,
  ): void {
    const writes: number[] = [];
    const reads: number[] = [];
    const used = pipeline === undefined ? undefined : pipelineGroupCount(pipeline);
    const n = used === undefined ? groups.length : Math.min(used, groups.length);
    for (let g = 0; g < n; g++) {
      const set = groups[g];
      const info = set === undefined ? undefined : bindGroupInfo(set.group);
      if (info === undefined) continue;
      const layout = layoutOf(info.layout);
      for (const entry of info.entries) {
        const ordinal = this.space.byBuffer.get(entry.buffer);
        if (ordinal === undefined) continue; // not a carve of the step: another slab (weights, say)
        const kind = layout?.kinds.get(entry.binding);
        if (kind === undefined) {
          this.unknown ??= `group ${g} binding ${entry.binding} of a dispatch (pipeline '${pipeline?.label ?? ''}')`;
          continue;
        }
        if (kind === 'storage') writes.push(ordinal);
        else reads.push(ordinal);
        if (kind === 'uniform') this.usage.set(ordinal, (this.usage.get(ordinal) ?? 0) | Usage.UNIFORM);
      }
    }
    if (indirect !== undefined) {
      const ordinal = this.space.byBuffer.get(indirect);
      if (ordinal !== undefined) {
        reads.push(ordinal);
        this.usage.set(ordinal, (this.usage.get(ordinal) ?? 0) | Usage.INDIRECT);
      }
    }
    for (const w of writes) for (const r of reads) if (w !== r) this.edges.add(w < r ? `${w},${r}` : `${r},${w}`);
  }
}

const passMethodsOfEncoder: ReadonlySet<string> = new Set(['beginComputePass']);
const passMethods: ReadonlySet<string> = new Set([
  'setPipeline',
  'setBindGroup',
  'dispatchWorkgroups',
  'dispatchWorkgroupsIndirect',
]);

class PlacementImpl implements Placement {
  // How messages name it: a static getter keeps `instanceof` fast (CONTRIBUTING.md, "Class names").
  static get name(): string {
    return 'Placement';
  }
  readonly slabs: number;

  constructor(
    readonly label: string,
    readonly bytes: readonly number[],
    readonly usage: readonly number[],
    readonly alignment: number,
    readonly conflicts: number,
    readonly colours: readonly number[],
    readonly largest: readonly number[],
  ) {
    this.slabs = bytes.length;
  }

  get carves(): number {
    return this.colours.length;
  }

  slabOf(carve: number): number {
    return this.colours[carve] ?? 0;
  }

  bytesOf(carve: number): number {
    return this.largest[carve] ?? 0;
  }

  toString(): string {
    return `Placement('${this.label}', ${this.carves} carves on ${this.slabs} slabs of ${this.bytes.join(', ')} bytes, ${this.conflicts} conflicts)`;
  }
}

const optionKeys = ['label', 'alignment'] as const;

/**
 * Plan where the carves of a step go so that no dispatch binds one buffer both read-only and
 * writable: run `warmUp` once, eagerly and for real, on a planning space (every carve a buffer of
 * its own), watching what each dispatch binds; then colour the conflicts and size the slabs (see
 * this module's comment). `warmUp` carves everything the step will carve from a placed arena, in
 * the same order (the model's arrays too, if they are to live there), and runs the step; arrays
 * of other arenas (weights in a read-only slab, say) are left where they are.
 *
 * Compile the pipelines first and hand the device to Pol before compiling them
 * (`instrument(device)`), so that Pol knows each binding's type.
 *
 * @throws {InvalidArgumentError} (synchronously) for a bad device, warm-up or option, or an async warm-up.
 * @throws {CaptureViolation} (synchronously) while the device records a capture.
 * @throws {DeviceLostError} when the device is lost.
 * @throws {PlacementError} (as a rejection) when the warm-up produced a validation error, or bound
 * a carve through a layout whose binding types Pol does not know.
 * @example
 * ```ts
 * import { alloc, scratchspace, type Space } from '@pol/core';
 * import { bindGroup, capture, download, instrument, placedArena, planPlacement, upload } from '@pol/webgpu';
 * instrument(device); // before compiling: Pol reads each binding's type from the layouts
 * // Third-party style kernels: every input `read`.
 * const kernel = (body: string, inputs: number) =>
 *   device.createComputePipeline({
 *     layout: 'auto',
 *     compute: {
 *       entryPoint: 'main',
 *       module: device.createShaderModule({
 *         code: `${Array.from({ length: inputs }, (_, i) => `@group(0) @binding(${i}) var<storage, read> in${i}: array<f32>;`).join('\n')}
 *         @group(0) @binding(${inputs}) var<storage, read_write> out: array<f32>;
 *         @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3u) {
 *           let i = id.x; if (i < arrayLength(&out)) { out[i] = ${body}; }
 *         }`,
 *       }),
 *     },
 *   });
 * const double = kernel('2.0 * in0[i]', 1);
 * const add = kernel('in0[i] + in1[i]', 2);
 * const run = (pipeline: GPUComputePipeline, pass: GPUComputePassEncoder, arrays: Parameters<typeof bindGroup>[2]) => {
 *   pass.setPipeline(pipeline);
 *   pass.setBindGroup(0, bindGroup(device, pipeline.getBindGroupLayout(0), arrays));
 *   pass.dispatchWorkgroups(1);
 * };
 * // y = x + 2x, a residual: x, h = 2x and y pairwise conflict (a triangle), so three slabs.
 * const model = (space: Space<'gpu'>) => {
 *   const x = alloc(space, 'float32', [64]);
 *   const y = alloc(space, 'float32', [64]);
 *   const step = () =>
 *     scratchspace(space, (frame) => {
 *       const h = alloc(frame, 'float32', [64]);
 *       const encoder = device.createCommandEncoder();
 *       const pass = encoder.beginComputePass();
 *       run(double, pass, [x, h]);
 *       run(add, pass, [x, h, y]);
 *       pass.end();
 *       device.queue.submit([encoder.finish()]);
 *     });
 *   return { x, y, step };
 * };
 * const placement = await planPlacement(device, (space) => model(space).step(), { label: 'residual' });
 * const arena = placedArena(device, placement);
 * const { x, y, step } = model(arena); // the same carves, in the same order
 * upload(x, new Float32Array(64).fill(1));
 * const graph = await capture(device, step);
 * graph.replay();
 * console.log(placement.slabs, (await download(y)).data[0]); // 3 3
 * graph.dispose();
 * arena.destroy();
 * ```
 */
export function planPlacement(
  device: GPUDevice,
  warmUp: (space: Space<'gpu'>) => void,
  options?: PlacementOptions,
): Promise<Placement> {
  const call = 'planPlacement(device, warmUp, options)';
  assertDevice(device, call);
  if (typeof warmUp !== 'function') {
    throw new InvalidArgumentError(
      `${call} needs a function warmUp, got ${describeValue(warmUp)}. Pass (space) => { ...the step... }.`,
    );
  }
  if (isAsyncFunction(warmUp)) {
    throw new InvalidArgumentError(
      `${call} needs a synchronous warm-up, got an async function: Pol watches the dispatches while it runs, and encoding is synchronous.`,
    );
  }
  const o = readOptions(call, options, optionKeys);
  if (o.label !== undefined && typeof o.label !== 'string') {
    throw new InvalidArgumentError(`${call}: label must be a string, got ${describeValue(o.label)}.`);
  }
  const label = o.label ?? 'placement';
  const state = stateOf(device, call);
  assertAlive(state, `plan placement '${label}'`);
  refuseWhileRecording(state, `planPlacement '${label}'`, 'Plan the placement before capture(): the warm-up makes buffers.');
  if (state.planner !== undefined) {
    throw new InvalidArgumentError(`${call}: a placement is being planned on ${deviceName(device)} already; plans do not nest.`);
  }
  const alignment = alignmentOf(device, o.alignment, call);
  const space = new PlanningSpace(device, label);
  const planner = new Planner(space);
  device.pushErrorScope('validation');
  state.planner = planner;
  let result: unknown;
  let scope: Promise<GPUError | null>;
  try {
    result = warmUp(space);
  } catch (error) {
    state.planner = undefined;
    void device.popErrorScope().catch(() => {});
    release(space);
    throw error;
  }
  state.planner = undefined;
  scope = device.popErrorScope();
  if (isThenable(result)) {
    (result as PromiseLike<unknown>).then(undefined, () => {});
    void scope.catch(() => {});
    release(space);
    throw new InvalidArgumentError(
      `${call}: the warm-up returned a promise. It must be synchronous: carve, encode and submit, and return.`,
    );
  }
  return finish(state, space, planner, scope, label, alignment);
}

/** The slabs' alignment: the option, checked as a uniform-capable slab's would be, or the default. */
function alignmentOf(device: GPUDevice, alignment: unknown, call: string): number {
  const chosen = alignment ?? Math.max(defaultAlignment(device), device.limits.minUniformBufferOffsetAlignment);
  checkAlignment(device, Usage.UNIFORM, chosen, call, 'Leave the alignment out for the default, or pass a larger power of two.');
  return chosen as number;
}

/** Destroy the planning buffers (once the work submitted so far is done: the slabs see to that). */
function release(space: PlanningSpace): void {
  for (const arena of space.own) arena.slab.destroy();
}

async function finish(
  state: DeviceState,
  space: PlanningSpace,
  planner: Planner,
  scope: Promise<GPUError | null>,
  label: string,
  alignment: number,
): Promise<Placement> {
  let error: GPUError | null;
  try {
    error = await scope;
  } finally {
    release(space);
  }
  assertAlive(state, `plan placement '${label}'`);
  if (error !== null) {
    throw new PlacementError(
      `planPlacement '${label}': the warm-up produced a validation error on ${deviceName(state.device)}, where every carve had a buffer of its own, ` +
        `so no placement can fix it (a kernel binding one array both ways, say). The device said: ${error.message.trim()}`,
    );
  }
  if (planner.unknown !== undefined) {
    throw new PlacementError(
      `planPlacement '${label}': ${planner.unknown} binds a carve through a layout whose binding types Pol does not know, ` +
        'so it cannot tell reads from writes. Call instrument(device) right after requestDevice(), before compiling the pipelines, and plan again.',
    );
  }
  const n = space.largest.length;
  const adjacent: number[][] = Array.from({ length: n }, () => []);
  for (const edge of planner.edges) {
    const [a, b] = edge.split(',').map(Number) as [number, number];
    adjacent[a]?.push(b);
    adjacent[b]?.push(a);
  }
  const colours = colour(n, adjacent);
  const slabs = Math.max(1, count(colours));
  const bytes = sizes(space.log, colours, slabs, alignment);
  const usage = new Array<number>(slabs).fill(0);
  for (const [ordinal, u] of planner.usage) usage[colours[ordinal] ?? 0] = (usage[colours[ordinal] ?? 0] ?? 0) | u;
  return new PlacementImpl(
    label,
    Object.freeze(bytes),
    Object.freeze(usage),
    alignment,
    planner.edges.size,
    Object.freeze(colours),
    Object.freeze([...space.largest].map((b) => b ?? 0)),
  );
}

/** Each slab's peak: the warm-up's carves and rewinds again, through one bump allocator per slab. */
function sizes(log: readonly Event[], colours: readonly number[], slabs: number, alignment: number): number[] {
  const offsets = new Array<number>(slabs).fill(0);
  const peaks = new Array<number>(slabs).fill(0);
  const marks = new Map<number, number[]>();
  for (const e of log) {
    if (e.k === 'mark') marks.set(e.id, [...offsets]);
    else if (e.k === 'rewind') offsets.splice(0, slabs, ...(marks.get(e.id) ?? offsets));
    else {
      const c = colours[e.ordinal] ?? 0;
      const start = Math.ceil((offsets[c] ?? 0) / alignment) * alignment;
      offsets[c] = start + e.bytes;
      peaks[c] = Math.max(peaks[c] ?? 0, start + e.bytes);
    }
  }
  return peaks.map((p) => Math.max(4, p));
}
