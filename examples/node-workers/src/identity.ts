import { carve, describeSharedSlab } from '@pol/arena';
import { DATA_REGION } from './batch.js';
import type { DataBounds } from './task.js';

/**
 * The first carve of each worker's region: a few int32 words the worker writes after every task and
 * the main thread reads in place, with no message: who holds the region, and how its arena stands.
 */
export const IDENTITY = {
  /** The holder's `threadId`: how the main thread knows whose region to free when a worker exits. */
  thread: 0,
  /** Tasks completed. */
  tasks: 1,
  /** Tasks that threw. */
  failed: 2,
  /** The arena's watermark after the last task (bytes from the region's start). */
  watermark: 3,
  /** The arena's offset after the last task: the identity block itself, when every frame closed. */
  offset: 4,
} as const;

/** How many int32 words the identity block holds. */
export const IDENTITY_WORDS = 8;

/** One worker's identity block, as the main thread reads it. */
export interface Identity {
  readonly region: number;
  readonly threadId: number;
  readonly tasks: number;
  readonly failed: number;
  readonly watermark: number;
  readonly offset: number;
}

/** The bytes of `slab` that tasks may name: its data region's. */
export function dataBounds(slab: SharedArrayBuffer): DataBounds {
  const d = describeSharedSlab(slab);
  const start = d.byteOffsets[DATA_REGION] ?? 0;
  return { start, end: start + d.regionByteLength };
}

/**
 * Every claimed worker region's identity block, read in place (views of the workers' bytes, made
 * for this call: the main thread holds no claim on them). A region claimed a moment ago may show
 * its previous holder's words until its new holder writes its own.
 */
export function identities(slab: SharedArrayBuffer): Identity[] {
  const d = describeSharedSlab(slab);
  const out: Identity[] = [];
  for (let region = 0; region < d.regions; region++) {
    if (region === DATA_REGION || d.claimed[region] !== true) continue;
    const words = carve(slab, d.byteOffsets[region] ?? 0, 'int32', [IDENTITY_WORDS]).data;
    out.push({
      region,
      threadId: words[IDENTITY.thread] ?? -1,
      tasks: words[IDENTITY.tasks] ?? 0,
      failed: words[IDENTITY.failed] ?? 0,
      watermark: words[IDENTITY.watermark] ?? 0,
      offset: words[IDENTITY.offset] ?? 0,
    });
  }
  return out;
}
