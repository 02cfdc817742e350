/**
 * Savepoints: what an arena remembers before a spec allocation, so that one failing part-way can
 * be rolled back and leave the arena as it was.
 *
 * @module
 */

import type { Kind } from '@pol/core';
import type { Arena } from './arena.js';
import type { FrameImpl } from './frame.js';

/** The token `arena[savepointKey]()` returns and `arena[rollbackKey](token)` takes. */
export class Savepoint {
  constructor(
    readonly arena: Arena<Kind>,
    readonly offset: number,
    readonly watermark: number,
    readonly epoch: number,
    readonly clock: number,
    readonly top: FrameImpl<Kind> | undefined,
  ) {}
}
