/// <reference types="@webgpu/types" preserve="true" />
/**
 * `@pol/webgpu`: GPU memory for Pol. Device slabs an arena carves `GpuArray`s from, `Similar` on a
 * device, upload and download, a bind-group cache, capture and replay of compute steps, and
 * checked mode's usage-scope checks.
 *
 * @packageDocumentation
 */

export { type GpuArray, isGpuArray } from './array.js';
export { bindGroup } from './bindgroups.js';
export { type CaptureOptions, capture, type Graph, type GraphStats } from './capture.js';
export {
  CaptureFailedError,
  DeviceLostError,
  GpuAllocationError,
  GpuCaptureViolation,
  GpuLimitError,
  GraphInvalidError,
  ReadbackError,
  UsageConflictError,
} from './errors.js';
export {
  type DeviceArenaOptions,
  type DeviceSlab,
  type DeviceSlabOptions,
  deviceArena,
  deviceSlab,
  isDeviceSlab,
  slabUsage,
} from './slab.js';
export { download, upload } from './transfer.js';
