/**
 * Capture and replay, the entry point: `capture(device, step)` runs the step once, eagerly and for
 * real, with a recording switched on for the device (`recorder.ts`), then turns what it recorded
 * into a graph (`graph.ts`) that watches what it touches (`pins.ts`).
 *
 * WebGPU has no graph capture for compute (a command buffer submits once; render bundles hold
 * render commands only), so this is a software graph. The step must be synchronous, so nothing
 * else can run while the recording is on.
 *
 * @module
 */

import type { Arena } from '@pol/arena';
import { InvalidArgumentError } from '@pol/core';
import { describeValue, isAsyncFunction, isThenable, readOptions } from '@pol/core/backend';
import { assertAlive, assertDevice } from './device.js';
import { CaptureFailedError } from './errors.js';
import { type Graph, GraphImpl } from './graph.js';
import { stateOf } from './instrument.js';
import { pinsOf, touched } from './pins.js';
import { Recorder, refuseWhileRecording } from './recorder.js';
import { assertDeviceArena } from './slab-arenas.js';

/**
 * Options of {@link capture}.
 *
 * @example
 * ```ts
 * import { Arena } from '@pol/arena';
 * import { alloc } from '@pol/core';
 * import { type CaptureOptions, capture, deviceSlab } from '@pol/webgpu';
 * const arena = new Arena(deviceSlab(device, 1 << 16)); // known to Pol, as every arena over a device slab is
 * const x = alloc(arena, 'float32', [64]);
 * const clear = () => {
 *   const encoder = device.createCommandEncoder();
 *   encoder.clearBuffer(x.buffer, x.offset, x.size);
 *   device.queue.submit([encoder.finish()]);
 * };
 * const options: CaptureOptions = { label: 'clear x' };
 * const graph = await capture(device, clear, options);
 * console.log(graph.label, graph.stats.copies); // 'clear x' 1
 * ```
 */
export interface CaptureOptions {
  /**
   * Arenas over device slabs the step uses. Not needed: Pol knows every arena over its device
   * slabs (`@pol/arena` tells the slab's storage of each one made), and the graph pins the region
   * it binds in each. Still accepted, and checked (arenas over device slabs of this device), for
   * code that named arenas built with `new Arena(deviceSlab(…))`, which used to be required.
   */
  readonly arenas?: readonly Arena<'gpu'>[];
  /** A name for messages and for the replay encoder's label. */
  readonly label?: string;
}

const call = 'capture(device, step, options)';
const optionKeys = ['arenas', 'label'] as const;

function readCaptureOptions(device: GPUDevice, options: unknown): { label: string } {
  const o = readOptions(call, options, optionKeys);
  if (o.label !== undefined && typeof o.label !== 'string') {
    throw new InvalidArgumentError(`${call}: label must be a string, got ${describeValue(o.label)}.`);
  }
  const arenas = o.arenas ?? [];
  if (!Array.isArray(arenas)) {
    throw new InvalidArgumentError(`${call}: arenas must be an array of arenas, got ${describeValue(arenas)}.`);
  }
  for (const arena of arenas) assertDeviceArena(arena, device, `${call}: options.arenas`);
  return { label: o.label ?? 'graph' };
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
 * The graph pins the region it binds in every arena over the device slabs it uses (whoever made
 * the arena): a retract or reset below that region invalidates it. Arrays the step carves
 * inside a frame that closes within the step are scratch: each replay reuses their bytes, so do
 * not keep anything there between replays.
 *
 * @throws {InvalidArgumentError} (synchronously) for a bad device, step or option, or an async step.
 * @throws {CaptureViolation} (synchronously) for a nested capture on the same device, or anything the step attempts that a
 * graph cannot hold.
 * @throws {DeviceLostError} when the device is lost.
 * @throws {CaptureFailedError} (synchronously) when the step submitted nothing, uses a released
 * buffer, or a buffer made before Pol met the device (which a graph could not watch); (as a
 * rejection) for a device error.
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
  if (isAsyncFunction(step)) {
    throw new InvalidArgumentError(
      'capture(device, step) needs a synchronous step, got an async function. Encoding and submitting are synchronous in WebGPU; ' +
        'what a step would await (mapAsync, onSubmittedWorkDone, pipeline creation) is not allowed under capture anyway.',
    );
  }
  const { label } = readCaptureOptions(device, options);
  const state = stateOf(device);
  refuseWhileRecording(
    state,
    `capture('${label}')`,
    'Captures do not nest on one device: to compose graphs, call graph.replay() inside the step (its commands are recorded).',
  );
  assertAlive(state, `capture '${label}'`);
  const recorder = new Recorder(state, label);
  // Clears noted eagerly before the capture belong to no graph: they go to the queue now.
  state.clears.flush();
  device.pushErrorScope('out-of-memory');
  device.pushErrorScope('validation');
  let scopes: Promise<GPUError | null>[];
  let result: unknown;
  state.recorder = recorder;
  try {
    result = step();
  } finally {
    recorder.active = false;
    state.recorder = undefined;
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
  return finish(build(recorder), scopes);
}

function build(recorder: Recorder): GraphImpl {
  const { state, label } = recorder;
  if (recorder.submitted.length === 0) {
    throw new CaptureFailedError(
      `capture '${label}' recorded nothing: the step submitted no command buffer. Encode and submit its work inside the step ` +
        '(device.queue.submit([encoder.finish()])); commands encoded but never submitted are not part of a graph.',
    );
  }
  const ops = recorder.submitted.flat();
  const use = touched(ops, recorder.submitted.length);
  const { pins, owners } = pinsOf(state.device, label, use);
  const graph = new GraphImpl(state, label, ops, use.stats);
  graph.attach(pins, owners);
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
      `capture '${graph.label}': the step produced ${kind} error, so its results are wrong and a graph would replay the fault. ` +
        `The device said: ${error.message.trim()}`,
    );
  }
  if (graph.state.lost !== undefined) {
    graph.dispose();
    assertAlive(graph.state, `capture '${graph.label}'`);
  }
  return graph;
}
