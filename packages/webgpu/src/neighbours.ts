/**
 * When two ranges of one buffer are neighbours: the rule that lets `uploadBatch` write neighbouring
 * arrays with one `writeBuffer`, and eager zeroing zero them with one write. It imports nothing, so
 * that both can use it without a cycle.
 *
 * @module
 */

/**
 * Whether a range starting at `start` is a neighbour of one ending at `end` (`end <= start`), with
 * arrays starting at multiples of `grid` (the device's `minStorageBufferOffsetAlignment`, which every
 * arena's alignment is a multiple of): no offset of the grid lies between them, so no array of any
 * arena can start in the gap, and the gap's bytes are alignment padding no array owns.
 */
export function neighbours(end: number, start: number, grid: number): boolean {
  return Math.ceil(end / grid) * grid >= start;
}
