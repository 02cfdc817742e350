import { hostArray, outputs, Similar, scratch, scratchspace } from '@pol/core';
import { softmaxInto } from './softmax.js';

/** Runs the demo and returns what it prints, line by line. */
export function demo(): string[] {
  const lines: string[] = [];
  const x = hostArray(Float32Array.from([1, 2, 3, 4]));

  // 1. The kernel describes its buffers as data: nothing is allocated yet.
  lines.push(`outputs described: y = ${String(outputs(softmaxInto, x).y)}`);
  lines.push(`scratch described: tmp = ${String(scratch(softmaxInto, x).tmp)}`);

  // 2. The caller picks the space. Similar(x) is the GC-owned default: fresh arrays like x.
  const space = Similar(x);
  const { y } = outputs(space, softmaxInto, x);
  lines.push(`materialized y from ${String(space)}: ${y.dtype}[${y.dims.join(', ')}]`);

  // 3. Scratch lives only inside a frame; the frame closes when the block ends.
  scratchspace(space, (frame) => {
    const { tmp } = scratch(frame, softmaxInto, x);
    lines.push(`materialized tmp in ${String(frame)}: ${tmp.dtype}[${tmp.dims.join(', ')}]`);
    softmaxInto({ y }, x, { tmp });
  });

  lines.push(`softmax([1, 2, 3, 4]) = [${Array.from(y.data, (v) => v.toFixed(4)).join(', ')}]`);
  return lines;
}
