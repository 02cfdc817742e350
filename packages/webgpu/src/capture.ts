/**
 * Capture and replay: a software graph of a compute step.
 *
 * WebGPU has no graph capture for compute (a command buffer submits once; render bundles hold
 * render commands only), so `capture` runs the step for real, once, while recording the commands
 * it encodes and submits, and `replay` encodes the recording again into one encoder and one
 * submit, without running the step's JavaScript.
 *
 * How the recording works. For the step's synchronous run only, `capture` replaces methods on the
 * device's own instances and restores them in `finally`:
 *
 * - `device.createCommandEncoder` returns the real encoder, with its methods wrapped so that
 *   compute passes (pipeline, bind groups, dispatches), buffer copies, clears and debug markers are
 *   recorded as they are forwarded; any other encoder or pass method (render passes, texture
 *   copies, timestamp queries, …) is refused;
 * - `queue.submit` records which recorded command buffers were submitted, in order;
 * - what a graph could not replay faithfully is refused with a `CaptureViolation`: new GPU memory
 *   (`createBuffer`, `createTexture`, `createQuerySet`), compilation (`createShaderModule`,
 *   `create*Pipeline(Async)`), host writes (`queue.writeBuffer`, `writeTexture`,
 *   `copyExternalImageToTexture`), waits and readbacks (`queue.onSubmittedWorkDone`,
 *   `GPUBuffer.prototype.mapAsync`), and a nested `capture`.
 *
 * The step must be synchronous, so no other code can run while the device is wrapped.
 *
 * @module
 */

import type { Arena } from '@pol/arena';
import { describeValue, InvalidArgumentError } from '@pol/core';
import { arenasOver, assertDeviceArena, registerArena } from './arenas.js';
import { type BufferOwner, knownBufferPrototypes, ownerOf, type ReleaseListener } from './array.js';
import { dynamicOffsets } from './checked.js';
import { assertAlive, assertDevice, bindGroupInfo, type DeviceState, deviceName, type LossListener, stateOf } from './device.js';
import { CaptureFailedError, DeviceLostError, GpuCaptureViolation, GraphInvalidError } from './errors.js';
import { methodNames, patch } from './patch.js';
import type { DeviceSlab } from './slab.js';

/**
 * Options of {@link capture}.
 *
 * @example
 * ```ts
 * import { Arena } from '@pol/arena';
 * import { alloc } from '@pol/core';
 * import { type CaptureOptions, capture, deviceSlab } from '@pol/webgpu';
 * const arena = new Arena(deviceSlab(device, 1 << 16)); // not made by deviceArena: name it
 * const x = alloc(arena, 'float32', [64]);
 * const clear = () => {
 *   const encoder = device.createCommandEncoder();
 *   encoder.clearBuffer(x.buffer, x.offset, x.size);
 *   device.queue.submit([encoder.finish()]);
 * };
 * const options: CaptureOptions = { arenas: [arena], label: 'clear x' };
 * const graph = await capture(device, clear, options);
 * console.log(graph.label, graph.stats.copies); // 'clear x' 1
 * ```
 */
export interface CaptureOptions {
  /**
   * Arenas over device slabs the step uses, made with `new Arena(deviceSlab(…))` rather than
   * `deviceArena` (whose arenas Pol knows already). The graph pins the region it uses in each.
   */
  readonly arenas?: readonly Arena<'gpu'>[];
  /** A name for messages and for the replay encoder's label. */
  readonly label?: string;
}

/**
 * What a graph holds, counted.
 *
 * @example
 * ```ts
 * import { alloc } from '@pol/core';
 * import { capture, deviceArena, type GraphStats } from '@pol/webgpu';
 * const x = alloc(deviceArena(device, 4096), 'float32', [64]);
 * const graph = await capture(device, () => {
 *     const encoder = device.createCommandEncoder();
 *     encoder.clearBuffer(x.buffer, x.offset, x.size);
 *     device.queue.submit([encoder.finish()]);
 *   });
 * const { submits, passes, dispatches, copies }: GraphStats = graph.stats;
 * console.log(submits, passes, dispatches, copies); // 1 0 0 1
 * ```
 */
export interface GraphStats {
  /** Command buffers the step submitted (replayed as one). */
  readonly submits: number;
  /** Compute passes. */
  readonly passes: number;
  /** Dispatches, direct and indirect. */
  readonly dispatches: number;
  /** Buffer copies and clears. */
  readonly copies: number;
}

/**
 * A captured step: its recorded commands, replayable with one encoder and one submit.
 *
 * A graph binds the exact buffer ranges the step bound, so it stays valid only while those
 * ranges hold the same arrays: it becomes invalid (and `replay` throws at once, saying why) when
 * an arena it uses retracts or resets below the region it binds, when a slab or `Similar` buffer
 * it binds is destroyed or released, or when the device is lost. `dispose` releases it.
 *
 * @example
 * ```ts
 * import { alloc } from '@pol/core';
 * import { bindGroup, capture, deviceArena, download, type Graph, upload } from '@pol/webgpu';
 * const arena = deviceArena(device, 1 << 16);
 * const module = device.createShaderModule({
 *   code: `@group(0) @binding(0) var<storage, read_write> x: array<f32>;
 *   @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3u) {
 *     if (id.x < arrayLength(&x)) { x[id.x] *= 2.0; }
 *   }`,
 * });
 * const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
 * const x = alloc(arena, 'float32', [4]);
 * const double = () => {
 *   const encoder = device.createCommandEncoder();
 *   const pass = encoder.beginComputePass();
 *   pass.setPipeline(pipeline);
 *   pass.setBindGroup(0, bindGroup(device, pipeline.getBindGroupLayout(0), [x]));
 *   pass.dispatchWorkgroups(1);
 *   pass.end();
 *   device.queue.submit([encoder.finish()]);
 * };
 * upload(x, Float32Array.of(1, 2, 3, 4));
 * const graph: Graph = await capture(device, double); // runs once, for real: x is [2, 4, 6, 8]
 * graph.replay(); // [4, 8, 12, 16]
 * upload(x, Float32Array.of(1, 1, 1, 1)); // a new input, written before a replay
 * graph.replay();
 * console.log((await download(x)).data); // Float32Array(4) [ 2, 2, 2, 2 ]
 * graph.dispose();
 * ```
 */
export interface Graph extends Disposable {
  /** The device it replays on. */
  readonly device: GPUDevice;
  /** Its label (from `capture`'s options, or `'graph'`). */
  readonly label: string;
  /** False once the graph is invalid or disposed. */
  readonly valid: boolean;
  /** Why the graph is invalid, or `undefined` while it is valid. */
  readonly invalidReason: string | undefined;
  /** What it holds. */
  readonly stats: GraphStats;
  /**
   * Encode the recorded commands into one command encoder and submit it once. Runs none of the
   * step's JavaScript and creates no buffer and no bind group.
   *
   * @throws {GraphInvalidError} at once when the graph is invalid or disposed (naming why).
   * @throws {DeviceLostError} when the device is lost.
   */
  replay(): void;
  /** Unpin the arenas, forget the recording. Replaying afterwards throws. Idempotent. */
  dispose(): void;
}

// --- the recording -----------------------------------------------------------------------------

type DebugOp =
  | { readonly k: 'push'; readonly label: string }
  | { readonly k: 'pop' }
  | { readonly k: 'marker'; readonly label: string };

type PassOp =
  | { readonly k: 'pipeline'; readonly pipeline: GPUComputePipeline }
  | {
      readonly k: 'group';
      readonly index: number;
      readonly group: GPUBindGroup | null;
      readonly offsets: readonly number[] | undefined;
    }
  | { readonly k: 'dispatch'; readonly x: number; readonly y: number; readonly z: number }
  | { readonly k: 'indirect'; readonly buffer: GPUBuffer; readonly offset: number }
  | DebugOp;

type EncoderOp =
  | { readonly k: 'pass'; readonly descriptor: GPUComputePassDescriptor | undefined; readonly ops: PassOp[] }
  | {
      readonly k: 'copy';
      readonly source: GPUBuffer;
      readonly sourceOffset: number;
      readonly destination: GPUBuffer;
      readonly destinationOffset: number;
      readonly size: number;
    }
  | { readonly k: 'clear'; readonly buffer: GPUBuffer; readonly offset: number; readonly size: number }
  | DebugOp;

const recordedEncoder = new Set([
  'beginComputePass',
  'copyBufferToBuffer',
  'clearBuffer',
  'finish',
  'pushDebugGroup',
  'popDebugGroup',
  'insertDebugMarker',
]);
const recordedPass = new Set([
  'setPipeline',
  'setBindGroup',
  'dispatchWorkgroups',
  'dispatchWorkgroupsIndirect',
  'end',
  'pushDebugGroup',
  'popDebugGroup',
  'insertDebugMarker',
]);

class Recording {
  active = true;
  readonly finished = new WeakMap<GPUCommandBuffer, EncoderOp[]>();
  readonly submitted: EncoderOp[][] = [];
  readonly restores: (() => void)[] = [];

  constructor(
    readonly state: DeviceState,
    readonly label: string,
  ) {}

  violation(attempted: string, what: string, instead: string): GpuCaptureViolation {
    return new GpuCaptureViolation(
      attempted,
      `${what} was attempted while ${deviceName(this.state.device)} records capture '${this.label}'. ${instead}`,
    );
  }
}

// At most one capture records at a time, anywhere: the step runs synchronously, so a second
// capture can only start from inside the first one's step.
let active: Recording | undefined;

const memoryAdvice =
  "GPU memory created now would belong to this one eager run, not to the graph: replays would bind it behind the arena's back, " +
  'or bind it after it was destroyed. Allocate from an arena over a device slab made before capture (alloc(arena, dtype, dims)), ' +
  'or create it before capture().';
const compileAdvice =
  'Compiling is not a GPU command, so a graph cannot record it, and a step that compiles while it runs is not warm. ' +
  'Warm up first: run the step once eagerly before capture(), so its shader modules and pipelines exist, and reuse them.';
const writeAdvice =
  'A host write is not a GPU command, so replays would not repeat it, and it is how each replay gets new inputs. ' +
  'Write inputs (upload) before capture(), for its eager run, and before each replay().';
const waitAdvice =
  'A graph neither records nor performs waits or readbacks. Wait or read after capture() resolves, or after replay() (await download(y)).';

function sizeOf(descriptor: unknown): string {
  const d = descriptor as { size?: unknown; label?: unknown } | undefined;
  const label = typeof d?.label === 'string' && d.label !== '' ? ` '${d.label}'` : '';
  return typeof d?.size === 'number' ? `${d.size} bytes${label}` : `…${label}`;
}

function install(rec: Recording): void {
  const device = rec.state.device;
  const queue = device.queue;
  const restores = rec.restores;
  const refuse = (target: object, name: string, where: string, what: (args: unknown[]) => string, instead: string) => {
    restores.push(
      patch(
        target,
        name,
        (original) =>
          function (this: unknown, ...args: unknown[]) {
            if (rec.active) throw rec.violation(`${where}.${name}`, what(args), instead);
            return original.apply(this, args);
          },
      ),
    );
  };
  refuse(device, 'createBuffer', 'device', (a) => `device.createBuffer(${sizeOf(a[0])})`, memoryAdvice);
  refuse(device, 'createTexture', 'device', () => 'device.createTexture', memoryAdvice);
  refuse(device, 'createQuerySet', 'device', () => 'device.createQuerySet', memoryAdvice);
  for (const name of [
    'createShaderModule',
    'createComputePipeline',
    'createComputePipelineAsync',
    'createRenderPipeline',
    'createRenderPipelineAsync',
  ]) {
    refuse(device, name, 'device', () => `device.${name}`, compileAdvice);
  }
  for (const name of ['writeBuffer', 'writeTexture', 'copyExternalImageToTexture']) {
    refuse(queue, name, 'queue', () => `queue.${name}`, writeAdvice);
  }
  refuse(queue, 'onSubmittedWorkDone', 'queue', () => 'queue.onSubmittedWorkDone (a wait)', waitAdvice);
  for (const proto of knownBufferPrototypes()) {
    refuse(proto, 'mapAsync', 'buffer', () => 'buffer.mapAsync (a readback)', waitAdvice);
  }
  restores.push(
    patch(
      device,
      'createCommandEncoder',
      (original) =>
        function (this: unknown, ...args: unknown[]) {
          const encoder = original.apply(this, args);
          if (rec.active && encoder !== null && typeof encoder === 'object') recordEncoder(rec, encoder);
          return encoder;
        },
    ),
  );
  restores.push(
    patch(
      queue,
      'submit',
      (original) =>
        function (this: unknown, ...args: unknown[]) {
          if (!rec.active) return original.apply(this, args);
          const buffers = args[0];
          const lists: EncoderOp[][] = [];
          for (const cb of Array.isArray(buffers) ? buffers : Array.from(buffers as Iterable<unknown>)) {
            const list = rec.finished.get(cb as GPUCommandBuffer);
            if (list === undefined) {
              throw rec.violation(
                'queue.submit',
                'queue.submit of a command buffer encoded before the capture began (or on another device)',
                'A graph replays only the commands it saw encoded. Encode the step’s commands inside the step.',
              );
            }
            lists.push(list);
          }
          const result = original.apply(this, args);
          rec.submitted.push(...lists);
          return result;
        },
    ),
  );
}

function refuseOthers(rec: Recording, target: object, recorded: ReadonlySet<string>, where: string): void {
  for (const name of methodNames(target)) {
    if (recorded.has(name)) continue;
    patch(
      target,
      name,
      (original) =>
        function (this: unknown, ...args: unknown[]) {
          if (rec.active) {
            throw rec.violation(
              `${where}.${name}`,
              `${where}.${name}`,
              "Pol's graphs record compute passes (pipelines, bind groups, dispatches), buffer copies and clears, and debug markers only. " +
                `Keep ${name} out of the captured step.`,
            );
          }
          return original.apply(this, args);
        },
    );
  }
}

// Each recording wrapper forwards first and records after, so a call the device rejects records nothing.
function forward(target: object, name: string, rec: Recording, record: (args: unknown[], result: unknown) => void): void {
  patch(
    target,
    name,
    (original) =>
      function (this: unknown, ...args: unknown[]) {
        const result = original.apply(this, args);
        if (rec.active) record(args, result);
        return result;
      },
  );
}

function debugOps(target: object, rec: Recording, ops: (EncoderOp | PassOp)[]): void {
  forward(target, 'pushDebugGroup', rec, (a) => ops.push({ k: 'push', label: String(a[0]) }));
  forward(target, 'popDebugGroup', rec, () => ops.push({ k: 'pop' }));
  forward(target, 'insertDebugMarker', rec, (a) => ops.push({ k: 'marker', label: String(a[0]) }));
}

function recordEncoder(rec: Recording, encoder: object): void {
  const ops: EncoderOp[] = [];
  refuseOthers(rec, encoder, recordedEncoder, 'encoder');
  patch(
    encoder,
    'beginComputePass',
    (original) =>
      function (this: unknown, ...args: unknown[]) {
        const descriptor = args[0] as GPUComputePassDescriptor | undefined;
        if (rec.active && descriptor?.timestampWrites !== undefined) {
          throw rec.violation(
            'encoder.beginComputePass',
            'encoder.beginComputePass with timestampWrites',
            'Pol’s graphs do not record timestamp queries. Time replays from outside, or leave timestampWrites out of the captured step.',
          );
        }
        const pass = original.apply(this, args);
        if (rec.active && pass !== null && typeof pass === 'object') {
          const passOps: PassOp[] = [];
          ops.push({ k: 'pass', descriptor: descriptor === undefined ? undefined : { ...descriptor }, ops: passOps });
          recordPass(rec, pass, passOps);
        }
        return pass;
      },
  );
  forward(encoder, 'copyBufferToBuffer', rec, (a) => {
    // Both forms: (source, sourceOffset, destination, destinationOffset, size?) and (source, destination, size?).
    const long = typeof a[1] === 'number';
    const source = a[0] as GPUBuffer;
    const sourceOffset = long ? (a[1] as number) : 0;
    const destination = (long ? a[2] : a[1]) as GPUBuffer;
    const destinationOffset = long ? (a[3] as number) : 0;
    const given = long ? a[4] : a[2];
    const size = typeof given === 'number' ? given : source.size - sourceOffset;
    ops.push({ k: 'copy', source, sourceOffset, destination, destinationOffset, size });
  });
  forward(encoder, 'clearBuffer', rec, (a) => {
    const buffer = a[0] as GPUBuffer;
    const offset = typeof a[1] === 'number' ? a[1] : 0;
    const size = typeof a[2] === 'number' ? a[2] : buffer.size - offset;
    ops.push({ k: 'clear', buffer, offset, size });
  });
  debugOps(encoder, rec, ops);
  forward(encoder, 'finish', rec, (_a, commandBuffer) => {
    if (commandBuffer !== null && typeof commandBuffer === 'object') rec.finished.set(commandBuffer as GPUCommandBuffer, ops);
  });
}

function recordPass(rec: Recording, pass: object, ops: PassOp[]): void {
  refuseOthers(rec, pass, recordedPass, 'pass');
  forward(pass, 'setPipeline', rec, (a) => ops.push({ k: 'pipeline', pipeline: a[0] as GPUComputePipeline }));
  forward(pass, 'setBindGroup', rec, (a) =>
    ops.push({ k: 'group', index: a[0] as number, group: a[1] as GPUBindGroup | null, offsets: dynamicOffsets(a) }),
  );
  forward(pass, 'dispatchWorkgroups', rec, (a) =>
    ops.push({
      k: 'dispatch',
      x: a[0] as number,
      y: typeof a[1] === 'number' ? a[1] : 1,
      z: typeof a[2] === 'number' ? a[2] : 1,
    }),
  );
  forward(pass, 'dispatchWorkgroupsIndirect', rec, (a) =>
    ops.push({ k: 'indirect', buffer: a[0] as GPUBuffer, offset: a[1] as number }),
  );
  debugOps(pass, rec, ops);
}

// --- the graph ---------------------------------------------------------------------------------

interface Pin {
  readonly arena: Arena<'gpu'>;
  /** The graph binds bytes below this offset that stay allocated after the capture. */
  readonly end: number;
}

class GraphImpl implements Graph, ReleaseListener, LossListener {
  readonly stats: GraphStats;
  #ops: readonly EncoderOp[];
  #invalid: string | undefined;
  #lost = false;
  #detach: (() => void)[] = [];
  readonly #encoderDescriptor: GPUCommandEncoderDescriptor;
  readonly #submitList: GPUCommandBuffer[] = [];

  constructor(
    readonly state: DeviceState,
    readonly label: string,
    ops: readonly EncoderOp[],
    stats: GraphStats,
  ) {
    this.#ops = ops;
    this.stats = stats;
    this.#encoderDescriptor = { label: `pol graph '${label}'` };
  }

  get device(): GPUDevice {
    return this.state.device;
  }

  get valid(): boolean {
    return this.#invalid === undefined;
  }

  get invalidReason(): string | undefined {
    return this.#invalid;
  }

  /** Start listening: the arenas' releases, the buffers' owners, the device's loss. */
  attach(pins: readonly Pin[], owners: readonly BufferOwner[]): void {
    for (const { arena, end } of pins) {
      if (end === 0) continue;
      this.#detach.push(
        arena.observe((event) => {
          if (event.offset >= end) return;
          const what = event.kind === 'reset' ? 'was reset' : `retracted to offset ${event.offset}`;
          this.invalidate(
            `${String(arena)} ${what}, below the ${end} bytes of it that the graph binds, which may now hold other arrays`,
          );
        }),
      );
    }
    for (const owner of owners) {
      owner.listeners.add(this);
      this.#detach.push(() => owner.listeners.delete(this));
    }
    this.state.listeners.add(this);
    this.#detach.push(() => this.state.listeners.delete(this));
  }

  invalidate(reason: string): void {
    if (this.#invalid !== undefined) return;
    this.#invalid = reason;
    const detach = this.#detach;
    this.#detach = [];
    for (const f of detach) f();
    this.#ops = [];
  }

  bufferReleased(owner: BufferOwner): void {
    this.invalidate(`${owner.name}, which it binds, is gone: ${owner.released ?? 'released'}`);
  }

  deviceLost(reason: string): void {
    this.#lost = true;
    this.invalidate(`${deviceName(this.device)} was ${reason === 'destroyed' ? 'destroyed' : 'lost'}`);
  }

  replay(): void {
    if (this.#invalid !== undefined) throw this.#refusal(this.#invalid);
    const device = this.device;
    const encoder = device.createCommandEncoder(this.#encoderDescriptor);
    for (const op of this.#ops) {
      switch (op.k) {
        case 'pass': {
          const pass = encoder.beginComputePass(op.descriptor);
          for (const p of op.ops) replayPassOp(pass, p);
          pass.end();
          break;
        }
        case 'copy':
          encoder.copyBufferToBuffer(op.source, op.sourceOffset, op.destination, op.destinationOffset, op.size);
          break;
        case 'clear':
          encoder.clearBuffer(op.buffer, op.offset, op.size);
          break;
        case 'push':
          encoder.pushDebugGroup(op.label);
          break;
        case 'pop':
          encoder.popDebugGroup();
          break;
        case 'marker':
          encoder.insertDebugMarker(op.label);
          break;
      }
    }
    const list = this.#submitList;
    list[0] = encoder.finish();
    try {
      device.queue.submit(list);
    } finally {
      list.length = 0;
    }
  }

  dispose(): void {
    this.invalidate(`graph '${this.label}' was disposed`);
  }

  [Symbol.dispose](): void {
    this.dispose();
  }

  toString(): string {
    const s = this.stats;
    return `Graph('${this.label}', ${s.dispatches} dispatches, ${s.copies} copies on ${deviceName(this.device)}${this.valid ? '' : ', invalid'})`;
  }

  #refusal(reason: string): Error {
    if (this.#lost) {
      const lost = this.state.lost;
      return new DeviceLostError(
        lost?.reason ?? 'unknown',
        `Cannot replay graph '${this.label}': ${reason}. Request a new device, then make its slabs and arenas and capture again.`,
      );
    }
    return new GraphInvalidError(
      reason,
      `Cannot replay graph '${this.label}': ${reason}. A graph replays against the exact buffer ranges it recorded and never rebinds: ` +
        'capture the step again once its arrays are allocated again (warm up, size the slab, capture), and dispose graphs you no longer replay.',
    );
  }
}

function replayPassOp(pass: GPUComputePassEncoder, op: PassOp): void {
  switch (op.k) {
    case 'pipeline':
      pass.setPipeline(op.pipeline);
      break;
    case 'group':
      if (op.offsets === undefined) pass.setBindGroup(op.index, op.group);
      else pass.setBindGroup(op.index, op.group, op.offsets);
      break;
    case 'dispatch':
      pass.dispatchWorkgroups(op.x, op.y, op.z);
      break;
    case 'indirect':
      pass.dispatchWorkgroupsIndirect(op.buffer, op.offset);
      break;
    case 'push':
      pass.pushDebugGroup(op.label);
      break;
    case 'pop':
      pass.popDebugGroup();
      break;
    case 'marker':
      pass.insertDebugMarker(op.label);
      break;
  }
}

// --- capture -----------------------------------------------------------------------------------

const AsyncFunction = (async () => {}).constructor;
const captureOptionKeys = new Set(['arenas', 'label']);

function readOptions(device: GPUDevice, options: unknown): { arenas: readonly Arena<'gpu'>[]; label: string } {
  if (options === undefined) return { arenas: [], label: 'graph' };
  if (typeof options !== 'object' || options === null) {
    throw new InvalidArgumentError(
      `capture: options must be an object such as { label: 'forward' }, got ${describeValue(options)}.`,
    );
  }
  for (const key of Object.keys(options)) {
    if (!captureOptionKeys.has(key))
      throw new InvalidArgumentError(`capture: unknown option '${key}'. The options are arenas and label.`);
  }
  const o = options as { arenas?: unknown; label?: unknown };
  if (o.label !== undefined && typeof o.label !== 'string') {
    throw new InvalidArgumentError(`capture: label must be a string, got ${describeValue(o.label)}.`);
  }
  const arenas = o.arenas ?? [];
  if (!Array.isArray(arenas)) {
    throw new InvalidArgumentError(`capture: arenas must be an array of arenas, got ${describeValue(arenas)}.`);
  }
  for (const arena of arenas) assertDeviceArena(arena, device, 'capture: options.arenas');
  return { arenas: arenas as Arena<'gpu'>[], label: o.label ?? 'graph' };
}

function isThenable(x: unknown): boolean {
  return (typeof x === 'object' || typeof x === 'function') && x !== null && typeof (x as { then?: unknown }).then === 'function';
}

/**
 * Run `step` once, eagerly and for real, while recording the commands it submits to `device`, and
 * resolve to a {@link Graph} that replays them with one encoder and one submit. The step's results
 * are computed by this run, exactly as without capture.
 *
 * The step must be warm and synchronous, and allocate only from arenas over device slabs made
 * before the capture: while it runs, `capturing(x)` is true for the device's arrays, and creating
 * GPU memory or compiling, host writes, readbacks and waits, and a nested capture are refused
 * with a `CaptureViolation` (synchronously, at the offending call). The step runs inside a
 * validation error scope; the promise rejects with {@link CaptureFailedError}, carrying the
 * device's message, if the step produced a validation or out-of-memory error.
 *
 * The graph pins the region of each arena it binds (arenas made by `deviceArena`, or listed in
 * `options.arenas`): a retract or reset below that region invalidates it. Arrays the step carves
 * inside a frame that closes within the step are scratch: each replay reuses their bytes, so do
 * not keep anything there between replays.
 *
 * @throws {InvalidArgumentError} (synchronously) for a bad device, step or option, or an async step.
 * @throws {CaptureViolation} (synchronously) for a nested capture, or anything the step attempts that a graph cannot hold.
 * @throws {DeviceLostError} when the device is lost.
 * @throws {CaptureFailedError} (synchronously) when the step submitted nothing, binds a released
 * buffer, or binds a slab whose arena Pol does not know; (as a rejection) for a device error.
 * @example
 * ```ts
 * import { type Arena, watermark } from '@pol/arena';
 * import { alloc, scratchspace } from '@pol/core';
 * import { bindGroup, capture, deviceArena, download, type GpuArray, upload } from '@pol/webgpu';
 *
 * const module = device.createShaderModule({
 *   code: `@group(0) @binding(0) var<storage, read_write> src: array<f32>;
 *   @group(0) @binding(1) var<storage, read_write> dst: array<f32>;
 *   @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3u) {
 *     if (id.x < arrayLength(&dst)) { dst[id.x] = 2.0 * src[id.x]; }
 *   }`,
 * });
 * const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
 *
 * // The step: y = 4x, through t = 2x, a scratch array in a frame.
 * function step(arena: Arena<'gpu'>, x: GpuArray<'float32'>, y: GpuArray<'float32'>): void {
 *   scratchspace(arena, (frame) => {
 *     const t = alloc(frame, 'float32', x.dims);
 *     const encoder = device.createCommandEncoder();
 *     const pass = encoder.beginComputePass();
 *     pass.setPipeline(pipeline);
 *     for (const [src, dst] of [[x, t], [t, y]] as const) {
 *       pass.setBindGroup(0, bindGroup(device, pipeline.getBindGroupLayout(0), [src, dst]));
 *       pass.dispatchWorkgroups(Math.ceil(x.length / 64));
 *     }
 *     pass.end();
 *     device.queue.submit([encoder.finish()]);
 *   });
 * }
 *
 * // 1. Warm up eagerly, on a generous arena (the pipeline is compiled already).
 * const warm = deviceArena(device, 1 << 20, { label: 'warm-up' });
 * step(warm, alloc(warm, 'float32', [1000]), alloc(warm, 'float32', [1000]));
 * // 2. Read the watermark: the peak bytes the step used, scratch included.
 * const bytes = watermark(warm);
 * warm.slab.destroy();
 * // 3. Size the slab from it, and make the same allocations.
 * const arena = deviceArena(device, bytes, { label: 'step' });
 * const x = alloc(arena, 'float32', [1000]);
 * const y = alloc(arena, 'float32', [1000]);
 * // 4. Capture: the step runs once, for real, while its commands are recorded.
 * upload(x, new Float32Array(1000).fill(1));
 * const graph = await capture(device, () => step(arena, x, y), { label: 'y = 4x' });
 * // 5. Replay: write new inputs into the captured arrays, replay, read.
 * upload(x, new Float32Array(1000).fill(3));
 * graph.replay(); // one encoder, one submit, none of the step's JavaScript
 * console.log(bytes, (await download(y)).data[999]); // 12192 12
 * graph.dispose();
 * ```
 */
export function capture(device: GPUDevice, step: () => void, options?: CaptureOptions): Promise<Graph> {
  assertDevice(device, 'capture(device, step)');
  if (typeof step !== 'function') {
    throw new InvalidArgumentError(
      `capture(device, step) needs a function step, got ${describeValue(step)}. Pass () => { ... }.`,
    );
  }
  if (step instanceof AsyncFunction) {
    throw new InvalidArgumentError(
      'capture(device, step) needs a synchronous step, got an async function. Encoding and submitting are synchronous in WebGPU; ' +
        'what a step would await (mapAsync, onSubmittedWorkDone, pipeline creation) is not allowed under capture anyway.',
    );
  }
  const { arenas, label } = readOptions(device, options);
  const state = stateOf(device);
  if (active !== undefined) {
    throw active.violation(
      'capture',
      `capture('${label}') on ${deviceName(device)}`,
      'Captures do not nest. To compose graphs, call graph.replay() inside the step: its commands are recorded like any others.',
    );
  }
  assertAlive(state, `capture '${label}'`);
  const rec = new Recording(state, label);
  device.pushErrorScope('out-of-memory');
  device.pushErrorScope('validation');
  let scopes: Promise<GPUError | null>[] | undefined;
  let result: unknown;
  active = rec;
  state.recording = rec;
  try {
    install(rec);
    result = step();
  } finally {
    rec.active = false;
    for (let i = rec.restores.length - 1; i >= 0; i--) rec.restores[i]?.();
    active = undefined;
    state.recording = undefined;
    scopes = [device.popErrorScope(), device.popErrorScope()];
    // Until finish() awaits them, a failure below must not leave them unhandled.
    for (const scope of scopes) scope.catch(() => {});
  }
  if (isThenable(result)) {
    (result as PromiseLike<unknown>).then(undefined, () => {});
    throw new InvalidArgumentError(
      `capture '${label}': the step returned a promise. A captured step must be synchronous: encode and submit its work, and return.`,
    );
  }
  const graph = build(rec, arenas);
  return finish(graph, scopes);
}

function build(rec: Recording, extra: readonly Arena<'gpu'>[]): GraphImpl {
  const { state, label } = rec;
  const device = state.device;
  if (rec.submitted.length === 0) {
    throw new CaptureFailedError(
      `capture '${label}' recorded nothing: the step submitted no command buffer to ${deviceName(device)}. ` +
        'Encode and submit the work inside the step (device.queue.submit([encoder.finish()])); commands encoded but never submitted are not part of a graph.',
    );
  }
  const ops = rec.submitted.flat();
  const stats = { submits: rec.submitted.length, passes: 0, dispatches: 0, copies: 0 };
  const touched = new Map<BufferOwner, number[]>(); // owner → [start, end, start, end, …]
  const touch = (buffer: GPUBuffer, offset: number, size: number) => {
    const owner = ownerOf(buffer);
    if (owner === undefined) return;
    let ranges = touched.get(owner);
    if (ranges === undefined) {
      ranges = [];
      touched.set(owner, ranges);
    }
    ranges.push(offset, offset + size);
  };
  for (const op of ops) {
    if (op.k === 'copy') {
      stats.copies++;
      touch(op.source, op.sourceOffset, op.size);
      touch(op.destination, op.destinationOffset, op.size);
    } else if (op.k === 'clear') {
      stats.copies++;
      touch(op.buffer, op.offset, op.size);
    } else if (op.k === 'pass') {
      stats.passes++;
      for (const p of op.ops) {
        if (p.k === 'dispatch') stats.dispatches++;
        else if (p.k === 'indirect') {
          stats.dispatches++;
          touch(p.buffer, p.offset, 12);
        } else if (p.k === 'group' && p.group !== null) {
          for (const e of bindGroupInfo(p.group)?.entries ?? []) touch(e.buffer, e.offset, e.size);
        }
      }
    }
  }
  const pins: Pin[] = [];
  for (const [owner, ranges] of touched) {
    if (owner.released !== undefined) {
      throw new CaptureFailedError(
        `capture '${label}': the step used ${owner.name}, which is gone (${owner.released}), so the graph could never replay. ` +
          'Bind only live arrays in the step.',
      );
    }
    if (owner.kind !== 'slab') continue;
    const slab = owner as unknown as DeviceSlab;
    const over = new Set([...arenasOver(slab), ...extra.filter((a) => a.slab === slab)]);
    if (over.size === 0) {
      throw new CaptureFailedError(
        `capture '${label}': the step binds ${owner.name}, but no arena over it is known to @pol/webgpu, so a retract or reset that ` +
          'hands those bytes to other arrays could not invalidate the graph. Make the arena with deviceArena(device, bytes), or name it: ' +
          'capture(device, step, { arenas: [arena] }).',
      );
    }
    for (const arena of over) {
      const offset = arena.offset;
      let end = 0;
      for (let i = 0; i < ranges.length; i += 2) {
        const start = ranges[i] ?? 0;
        const stop = ranges[i + 1] ?? 0;
        if (start < offset) end = Math.max(end, Math.min(stop, offset));
      }
      pins.push({ arena, end });
    }
  }
  for (const arena of extra) registerArena(arena);
  const graph = new GraphImpl(state, label, ops, Object.freeze(stats));
  graph.attach(pins, [...touched.keys()]);
  return graph;
}

async function finish(graph: GraphImpl, scopes: readonly Promise<GPUError | null>[]): Promise<Graph> {
  let errors: (GPUError | null)[];
  try {
    errors = await Promise.all(scopes);
  } catch (cause) {
    graph.dispose();
    assertAlive(graph.state, `capture '${graph.label}'`);
    throw new CaptureFailedError(`capture '${graph.label}': reading the device's error scopes failed.`, { cause });
  }
  const error = errors.find((e) => e !== null && e !== undefined);
  if (error !== undefined && error !== null) {
    graph.dispose();
    const kind = error.constructor?.name === 'GPUOutOfMemoryError' ? 'an out-of-memory' : 'a validation';
    throw new CaptureFailedError(
      `capture '${graph.label}': the step produced ${kind} error on ${deviceName(graph.device)}, so its results are wrong and the graph would replay the same fault. ` +
        `The device said: ${error.message.trim()}`,
    );
  }
  if (graph.state.lost !== undefined) {
    graph.dispose();
    assertAlive(graph.state, `capture '${graph.label}'`);
  }
  return graph;
}
