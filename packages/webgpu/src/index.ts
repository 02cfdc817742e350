/**
 * `@pol/webgpu`: GPU memory for Pol. Device slabs an arena carves `GpuArray`s from, `Similar` on a
 * device, upload and download, a bind-group cache, capture and replay of compute steps, and
 * checked mode's usage-scope checks, all on one instrumentation of each device (`instrument`).
 *
 * @packageDocumentation
 * @module @pol/webgpu
 */

export { type GpuArray, isGpuArray } from './array.js';
export { bindGroup } from './bindgroups.js';
export { type CaptureOptions, capture } from './capture.js';
export {
  CaptureFailedError,
  DeviceLostError,
  GpuAllocationError,
  GpuLimitError,
  GraphInvalidError,
  PlacementError,
  ReadbackError,
  UsageConflictError,
} from './errors.js';
export { type DeviceArenaOptions, type DeviceSlabOptions, deviceArena, deviceSlab } from './factories.js';
export type { Graph, ReplayOptions } from './graph.js';
export { instrument } from './instrument.js';
export type { GraphStats } from './pins.js';
export { type PlacedArena, type PlacedArenaOptions, placedArena } from './placed-arena.js';
export { type Placement, type PlacementOptions, planPlacement } from './placement.js';
export { type DeviceSlab, isDeviceSlab, slabUsage } from './slab.js';
export { download, upload } from './transfer.js';
export { type UploadBatch, uploadAll, uploadBatch } from './uploads.js';
