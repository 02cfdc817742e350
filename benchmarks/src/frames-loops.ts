/**
 * Frames in the loops users write, each in a fresh Node.js process: a frame per step, in its two
 * forms (`scratchspace(arena, block)` with a hoisted block, and `const f = scratchspace(arena)`
 * … `f.close()`), in three shapes of loop: at the top level of a classic script, at the top level
 * of a module, and inside an async function. None of them is a function the harness calls, so no
 * inlining into a measuring loop can hide an allocation: what the row shows is what that program
 * allocates. Checked arenas are measured too, for what checked mode costs.
 *
 * Bytes: a batch of 2N calls less a batch of N, over N, each the least of five batches (what a
 * batch costs whatever its length, the readings' own objects, cancels; what a collection during a
 * batch freed is counted as allocated), after a warm-up that spans a full collection. Time: the
 * median of the batches' means.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Comparison, compare, type Measurement, type RunOptions, type SuiteResult } from './model.js';

/** The section, with the Node.js line it ran on (lines differ, and `bench:lines` puts them side by side). */
export const framesSection = `Frames in a user's loop, a fresh process each (Node.js ${process.version})`;

const shapes = ['script', 'module', 'async'] as const;
type Shape = (typeof shapes)[number];
const forms = ['callback', 'open-close', 'floor'] as const;
type Form = (typeof forms)[number];

/** One step of each form: a frame, one carve of 16 float32 in it, the frame closed. */
const bodies: Readonly<Record<Form, string>> = {
  callback: 'scratchspace(arena, block);',
  'open-close': "{ const f = scratchspace(arena); keep = alloc(f, 'float32', 16); f.close(); }",
  // The floor: what a frame reduces to by hand, an offset remembered, a carve from a one-slot cache, the offset restored.
  floor: '{ const m = offset; offset += 64; keep = cached; offset = m; }',
};

/**
 * The measuring program, all at the top level of the script or module (or of one async function):
 * `BODY` is the step, inlined where it runs.
 */
function program(form: Form, batch: number): string {
  const body = bodies[form];
  return `
const N = ${batch};
let keep, offset = 0;
// Objects only: the spaces JavaScript objects live in. Compiled code and its metadata have spaces of
// their own, which V8 fills as it compiles the loop itself, in every program alike.
const objectSpaces = new Set(['new_space', 'old_space', 'new_large_object_space', 'large_object_space']);
const objects = (spaces) => { let used = 0; for (const s of spaces) if (objectSpaces.has(s.spaceName ?? s.space_name)) used += s.spaceUsedSize ?? s.space_used_size; return used; };
const block = (f) => { keep = alloc(f, 'float32', 16); };
const cached = alloc(new Arena(new ArrayBuffer(256)), 'float32', 16);
for (let i = 0; i < 4 * N; i++) ${body}
globalThis.gc();
for (let i = 0; i < 4 * N; i++) ${body}
const least = [Infinity, Infinity];
const means = [];
for (let round = 0; round < 10; round++) {
  const n = (round & 1) === 0 ? N : 2 * N;
  globalThis.gc();
  const window = new GCProfiler();
  window.start();
  const t = process.hrtime.bigint();
  const before = objects(getHeapSpaceStatistics());
  for (let i = 0; i < n; i++) ${body}
  const after = objects(getHeapSpaceStatistics());
  means.push(Number(process.hrtime.bigint() - t) / n);
  // What collections during the batch freed counts as allocated too (a checked arena's fresh arrays).
  let freed = 0;
  for (const gc of window.stop().statistics) freed += objects(gc.beforeGC.heapSpaceStatistics) - objects(gc.afterGC.heapSpaceStatistics);
  least[round & 1] = Math.min(least[round & 1], after - before + freed);
}
means.sort((x, y) => x - y);
const bytes = Math.max(0, least[1] - least[0]) / N;
console.log(JSON.stringify({ mean: means[means.length >> 1], bytes, ops: 4 * N * 2 + 15 * N, keep: keep !== undefined }));
`;
}

/** The program in its shape: a classic script (Pol on globalThis, put there by a module preloaded with --import), a module, or an async function in a module. */
function source(shape: Shape, form: Form, batch: number, checked: boolean): { readonly file: string; readonly text: string } {
  const setup = `const arena = new Arena(new ArrayBuffer(1 << 16), { checked: ${checked} });`;
  const measured = `${setup}\n${program(form, batch)}`;
  const imports =
    "import { GCProfiler, getHeapSpaceStatistics } from 'node:v8';\nimport { Arena } from '@pol/arena';\nimport { alloc, scratchspace } from '@pol/core';\n";
  switch (shape) {
    case 'script':
      return {
        file: 'loop.cjs',
        text: `'use strict';\nconst { GCProfiler, getHeapSpaceStatistics } = require('node:v8');\nconst { Arena, alloc, scratchspace } = globalThis.polFrames;\n${measured}`,
      };
    case 'module':
      return { file: 'loop.mjs', text: `${imports}${measured}` };
    default:
      return { file: 'loop.mjs', text: `${imports}async function main() {\n${measured}\n}\nawait main();` };
  }
}

/** What the classic script gets, preloaded: Pol's arena and frames on globalThis (a classic script cannot import). */
const preload =
  "import { Arena } from '@pol/arena';\nimport { alloc, scratchspace } from '@pol/core';\nglobalThis.polFrames = { Arena, alloc, scratchspace };\n";

interface ChildResult {
  readonly mean: number;
  readonly bytes: number;
  readonly ops: number;
}

const packageRoot = join(dirname(fileURLToPath(import.meta.url)), '..');

function runChild(shape: Shape, form: Form, checked: boolean, quick: boolean): ChildResult {
  // The files live in the package (a temporary folder in it), so that `@pol/*` resolve as for any program here.
  const dir = mkdtempSync(join(packageRoot, 'dist', 'frames-'));
  try {
    // A checked step costs about ten unchecked ones (a fresh frame and array each): a tenth of the calls.
    const { file, text } = source(shape, form, quick ? 2_000 : checked ? 20_000 : 200_000, checked);
    writeFileSync(join(dir, file), text);
    writeFileSync(join(dir, 'preload.mjs'), preload);
    const args = ['--expose-gc', ...(shape === 'script' ? ['--import', join(dir, 'preload.mjs')] : []), join(dir, file)];
    const child = spawnSync(process.execPath, args, { cwd: packageRoot, encoding: 'utf8' });
    if (child.status !== 0) throw new Error(`the frames child (${shape}, ${form}) failed: ${child.stderr}`);
    return JSON.parse(child.stdout.trim().split('\n').at(-1) ?? '') as ChildResult;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const shapeLabels: Readonly<Record<Shape, string>> = {
  script: 'top level of a classic script',
  module: 'top level of a module',
  async: 'inside an async function',
};
const formLabels: Readonly<Record<Form, string>> = {
  callback: 'Pol scratchspace(arena, block), one carve in block',
  'open-close': 'Pol scratchspace(arena), one carve, close()',
  floor: 'frame floor by hand: remember offset, carve, restore',
};

/** The id of a row. */
export function framesId(shape: Shape, form: Form, checked: boolean): string {
  return `frames.${shape}.${form}${checked ? '.checked' : ''}`;
}

/** The frames-in-loops suite: every shape and form, unchecked (target: 0 B) and checked (its cost, no target). */
export async function framesInLoops(run: RunOptions): Promise<SuiteResult> {
  run.log(framesSection);
  const measurements: Measurement[] = [];
  const comparisons: Comparison[] = [];
  for (const shape of shapes) {
    const rows = new Map<string, Measurement>();
    for (const checked of [false, true]) {
      for (const form of forms) {
        if (checked && form === 'floor') continue;
        const r = runChild(shape, form, checked, run.quick);
        const m: Measurement = {
          id: framesId(shape, form, checked),
          section: framesSection,
          label: `${formLabels[form]}${checked ? ', checked arena' : ''} (${shapeLabels[shape]})`,
          pol: form !== 'floor',
          unit: 'call',
          timeNs: r.mean,
          p50Ns: r.mean,
          bytesPerOp: r.bytes,
          ops: r.ops,
        };
        run.log(`  ${m.label.padEnd(90)} ${m.timeNs.toFixed(1).padStart(8)} ns  ${m.bytesPerOp.toFixed(2).padStart(7)} B`);
        rows.set(m.id, m);
        measurements.push(m);
      }
    }
    const floor = rows.get(framesId(shape, 'floor', false)) as Measurement;
    for (const form of ['callback', 'open-close'] as const) {
      comparisons.push(
        compare(rows.get(framesId(shape, form, false)) as Measurement, floor, { kind: 'bytes-at-most', bytes: 0 }),
      );
      comparisons.push(compare(rows.get(framesId(shape, form, true)) as Measurement, floor, undefined, 'time-ratio'));
    }
  }
  return { measurements, comparisons };
}
