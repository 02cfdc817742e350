/**
 * The device limits and WebGPU's alignment rules, checked in one place: binding sizes (a multiple
 * of 4, never 0), `maxBufferSize`, `maxStorageBufferBindingSize`, and an arena's alignment against
 * `minStorageBufferOffsetAlignment` (and `minUniformBufferOffsetAlignment` for a slab that can be
 * bound as a uniform). Limits are read from `device.limits`, never assumed.
 *
 * @module
 */

import { InvalidAlignmentError } from '@pol/arena';
import { describeValue, isPowerOfTwo } from '@pol/core/backend';
import { deviceName } from './device.js';
import { GpuLimitError } from './errors.js';
import { Usage } from './flags.js';

/** Round a byte length up to what WebGPU accepts as a binding or copy size: a multiple of 4, at least 4. */
export function bindingSize(bytes: number): number {
  return Math.max(4, Math.ceil(bytes / 4) * 4);
}

/** Throw {@link GpuLimitError} if a buffer of `size` bytes is past the device's `maxBufferSize`. */
export function checkBufferSize(device: GPUDevice, size: number, what: string): void {
  checkLimit(
    device,
    'maxBufferSize',
    size,
    `${what} needs a buffer of ${size} bytes`,
    'or split the data across several buffers.',
  );
}

/** Throw {@link GpuLimitError} if a storage binding of `size` bytes is past `maxStorageBufferBindingSize`. */
export function checkBindingSize(device: GPUDevice, size: number, what: string): void {
  checkLimit(
    device,
    'maxStorageBufferBindingSize',
    size,
    `${what} is ${size} bytes`,
    'or split the array.',
    ', so it could not be bound as a storage buffer',
  );
}

function checkLimit(
  device: GPUDevice,
  limit: 'maxBufferSize' | 'maxStorageBufferBindingSize',
  size: number,
  subject: string,
  otherwise: string,
  consequence = '',
): void {
  const allowed = device.limits[limit];
  if (size <= allowed) return;
  throw new GpuLimitError(
    limit,
    size,
    allowed,
    `${subject}, past ${deviceName(device)}'s ${limit} (${allowed} bytes)${consequence}. ` +
      `The adapter may allow more (see adapter.limits.${limit}): request it when making the device, ` +
      `adapter.requestDevice({ requiredLimits: { ${limit}: ${size} } }), ${otherwise}`,
  );
}

/** The alignment `deviceArena` picks: 256, or the device's storage offset alignment if it is larger. */
export function defaultAlignment(device: GPUDevice): number {
  return Math.max(256, device.limits.minStorageBufferOffsetAlignment);
}

/**
 * Throw unless `alignment` can start bindings of a buffer with `usage` on `device`: a power of two
 * (`InvalidAlignmentError`), and a multiple of `minStorageBufferOffsetAlignment`, and of
 * `minUniformBufferOffsetAlignment` when the buffer has UNIFORM usage ({@link GpuLimitError}).
 * `what` names the arena for messages, and `fix` says how to pass another alignment.
 */
export function checkAlignment(device: GPUDevice, usage: number, alignment: unknown, what: string, fix: string): void {
  const limits = device.limits;
  if (!isPowerOfTwo(alignment)) {
    throw new InvalidAlignmentError(
      `${what}: the alignment must be a power of two, at least ${deviceName(device)}'s minStorageBufferOffsetAlignment ` +
        `(${limits.minStorageBufferOffsetAlignment}), got ${describeValue(alignment)}. ${fix}`,
    );
  }
  const checks: ['minStorageBufferOffsetAlignment' | 'minUniformBufferOffsetAlignment', number][] = [
    ['minStorageBufferOffsetAlignment', limits.minStorageBufferOffsetAlignment],
  ];
  if ((usage & Usage.UNIFORM) !== 0) checks.push(['minUniformBufferOffsetAlignment', limits.minUniformBufferOffsetAlignment]);
  for (const [limit, required] of checks) {
    if (alignment % required === 0) continue;
    throw new GpuLimitError(
      limit,
      alignment,
      required,
      `${what}: alignment ${alignment} would start arrays at offsets ${deviceName(device)} cannot bind, since its ${limit} is ${required}. ` +
        `Pass { alignment: ${required} } or a larger power of two. ${fix}`,
    );
  }
}
