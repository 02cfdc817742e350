import { hostArray, outputs, Similar, scratch, scratchspace } from '@pol/core';
import { softmaxInto } from './softmax.js';
import { trainOnArena } from './train.js';

/** The quick start: describe, materialize and compute a softmax. Returns what it prints, line by line. */
export function quickStart(): string[] {
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

/** The training loop on an arena. Returns what it prints, line by line. */
export function training(steps = 200): string[] {
  const { arena, records } = trainOnArena({ steps });
  const first = records[0];
  const last = records.at(-1);
  if (first === undefined || last === undefined) return [];
  const lines = [`training a 2-16-3 perceptron for ${steps} steps in ${String(arena)}`];
  lines.push('  step      loss   offset  watermark  arrays created');
  const shown = records.filter((r) => r.step === 1 || r.step === 2 || r.step % 50 === 0);
  for (const r of shown) {
    lines.push(
      `${String(r.step).padStart(6)}  ${r.loss.toFixed(4).padStart(8)}  ${String(r.offset).padStart(7)}  ` +
        `${String(r.watermark).padStart(9)}  ${String(r.arraysCreated).padStart(14)}`,
    );
  }
  const newArrays = last.arraysCreated - first.arraysCreated;
  const grown = last.watermark - first.watermark;
  lines.push(
    `after step 1: ${newArrays} new arrays, watermark ${grown === 0 ? 'unchanged' : `grew by ${grown} bytes`} ` +
      `(${first.watermark} bytes): the steady loop allocates no new buffer memory`,
  );
  lines.push(`loss: ${first.loss.toFixed(4)} -> ${last.loss.toFixed(4)}`);
  return lines;
}

/** Everything the demo prints. */
export function demo(): string[] {
  return ['Quick start: softmax', ...quickStart().map((l) => `  ${l}`), '', ...training()];
}
