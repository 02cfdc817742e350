/**
 * What Pol keeps per GPUDevice: whether it is lost, which hooks are on (checked usage scopes, a
 * capture's recording), the graphs that must hear of its loss, and the device's own methods from
 * before Pol wrapped them. The state is made by the instrumentation owner (`instrument.ts`) on
 * first contact.
 *
 * @module
 */

import { InvalidArgumentError } from '@pol/core';
import { describeValue } from '@pol/core/backend';
import type { EagerClears } from './clears.js';
import { DeviceLostError } from './errors.js';
import type { PlanningHook, RecordingHook } from './hooks.js';

/** Something that must learn when its device is lost (a graph; the arenas over a slab). */
export interface LossListener {
  deviceLost(reason: string): void;
}

/** The device's and queue's own methods, as they were before Pol wrapped them. */
export interface RawMethods {
  /** For Pol's own writes that no hook may refuse (poisoning released bytes inside a captured step). */
  readonly writeBuffer: GPUQueue['writeBuffer'];
  /** For Pol's own waits (destroying buffers once submitted work is done). */
  readonly onSubmittedWorkDone: GPUQueue['onSubmittedWorkDone'];
}

/** Pol's state for one device. */
export interface DeviceState {
  readonly device: GPUDevice;
  /** Set once the device is lost or destroyed. */
  lost: { readonly reason: string; readonly message: string } | undefined;
  /**
   * The checked-mode hook: on from the first checked arena over one of the device's slabs (or
   * its first checked carve), for good. Switched on by `startChecking` (`checked.ts`).
   */
  checked: boolean;
  /**
   * While checking is off: the last {@link UNCHECKED_ENCODERS} command encoders the device made,
   * as a ring (`next` is the slot written next), so that the ones still open when checking
   * switches on are checked from their next pass or copy. Emptied then, and never written again.
   */
  readonly unchecked: { readonly encoders: (object | undefined)[]; next: number };
  /** The capture hook: the recording in progress while a captured step runs. */
  recorder: RecordingHook | undefined;
  /** The placement hook: the planner watching a warm-up step, while it runs (`planPlacement`). */
  planner: PlanningHook | undefined;
  /** What must hear of the device's loss: its graphs that are still valid, and the arenas over its slabs. */
  readonly listeners: Set<LossListener>;
  /** What an eager `zeroArray` notes: zeros written (neighbours in one write) or cleared, flushed before anything could observe them (`clears.ts`). */
  readonly clears: EagerClears;
  readonly raw: RawMethods;
}

const states = new WeakMap<GPUDevice, DeviceState>();

/**
 * How many encoders made before checking switched on are checked from their next pass: an
 * encoder stays open for a step, so the last 16 cover one still open (the step's own, and every
 * encoder Pol makes for a download or clear in the meantime) at no cost but a store each.
 */
export const UNCHECKED_ENCODERS = 16;

/** Pol's state for `device` if the device is instrumented, without instrumenting it. */
export function knownState(device: GPUDevice): DeviceState | undefined {
  return states.get(device);
}

/** Remember the state the instrumentation owner made for its device. */
export function registerState(state: DeviceState): void {
  states.set(state.device, state);
}

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
      `${what} needs a GPUDevice, got ${describeValue(x)}. Get one with (await navigator.gpu.requestAdapter()).requestDevice() ` +
        "(in Node.js, from the 'webgpu' package's create([]).requestAdapter()).",
    );
  }
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

/** Record that the device is lost (once), and tell its graphs. */
export function markLost(state: DeviceState, reason: string, message: string): void {
  if (state.lost !== undefined) return;
  state.lost = { reason, message };
  state.clears.drop();
  for (const listener of [...state.listeners]) listener.deviceLost(reason);
  state.listeners.clear();
}

/**
 * Call `f` once the work submitted to the device so far has finished (at once if the device is
 * lost). While a captured step runs, the wait starts right after the step returns, so that it
 * covers the work the step submits too. (Clears `zeroArray` noted need no flush here: what Pol
 * waits for is a buffer's `destroy`, which flushes them first.)
 */
export function whenIdle(state: DeviceState, f: () => void): void {
  if (state.lost !== undefined) {
    f();
    return;
  }
  if (state.recorder !== undefined) {
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
    state.raw.onSubmittedWorkDone.call(state.device.queue).then(once, once);
  } catch {
    once();
  }
}
