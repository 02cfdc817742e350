/**
 * Introspection: what `arena.describe()` reports, and the one-line summary (`String(arena)`) that
 * every message names an arena by.
 *
 * @module
 */

import type { Kind } from '@pol/core';
import { spaceKey } from '@pol/core/backend';
import type { Arena, ArenaDescription } from './types.js';

/**
 * What `arena.describe()` returns for `arena`, read through its public members, with what only the
 * arena knows: where its open frames opened (outermost first) and how many arrays it has made.
 */
export function describeArena<K extends Kind>(arena: Arena<K>, frameMarks: number[], arraysCreated: number): ArenaDescription<K> {
  return Object.freeze({
    kind: arena[spaceKey],
    storage: arena.storage.name,
    residency: arena.storage.residency,
    capacity: arena.capacity,
    byteOffset: arena.byteOffset,
    disposed: arena.disposed,
    offset: arena.offset,
    watermark: arena.watermark,
    alignment: arena.alignment,
    epoch: arena.epoch,
    checked: arena.checked,
    openFrames: frameMarks.length,
    frameMarks: Object.freeze(frameMarks),
    arraysCreated,
  });
}

/**
 * The summary line of the arena `d` describes, such as `Arena(host, 1.0 MiB, offset 4096, watermark
 * 8192, 1 open frame)`: with `at byte N` for an arena given a region (`region`), and `offset` in
 * place of its own for a message about a release to it (a checked array's death).
 */
export function summary(d: ArenaDescription, region: boolean, offset: number): string {
  const frames = `${d.openFrames} open frame${d.openFrames === 1 ? '' : 's'}`;
  return (
    `Arena(${d.residency}, ${formatBytes(d.capacity)}${region ? ` at byte ${d.byteOffset}` : ''}, ` +
    `offset ${offset}, watermark ${d.watermark}, ${frames}${d.checked ? ', checked' : ''}${d.disposed ? ', disposed' : ''})`
  );
}

function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = n / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}
