/**
 * `@pol/core`'s own costs, in two sections.
 *
 * - `alloc` through core from a caller that is never optimized: the call a cold or megamorphic
 *   caller makes, which no inlining can clean up after. Measured on an arena in steady state, so
 *   that the leaf makes nothing, against the same arena's `alloc` called directly (the floor:
 *   what core's verb reduces to). Target: 0 B per call.
 * - The cost of an `await`, anywhere in the process, before and after a synchronous `withspace`:
 *   on Node.js 20 and 22 an AsyncLocalStorage that has run once slows every `await` about 2.7×.
 *   Promise hooks are process-wide and never switch off, so each variant runs in a fresh Node.js
 *   process (rounds interleaved across variants). Target: at most 1.05× the floor.
 */
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { Arena } from '@pol/arena';
import { alloc, Undef, withspace } from '@pol/core';
import { type Comparison, compare, type Measurement, type RunOptions, type SuiteResult } from './model.js';
import { measureOps } from './op.js';

/** The section of `alloc` through core. */
export const coreAllocSection =
  'Core: alloc through core, from a caller that is never optimized (arena in steady state, n = 16 float32)';

/** The section of the `await` cost, with the Node.js version it was measured on. */
export const coreAwaitSection = `Core: the cost of an await after a synchronous withspace (Node.js ${process.version})`;

const N = 16;
/** Carves per arena pass: the arena is reset after this many (included). */
const PASS = 256;

/**
 * `body` as the loop body of a function V8 never optimizes, called with `env`'s names in scope:
 * the caller that no inlining rescues. Made with `new Function`, so each op has its own feedback.
 */
function neverOptimized(env: Record<string, unknown>, body: string): () => unknown {
  const names = Object.keys(env);
  const make = new Function(...names, `return function op() { ${body} };`) as (...values: unknown[]) => () => unknown;
  const op = make(...names.map((name) => env[name]));
  setFlagsFromString('--allow-natives-syntax');
  try {
    (new Function('f', '%NeverOptimizeFunction(f);') as (f: () => unknown) => void)(op);
  } finally {
    setFlagsFromString('--no-allow-natives-syntax');
  }
  return op;
}

/** The ops of the alloc section, by id suffix. */
export function coreAllocOps(): { readonly [name: string]: () => unknown } {
  const ops: Record<string, () => unknown> = {};
  const forms: Record<string, string> = {
    direct: "arena.alloc('float32', dims)",
    'alloc-n': "alloc(arena, 'float32', 16)",
    'alloc-dims': "alloc(arena, 'float32', dims)",
    'alloc-undef': 'alloc(arena, undef)',
    'alloc-ambient': 'withspace(arena, ambient)',
  };
  for (const [name, call] of Object.entries(forms)) {
    // Each op has its own arena over its own slab, in steady state: every carve is a cache hit.
    const arena = new Arena(new ArrayBuffer(PASS * 256));
    const dims = [N];
    const undef = Undef('float32', N);
    const state = { count: 0 };
    // The ambient form carves PASS times inside one withspace, so the binding is amortized.
    const ambient = neverOptimized({ alloc, state }, "let r; for (let i = 0; i < 16; i++) r = alloc('float32', 16); return r;");
    const step = neverOptimized(
      { arena, dims, undef, alloc, withspace, ambient, state, PASS },
      `if (state.count === PASS) { arena.reset(); state.count = 0; } state.count += ${name === 'alloc-ambient' ? 16 : 1}; return ${call};`,
    );
    for (let i = 0; i < PASS; i++) step();
    ops[name] = step;
  }
  return ops;
}

const allocLabels: Readonly<Record<string, string>> = {
  direct: "arena.alloc('float32', dims), called directly (floor)",
  'alloc-n': "Pol alloc(arena, 'float32', n)",
  'alloc-dims': "Pol alloc(arena, 'float32', dims)",
  'alloc-undef': 'Pol alloc(arena, undef)',
  'alloc-ambient': "Pol alloc('float32', n) inside withspace(arena, …), per 16 carves",
};

// --- await ------------------------------------------------------------------------------------------

/** What a child process does before it measures: nothing, a synchronous binding, an async one. */
const awaitVariants = ['none', 'sync', 'async'] as const;
type AwaitVariant = (typeof awaitVariants)[number];

/**
 * The child's program, run with `node --expose-gc --input-type=module -e`: set up the variant,
 * warm up, then time batches of awaits (median of their means) and measure the bytes of one batch
 * with no collection in it (the smallest of three).
 */
const awaitChild = `
import { GCProfiler } from 'node:v8';
import { Similar, scratchspace, withspace, alloc } from '@pol/core';
const variant = process.env.POL_AWAIT_VARIANT;
const batch = Number(process.env.POL_AWAIT_BATCH);
const batches = Number(process.env.POL_AWAIT_BATCHES);
const space = Similar(new Float32Array(0));
if (variant === 'sync') {
  withspace(space, () => alloc('float32', 4));
  scratchspace(space, (frame) => alloc(frame, 'float32', 4));
} else if (variant === 'async') {
  await withspace(space, async () => { await null; alloc('float32', 4); });
}
async function awaits(n) { for (let i = 0; i < n; i++) await null; }
await awaits(batch * 4);
const means = [];
for (let b = 0; b < batches; b++) {
  const t = process.hrtime.bigint();
  await awaits(batch);
  means.push(Number(process.hrtime.bigint() - t) / batch);
}
means.sort((x, y) => x - y);
let bytes = Infinity;
const small = Math.min(batch, 2000);
for (let k = 0; k < 3; k++) {
  globalThis.gc();
  const window = new GCProfiler();
  window.start();
  const before = process.memoryUsage().heapUsed;
  await awaits(small);
  const after = process.memoryUsage().heapUsed;
  if (window.stop().statistics.length === 0) bytes = Math.min(bytes, Math.max(0, after - before) / small);
}
console.log(JSON.stringify({ mean: means[means.length >> 1], p50: means[means.length >> 1], bytes, ops: batch * batches }));
`;

interface ChildResult {
  readonly mean: number;
  readonly p50: number;
  readonly bytes: number;
  readonly ops: number;
}

const packageRoot = join(dirname(fileURLToPath(import.meta.url)), '..');

function runChild(variant: AwaitVariant, quick: boolean): ChildResult {
  const child = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', awaitChild], {
    cwd: packageRoot,
    encoding: 'utf8',
    env: {
      ...process.env,
      POL_AWAIT_VARIANT: variant,
      POL_AWAIT_BATCH: String(quick ? 2_000 : 200_000),
      POL_AWAIT_BATCHES: String(quick ? 2 : 9),
    },
  });
  if (child.status !== 0) throw new Error(`the await child (${variant}) failed: ${child.stderr}`);
  const line = child.stdout.trim().split('\n').at(-1) ?? '';
  return JSON.parse(line) as ChildResult;
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1] ?? Number.NaN;
}

const awaitLabels: Readonly<Record<AwaitVariant, string>> = {
  none: 'await, in a process that never bound a space (floor)',
  sync: 'await, after a synchronous withspace and scratchspace (Pol)',
  async: 'await, after an async withspace (the AsyncLocalStorage is then in use)',
};

async function awaitCost(run: RunOptions): Promise<Measurement[]> {
  const rounds = run.quick ? 1 : 3;
  const results: Record<AwaitVariant, ChildResult[]> = { none: [], sync: [], async: [] };
  for (let r = 0; r < rounds; r++) for (const v of awaitVariants) results[v].push(runChild(v, run.quick));
  return awaitVariants.map((v) => {
    const rs = results[v];
    const m: Measurement = {
      id: `core.await-${v}`,
      section: coreAwaitSection,
      label: awaitLabels[v],
      pol: v !== 'none',
      unit: 'call',
      timeNs: median(rs.map((x) => x.mean)),
      p50Ns: median(rs.map((x) => x.p50)),
      bytesPerOp: Math.min(...rs.map((x) => x.bytes)),
      ops: rs.reduce((sum, x) => sum + x.ops, 0),
    };
    run.log(`  ${m.label.padEnd(56)} ${m.timeNs.toFixed(1).padStart(8)} ns  ${m.bytesPerOp.toFixed(0).padStart(6)} B`);
    return m;
  });
}

/** The core suite. */
export async function coreCosts(run: RunOptions): Promise<SuiteResult> {
  run.log(coreAllocSection);
  const ops = coreAllocOps();
  const names = Object.keys(ops);
  const allocs = await measureOps(
    names.map((name) => ({
      id: `core.${name}`,
      section: coreAllocSection,
      label: allocLabels[name] ?? name,
      pol: name !== 'direct',
      unit: 'alloc' as const,
      op: ops[name] as () => unknown,
      bytesOps: 4096,
    })),
    run,
  );
  const byId = new Map(allocs.map((m) => [m.id, m]));
  const get = (id: string): Measurement => {
    const m = byId.get(id);
    if (m === undefined) throw new Error(`missing measurement ${id}`);
    return m;
  };
  const direct = get('core.direct');
  const comparisons: Comparison[] = [
    compare(get('core.alloc-n'), direct, { kind: 'ratio-at-most', value: 2, zeroBytes: true }),
    compare(get('core.alloc-dims'), direct, undefined, 'time-ratio'),
    compare(get('core.alloc-undef'), direct, undefined, 'time-ratio'),
  ];

  run.log(coreAwaitSection);
  const awaits = await awaitCost(run);
  const [none, sync, async] = awaits as [Measurement, Measurement, Measurement];
  comparisons.push(compare(sync, none, { kind: 'ratio-at-most', value: 1.05 }), compare(async, none, undefined, 'time-ratio'));
  return { measurements: [...allocs, ...awaits], comparisons };
}
