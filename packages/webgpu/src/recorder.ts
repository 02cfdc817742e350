/**
 * The capture hook: a recording of one captured step on one device. While the step runs, the
 * owner hands the recording every call a graph cannot hold, so that it is refused with a
 * `CaptureViolation` (new GPU memory, compilation, host writes, waits and readbacks, commands other
 * than compute passes, copies, clears and debug markers), and an observer of each command encoder
 * the step makes, which records compute passes (pipeline, bind groups, dispatches), buffer copies,
 * clears and debug markers as they are forwarded. `queue.submit` records which recorded command
 * buffers went in, in order. The recording lives in its capture call, never in a module global.
 *
 * @module
 */

import { CaptureViolation } from '@pol/core';
import { copyRange, dynamicOffsets } from './checked.js';
import { type DeviceState, deviceName } from './device.js';
import type { Args, CommandObserver, RecordingHook } from './hooks.js';

export type DebugOp =
  | { readonly k: 'push'; readonly label: string }
  | { readonly k: 'pop' }
  | { readonly k: 'marker'; readonly label: string };

export type PassOp =
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

export type EncoderOp =
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

const debugMethods = ['pushDebugGroup', 'popDebugGroup', 'insertDebugMarker'];
const recordedEncoder: ReadonlySet<string> = new Set([
  'beginComputePass',
  'copyBufferToBuffer',
  'clearBuffer',
  'finish',
  ...debugMethods,
]);
const recordedPass: ReadonlySet<string> = new Set([
  'setPipeline',
  'setBindGroup',
  'dispatchWorkgroups',
  'dispatchWorkgroupsIndirect',
  'end',
  ...debugMethods,
]);

const memoryAdvice =
  'New GPU memory would belong to this one eager run, not to the graph: pass the step an arena (or a frame on one) made before ' +
  'capture(), warmed up by an eager run and sized from its watermark; its carves create nothing.';
const compileAdvice =
  'A graph cannot replay a compile, and a step that compiles is cold: warm up first (run it once before capture()).';
const writeAdvice = 'A graph does not replay host writes: upload inputs before capture() and before each replay().';
const waitAdvice = 'A graph neither records nor performs waits: read after capture() resolves, or after replay() (download).';

/** What each refused device, queue and buffer call is called in messages, and the advice. */
type Refused = readonly [what: (args: Args) => string, advice: string];
const refusals: ReadonlyMap<string, Refused> = new Map<string, Refused>([
  ['device.createBuffer', [(a) => `device.createBuffer(${sizeOf(a[0])})`, memoryAdvice]],
  ['device.createTexture', [() => 'device.createTexture', memoryAdvice]],
  ['device.createQuerySet', [() => 'device.createQuerySet', memoryAdvice]],
  ...[
    'createShaderModule',
    'createComputePipeline',
    'createComputePipelineAsync',
    'createRenderPipeline',
    'createRenderPipelineAsync',
  ].map((name): [string, Refused] => [`device.${name}`, [() => `device.${name}`, compileAdvice]]),
  ...['writeBuffer', 'writeTexture', 'copyExternalImageToTexture'].map((name): [string, Refused] => [
    `queue.${name}`,
    [() => `queue.${name}`, writeAdvice],
  ]),
  ['queue.onSubmittedWorkDone', [() => 'queue.onSubmittedWorkDone (a wait)', waitAdvice]],
  ['buffer.mapAsync', [() => 'buffer.mapAsync (a readback)', waitAdvice]],
]);

function sizeOf(descriptor: unknown): string {
  const d = descriptor as { size?: unknown; label?: unknown } | undefined;
  const label = typeof d?.label === 'string' && d.label !== '' ? ` '${d.label}'` : '';
  return typeof d?.size === 'number' ? `${d.size} bytes${label}` : `…${label}`;
}

/** A recording: made by `capture`, set as its device's recording hook while the step runs. */
export class Recorder implements RecordingHook {
  /** True while the step runs; commands arriving later (an encoder kept past the step) are not recorded. */
  active = true;
  readonly #finished = new WeakMap<GPUCommandBuffer, EncoderOp[]>();
  /** The recorded command buffers the step submitted, in order. */
  readonly submitted: EncoderOp[][] = [];

  constructor(
    readonly state: DeviceState,
    readonly label: string,
  ) {}

  /** The refusal of `attempted` (what was called, as the user wrote it), with `advice`. */
  violation(attempted: string, advice: string): CaptureViolation {
    return refusal(this.state, this.label, attempted, advice);
  }

  refuse(where: 'device' | 'queue' | 'buffer', name: string, args: Args): void {
    if (!this.active) return;
    const refused = refusals.get(`${where}.${name}`);
    if (refused !== undefined) throw this.violation(refused[0](args), refused[1]);
  }

  submit(submit: (this: unknown, ...args: unknown[]) => unknown, queue: unknown, args: Args): unknown {
    if (!this.active) return submit.apply(queue, args as unknown[]);
    const lists: EncoderOp[][] = [];
    const buffers = args[0];
    for (const cb of Array.isArray(buffers) ? buffers : Array.from(buffers as Iterable<unknown>)) {
      const list = this.#finished.get(cb as GPUCommandBuffer);
      if (list === undefined) {
        throw this.violation(
          'queue.submit of a command buffer encoded before the capture (or on another device)',
          'A graph replays only the commands it saw encoded: encode them inside the step.',
        );
      }
      lists.push(list);
    }
    const result = submit.apply(queue, args as unknown[]);
    this.submitted.push(...lists);
    return result;
  }

  encoder(): CommandObserver {
    const ops: EncoderOp[] = [];
    return {
      methods: undefined,
      before: (name, args) => {
        if (!this.active) return;
        if (!recordedEncoder.has(name)) throw this.#unrecorded(`encoder.${name}`, name);
        if (name === 'beginComputePass' && (args[0] as GPUComputePassDescriptor | undefined)?.timestampWrites !== undefined) {
          throw this.violation(
            'encoder.beginComputePass with timestampWrites',
            'A graph records no timestamp queries: time replays from outside, or leave timestampWrites out of the step.',
          );
        }
      },
      after: (name, args, result) => {
        if (!this.active) return;
        if (name === 'copyBufferToBuffer') ops.push({ k: 'copy', ...copyRange(args) });
        else if (name === 'clearBuffer') {
          const buffer = args[0] as GPUBuffer;
          const offset = typeof args[1] === 'number' ? args[1] : 0;
          const size = typeof args[2] === 'number' ? args[2] : buffer.size - offset;
          ops.push({ k: 'clear', buffer, offset, size });
        } else if (name === 'finish') {
          if (result !== null && typeof result === 'object') this.#finished.set(result as GPUCommandBuffer, ops);
        } else recordDebug(ops, name, args);
      },
      pass: (descriptor) => {
        if (!this.active) return undefined;
        const passOps: PassOp[] = [];
        const d = descriptor as GPUComputePassDescriptor | undefined;
        ops.push({ k: 'pass', descriptor: d === undefined || d === null ? undefined : { ...d }, ops: passOps });
        return this.#pass(passOps);
      },
    };
  }

  #pass(ops: PassOp[]): CommandObserver {
    return {
      methods: undefined,
      before: (name) => {
        if (this.active && !recordedPass.has(name)) throw this.#unrecorded(`pass.${name}`, name);
      },
      after: (name, args) => {
        if (!this.active) return;
        if (name === 'setPipeline') ops.push({ k: 'pipeline', pipeline: args[0] as GPUComputePipeline });
        else if (name === 'setBindGroup') {
          ops.push({
            k: 'group',
            index: args[0] as number,
            group: (args[1] ?? null) as GPUBindGroup | null,
            offsets: dynamicOffsets(args),
          });
        } else if (name === 'dispatchWorkgroups') {
          ops.push({
            k: 'dispatch',
            x: args[0] as number,
            y: typeof args[1] === 'number' ? args[1] : 1,
            z: typeof args[2] === 'number' ? args[2] : 1,
          });
        } else if (name === 'dispatchWorkgroupsIndirect') {
          ops.push({ k: 'indirect', buffer: args[0] as GPUBuffer, offset: args[1] as number });
        } else recordDebug(ops, name, args);
      },
    };
  }

  #unrecorded(attempted: string, name: string): CaptureViolation {
    return this.violation(
      attempted,
      `A graph records compute passes (pipelines, bind groups, dispatches), buffer copies and clears, and debug markers only: keep ${name} out of the step.`,
    );
  }
}

function recordDebug(ops: (EncoderOp | PassOp)[], name: string, args: Args): void {
  if (name === 'pushDebugGroup') ops.push({ k: 'push', label: String(args[0]) });
  else if (name === 'popDebugGroup') ops.push({ k: 'pop' });
  else if (name === 'insertDebugMarker') ops.push({ k: 'marker', label: String(args[0]) });
}

/**
 * The one form of every capture refusal: `CaptureViolation` (from `@pol/core`), whose message
 * says what was attempted on which device, and then what to do instead, in one sentence.
 */
export function refusal(state: DeviceState, label: string, attempted: string, advice: string): CaptureViolation {
  return new CaptureViolation(
    attempted,
    deviceName(state.device),
    `${attempted} was refused: ${deviceName(state.device)} is recording capture '${label}'. ${advice}`,
  );
}

/** Throw the refusal of `attempted` if `state`'s device is recording a capture; do nothing otherwise. */
export function refuseWhileRecording(state: DeviceState, attempted: string, advice: string): void {
  const recorder = state.recorder;
  if (recorder !== undefined) throw refusal(state, recorder.label, attempted, advice);
}
