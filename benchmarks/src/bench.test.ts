/**
 * Keeps the benchmarks building and running: every benchmark runs once in quick mode (a few
 * iterations), and every row must come out with finite numbers. No timing is asserted, ever: CI
 * machines are noisy and quick-mode figures mean nothing.
 */
import { getHeapSpaceStatistics } from 'node:v8';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { linesPage } from './lines.js';
import { bytesPerOp, gcExposed, gcWindow } from './measure.js';
import type { Measurement, Results } from './model.js';
import { chart, markdown } from './report.js';
import { README_END, README_START, readmeBlock, withReadmeBlock } from './report-blocks.js';
import { runBenchmarks, suiteNames } from './run.js';
import { trainingLoop } from './verbs.js';
import { COPIES_SHARE, wasmSizes } from './wasm.js';
import { copiesShare, WORKERS_COPIES_SHARE, workersSizes, workerVariants } from './workers.js';

let results: Results;
const log: string[] = [];
/** Where the GC test keeps its last few arrays, out of reach of escape analysis. */
const keep: unknown[] = [];

beforeAll(async () => {
  // The tfjs suite has a test file of its own (tfjs.test.ts), which runs it in quick mode and checks
  // its rows, its curves and its report: run here too, it would double the longest suite's time.
  const suites = suiteNames.filter((name) => name !== 'tfjs');
  results = await runBenchmarks({ quick: true, log: (line) => log.push(line) }, suites);
}, 300_000);

afterAll(() => {
  log.length = 0;
});

describe('quick mode', () => {
  test('runs with the garbage collector exposed (the config passes --expose-gc)', () => {
    expect(gcExposed).toBe(true);
  });

  test('every suite produced its rows', () => {
    const ids = results.measurements.map((m) => m.id);
    for (const n of [16, 1024, 65536]) {
      for (const name of [
        'arena-first',
        'arena-steady',
        'arena-one-offset',
        'arena-cycle',
        'arena-cycle-spread',
        'floor-steady',
        'floor-first',
        'similar',
        'new-float32array',
        'bare-view',
        'typedarray-pool',
        'thi-ng-malloc',
      ]) {
        expect(ids).toContain(`host.${name}.${n}`);
      }
    }
    for (const name of ['arena-frame', 'scratchspace', 'floor-frame']) expect(ids).toContain(`host.${name}.1024`);
    for (const n of [16, 1024])
      for (const name of ['arena-first-long', 'bare-view-long', 'arena-first-large', 'bare-view-large'])
        expect(ids).toContain(`host.${name}.${n}`);
    for (const id of ['verbs.softmax-bare', 'verbs.softmax-verb-arena', 'training.similar', 'training.arena'])
      expect(ids).toContain(id);
    for (const id of ['gpu.buffer-per-step', 'gpu.pool', 'gpu.prebuilt', 'gpu.arena', 'gpu.replay']) expect(ids).toContain(id);
    for (const id of ['core.direct', 'core.alloc-n', 'core.alloc-dims', 'core.alloc-undef', 'core.alloc-ambient'])
      expect(ids).toContain(id);
    for (const id of ['core.await-none', 'core.await-sync', 'core.await-async']) expect(ids).toContain(id);
    for (const name of ['buffer-per-step', 'pool', 'prebuilt', 'prebuilt-x4', 'eager', 'by-hand', 'replay', 'replay-x4'])
      expect(ids).toContain(`gpu-mlp.${name}`);
    for (const name of [
      'buffer-per-step',
      'pool',
      'prebuilt',
      'prebuilt-batched',
      'eager',
      'replay',
      'eager-batched',
      'replay-batched',
    ])
      expect(ids).toContain(`gpu-uniform.${name}`);
    for (const n of wasmSizes) for (const name of ['pol', 'readme', 'copy', 'floor']) expect(ids).toContain(`wasm.${name}.${n}`);
    for (const rows of workersSizes)
      for (const name of [...workerVariants, 'copies']) expect(ids).toContain(`workers.${name}.${rows}`);
    expect(new Set(ids).size).toBe(ids.length);
    expect(results.sections.length).toBe(14 + workersSizes.length);
    for (const m of results.measurements) expect(results.sections).toContain(m.section);
  });

  test('every row has finite, non-negative numbers', () => {
    for (const m of results.measurements) {
      const where = `${m.id}: ${JSON.stringify(m)}`;
      expect(Number.isFinite(m.timeNs), where).toBe(true);
      expect(m.timeNs, where).toBeGreaterThan(0);
      expect(Number.isFinite(m.p50Ns), where).toBe(true);
      expect(Number.isFinite(m.bytesPerOp), where).toBe(true);
      expect(m.bytesPerOp, where).toBeGreaterThanOrEqual(0);
      expect(m.ops, where).toBeGreaterThan(0);
      if (m.gcs !== undefined) expect(Number.isFinite(m.gcs), where).toBe(true);
      if (m.section.startsWith('WebGPU')) expect(Number.isFinite(m.gpuObjects), where).toBe(true);
    }
  });

  test('every comparison has a finite ratio, and a verdict exactly when it has a target', () => {
    const ids = new Set(results.measurements.map((m) => m.id));
    // 27, the verb shell against the hand-written frame shell, 7 more first passes (through alloc at each size; 1,024 carves per arena, and on a 64 MiB slab,
    // at the two sizes whose slab of 1,024 places is small), the frames section's 6 (0 B in each shape of loop and
    // form), and the WebAssembly sections': Pol against the floor at each size, and against the copies
    // at the sizes where they took more than a tenth of that path's time in this run.
    const byId = new Map(results.measurements.map((m) => [m.id, m]));
    const time = (id: string) => byId.get(id)?.timeNs ?? Number.NaN;
    const copiesCount = wasmSizes.filter((n) => {
      const copy = time(`wasm.copy.${n}`);
      return (copy - time(`wasm.floor.${n}`)) / copy > COPIES_SHARE;
    }).length;
    // The workers sections': 0 bytes copied at each size, 1.7× one thread at the largest, and 1.3× the
    // copying pool at the sizes where its copies took at least a fifth of its batch in this run.
    const measured = (id: string) => byId.get(id) as Measurement;
    const workersCopies = workersSizes.filter(
      (rows) => copiesShare(measured(`workers.copies.${rows}`), measured(`workers.copy.${rows}`)) >= WORKERS_COPIES_SHARE,
    ).length;
    expect(results.comparisons.filter((c) => c.target !== undefined).length).toBe(
      27 + 1 + 7 + 6 + wasmSizes.length + copiesCount + workersSizes.length + 1 + workersCopies,
    );
    for (const c of results.comparisons) {
      expect(ids.has(c.subject) && ids.has(c.peer)).toBe(true);
      expect(Number.isFinite(c.ratio)).toBe(true);
      expect(Number.isFinite(c.overheadNs)).toBe(true);
      expect(typeof c.met === 'boolean').toBe(c.target !== undefined);
    }
  });

  test("the GPU step targets are set against the floors, and the ones between Pol's own rows are retired", () => {
    const target = (subject: string, peer: string) =>
      results.comparisons.find((c) => c.subject === subject && c.peer === peer)?.target;
    expect(target('gpu-mlp.eager', 'gpu-mlp.prebuilt')).toEqual({ kind: 'ratio-at-most', value: 1.25 });
    expect(target('gpu-mlp.replay', 'gpu-mlp.prebuilt')).toEqual({ kind: 'ratio-at-most', value: 1.02 });
    expect(target('gpu-mlp.replay-x4', 'gpu-mlp.prebuilt-x4')).toEqual({ kind: 'ratio-at-most', value: 1.02 });
    expect(target('gpu-uniform.replay-batched', 'gpu-uniform.prebuilt-batched')).toEqual({ kind: 'ratio-at-most', value: 1.02 });
    expect(target('gpu-mlp.replay', 'gpu-mlp.eager')).toBeUndefined();
    expect(target('gpu-mlp.eager', 'gpu-mlp.buffer-per-step')).toBeUndefined();
    // Between Pol's own rows: ratios, not targets.
    expect(target('gpu-mlp.replay-x4', 'gpu-mlp.replay')).toBeUndefined();
    expect(target('gpu-uniform.replay-batched', 'gpu-uniform.replay')).toBeUndefined();
  });

  test('the environment is recorded', () => {
    const env = results.environment;
    expect(env.node).toBe(process.version);
    expect(env.cpu).not.toBe('');
    expect(env.cores).toBeGreaterThan(0);
    expect(Number.isNaN(Date.parse(env.date))).toBe(false);
    expect(env.quick).toBe(true);
    expect(env.gpu).toMatch(/\S/);
  });

  test('the report renders: a table row per measurement, a bar per measurement, JSON that round-trips', () => {
    const page = markdown(results);
    for (const m of results.measurements) expect(page).toContain(m.label);
    for (const s of results.sections) expect(page).toContain(`### ${s}`);
    const svg = chart(results);
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg.match(/<rect [^>]*class="(pol|peer)"/g)?.length).toBe(results.measurements.length);
    expect(svg).not.toMatch(/NaN|Infinity|undefined/);
    expect(JSON.parse(JSON.stringify(results))).toEqual(results);
  });

  test('runs on several Node.js lines go side by side: a column per line, a row per measurement and comparison', () => {
    const other = { ...results, environment: { ...results.environment, node: 'v99.0.0' } };
    const page = linesPage([results, other]);
    expect(page).toContain(`| what | Node.js ${process.version} | Node.js v99.0.0 |`);
    for (const m of results.measurements) expect(page).toContain(m.label);
    const rows = page.split('\n').filter((line) => /^\| (?!what |comparison |---)/.test(line));
    expect(rows.length).toBe(results.measurements.length + results.comparisons.length);
    expect(page).not.toMatch(/NaN|undefined|not run/);
    // A line that did not run a suite shows it, rather than a figure from another line.
    expect(linesPage([results, { ...other, measurements: [], comparisons: [] }])).toContain('not run');
  });

  test('the README block replaces only what lies between its markers', () => {
    const readme = `# Pol\n\n## Performance\n\nIntro.\n\n${README_START}\nold\n${README_END}\n\n## Next\n`;
    const updated = withReadmeBlock(readme, results);
    expect(updated).toBe(`# Pol\n\n## Performance\n\nIntro.\n\n${readmeBlock(results)}\n\n## Next\n`);
    expect(withReadmeBlock('# no markers\n', results)).toBeUndefined();
    // Markers quoted in prose are not markers.
    const quoted = `Between \`${README_START}\` and \`${README_END}\`.\n\n${README_START}\nold\n${README_END}\n`;
    expect(withReadmeBlock(quoted, results)).toBe(
      `Between \`${README_START}\` and \`${README_END}\`.\n\n${readmeBlock(results)}\n`,
    );
  });
});

describe('the measuring instruments', () => {
  test('bytesPerOp sees an allocation and sees none where there is none', async () => {
    const buffer = new ArrayBuffer(64);
    const view = await bytesPerOp(() => new Float32Array(buffer, 0, 16), { ops: 1000, repeats: 1 });
    expect(view).toBeGreaterThan(16);
    const none = await bytesPerOp(() => buffer, { ops: 1000, repeats: 1 });
    expect(none).toBeLessThan(1);
  });

  test('gcWindow counts collections', () => {
    // Allocate twice what the young generation holds now, so that at least one collection must run
    // (it cannot grow without collecting). A fixed workload would not do: each Node.js line's V8
    // grows the young generation to its own limit as a program allocates (measured here: 32 MiB on
    // Node.js 20 and 22, 128 MiB on 24, 64 MiB on 26), and a workload that fills 20's can fit in 24's.
    const young = getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0;
    expect(young).toBeGreaterThan(0);
    // Each array of 1,024 small integers takes at least 4 KiB (4-byte slots with pointer
    // compression, 8 without); only the last 16 stay reachable, so none is worth promoting.
    const arrays = Math.ceil((2 * young) / 4096);
    const window = gcWindow();
    for (let i = 0; i < arrays; i++) keep[i & 15] = new Array<number>(1024).fill(i);
    expect(window.stop()).toBeGreaterThan(0);
  });

  test('the two training loops compute the same losses (so they do the same work)', () => {
    const arena = trainingLoop('arena');
    const similar = trainingLoop('similar');
    for (let i = 0; i < 20; i++) {
      arena.step();
      similar.step();
      expect(arena.losses()).toBe(similar.losses());
    }
    expect(Number.isFinite(arena.losses())).toBe(true);
  });
});
