/**
 * Verbs and a training step: what `Allocating` costs around a real kernel, and a whole training
 * loop on an arena against the same loop allocating as it goes.
 */

import { getHeapSpaceStatistics } from 'node:v8';
import { Arena, mark, retract } from '@pol/arena';
import { describe, type HostArray, hostArray, Similar, type Space, Undef } from '@pol/core';
import { Allocating, Shadows } from '@pol/verbs';
import { blobs, initMlp, seededRandom, softmax, softmaxInto, trainStep } from '@pol/verbs/examples';
import { bytesPerOp, gcWindow, median, quiesce } from './measure.js';
import { type Comparison, compare, type Measurement, type RunOptions, type SuiteResult } from './model.js';
import { measureOps } from './op.js';

type F32 = HostArray<'float32'>;

export const SOFTMAX_N = 1024;
export const softmaxSection = `Verbs: softmax, n = ${SOFTMAX_N.toLocaleString('en-US')} float32`;
export const TRAIN_STEPS = 10_000;
export const trainingSection = 'Training step: two-layer perceptron (2 → 16 → 3, batch 90), SGD';

/**
 * A kernel that does nothing, described exactly as softmax is (an output `y` like x, scratch `tmp`
 * like x): the verb around it costs what `Allocating` adds to any such kernel.
 */
const nothingInto = describe(
  function nothingInto(_out: { y: F32 }, _x: F32, _options: { tmp: F32 }): void {
    // nothing: the verb's own cost is what is measured
  },
  {
    outputs: (x: F32) => ({ y: Undef(x) }),
    scratch: (x: F32) => ({ tmp: Undef(x) }),
  },
);
const nothing = Allocating(nothingInto);

function input(n: number): Float32Array {
  const random = seededRandom(3);
  const data = new Float32Array(n);
  for (let i = 0; i < n; i++) data[i] = random() * 8 - 4;
  return data;
}

/** The softmax operations, by id suffix. */
export function softmaxOps(): { readonly [name: string]: () => unknown } {
  const n = SOFTMAX_N;
  const x = hostArray(input(n));
  // The bare kernel, with its output and scratch preallocated once and its argument objects hoisted.
  const outs = { y: hostArray(new Float32Array(n)) };
  const scratch = { tmp: hostArray(new Float32Array(n)) };
  const bare = () => {
    softmaxInto(outs, x, scratch);
    return outs.y;
  };
  // The verb on an arena, in steady state: y from the arena, tmp from the verb's frame; the caller
  // retracts to its mark after each call (the loop's own bookkeeping, included).
  const arena = new Arena(new ArrayBuffer(1 << 16));
  const start = mark(arena);
  const verb = () => {
    const { y } = softmax(arena, x);
    retract(arena, start);
    return y;
  };
  // The same verb with no space: Similar(x), a fresh y and tmp each call.
  const unscoped = () => softmax(x).y;
  // The verb's shell alone, around a kernel that does nothing, against the bare call of that kernel.
  const shellArena = new Arena(new ArrayBuffer(1 << 16));
  const shellStart = mark(shellArena);
  const shell = () => {
    const { y } = nothing(shellArena, x);
    retract(shellArena, shellStart);
    return y;
  };
  const shellBare = () => {
    nothingInto(outs, x, scratch);
    return outs.y;
  };
  return {
    'softmax-bare': bare,
    'softmax-verb-arena': verb,
    'softmax-verb-similar': unscoped,
    'noop-bare': shellBare,
    'noop-verb-arena': shell,
  };
}

const softmaxLabels: Readonly<Record<string, string>> = {
  'softmax-bare': 'softmaxInto (bare kernel, preallocated buffers)',
  'softmax-verb-arena': 'Pol softmax(arena, x) verb + retract, steady state',
  'softmax-verb-similar': 'Pol softmax(x) verb, no space (Similar: new arrays)',
  'noop-bare': 'a no-op kernel with softmax’s descriptions, called bare',
  'noop-verb-arena': 'Pol Allocating(no-op kernel)(arena, x) + retract',
};

/** A training setup: data, parameters and shadows in one space, and one step on it. */
export function trainingLoop(kind: 'arena' | 'similar'): { readonly step: () => F32; readonly losses: () => number } {
  const random = seededRandom(1);
  if (kind === 'arena') {
    const arena = new Arena(new ArrayBuffer(1 << 20));
    const { x, labels } = blobs(arena, random, 30, 3);
    const params = initMlp(arena, random, 2, 16, 3);
    const grads = Shadows(arena, params);
    const start = mark(arena);
    return build(arena, x, labels, params, grads, () => retract(arena, start));
  }
  const space = Similar(new Float32Array(0));
  const { x, labels } = blobs(space, random, 30, 3);
  const params = initMlp(space, random, 2, 16, 3);
  const grads = Shadows(space, params);
  return build(space, x, labels, params, grads, () => undefined);
}

function build(
  space: Space<'host'>,
  x: F32,
  labels: HostArray<'int32'>,
  params: ReturnType<typeof initMlp>,
  grads: ReturnType<typeof initMlp>,
  after: () => void,
): { readonly step: () => F32; readonly losses: () => number } {
  const options = { lr: 0.1 };
  let last = Number.NaN;
  const step = () => {
    const { loss } = trainStep(space, params, grads, x, labels, options);
    last = loss.data[0] ?? Number.NaN;
    after();
    return loss;
  };
  return { step, losses: () => last };
}

interface LoopRun {
  /** Mean nanoseconds per step of each block of BLOCK steps. */
  readonly blocks: number[];
  /** Mean nanoseconds per step over the whole round. */
  readonly ns: number;
  readonly gcs: number;
}

/** Steps per timed block within a round. */
const BLOCK = 2000;

async function runSteps(step: () => unknown, steps: number): Promise<LoopRun> {
  await quiesce();
  const blocks: number[] = [];
  const window = gcWindow();
  const start = performance.now();
  for (let done = 0; done < steps; ) {
    const n = Math.min(BLOCK, steps - done);
    const t0 = performance.now();
    for (let i = 0; i < n; i++) step();
    blocks.push(((performance.now() - t0) * 1e6) / n);
    done += n;
  }
  const end = performance.now();
  return { blocks, ns: ((end - start) * 1e6) / steps, gcs: window.stop() };
}

/** The verbs and training suite. */
export async function verbsAndTraining(run: RunOptions): Promise<SuiteResult> {
  const measurements: Measurement[] = [];
  const comparisons: Comparison[] = [];

  // Softmax: interleaved rounds, since the overhead is a difference of two close figures.
  run.log(softmaxSection);
  const ops = softmaxOps();
  const names = Object.keys(ops);
  const specs = names.map((name) => ({
    id: `verbs.${name}`,
    section: softmaxSection,
    label: softmaxLabels[name] ?? name,
    pol: name.includes('verb'),
    unit: 'call' as const,
    op: ops[name] as () => unknown,
    bytesOps: 2000,
    maxBytesOps: 20_000,
  }));
  const results = await measureOps(specs, run, 5);
  measurements.push(...results);
  const by = (name: string): Measurement => {
    const m = results[names.indexOf(name)];
    if (m === undefined) throw new Error(`missing measurement ${name}`);
    return m;
  };
  comparisons.push(
    compare(by('softmax-verb-arena'), by('softmax-bare'), { kind: 'overhead-at-most', ns: 150, zeroBytes: true }),
    compare(by('softmax-verb-similar'), by('softmax-bare')),
    compare(by('noop-verb-arena'), by('noop-bare'), undefined, 'overhead'),
  );

  // Training: the same step, on an arena and on Similar, for TRAIN_STEPS steps per round, counting
  // collections. Both loops start from the same seed and run the same number of steps, so they
  // compute the same values (and do the same work) throughout.
  run.log(trainingSection);
  const steps = run.quick ? 50 : TRAIN_STEPS;
  const rounds = run.quick ? 1 : 4;
  const loops = { similar: trainingLoop('similar'), arena: trainingLoop('arena') };
  // V8 grows the young generation while a loop allocates (from 4 MiB to 16 MiB here, over some
  // 20,000 steps), and how often it collects depends on that size: warm both loops up, interleaved,
  // until it has grown, so that both are measured at the size a long training run settles at.
  const youngGeneration = () => (getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0) / 2 ** 20;
  const warm = run.quick ? 10 : 20_000;
  for (let i = 0; i < warm; i++) {
    loops.similar.step();
    loops.arena.step();
  }
  const youngBefore = youngGeneration();
  const runs: Record<'similar' | 'arena', LoopRun[]> = { similar: [], arena: [] };
  for (let r = 0; r < rounds; r++) {
    // Alternate which goes first, so that neither always inherits the other's garbage or heat.
    const order = r % 2 === 0 ? (['similar', 'arena'] as const) : (['arena', 'similar'] as const);
    for (const kind of order) runs[kind].push(await runSteps(loops[kind].step, steps));
  }
  run.log(`  young generation: ${youngBefore} MiB before the measured rounds, ${youngGeneration()} MiB after`);
  if (loops.similar.losses() !== loops.arena.losses()) {
    throw new Error(
      `the two training loops diverged: loss ${loops.similar.losses()} (Similar) vs ${loops.arena.losses()} (arena)`,
    );
  }
  const trainingMeasurement = async (kind: 'similar' | 'arena'): Promise<Measurement> => {
    const bytes = await bytesPerOp(loops[kind].step, {
      ops: run.quick ? 8 : 200,
      maxOps: run.quick ? 16 : 2000,
      repeats: run.quick ? 1 : 3,
    });
    const m: Measurement = {
      id: `training.${kind}`,
      section: trainingSection,
      label:
        kind === 'arena'
          ? 'Pol trainStep(arena, …) + retract (every buffer from the arena)'
          : 'trainStep(Similar(x), …) (every buffer a new Float32Array)',
      pol: kind === 'arena',
      unit: 'step',
      // The median block: a round's mean would let one preempted stretch of a shared machine decide.
      timeNs: median(runs[kind].flatMap((x) => x.blocks)),
      p50Ns: median(runs[kind].map((x) => x.ns)),
      meanNs: runs[kind].reduce((a, x) => a + x.ns, 0) / runs[kind].length,
      bytesPerOp: bytes,
      gcs: median(runs[kind].map((x) => x.gcs)),
      gcSteps: steps,
      ops: steps * rounds,
    };
    run.log(`  ${m.label.padEnd(64)} ${(m.timeNs / 1000).toFixed(2)} µs/step, ${m.gcs} GCs / ${steps} steps`);
    return m;
  };
  const similar = await trainingMeasurement('similar');
  const arena = await trainingMeasurement('arena');
  measurements.push(similar, arena);
  comparisons.push(
    compare(arena, similar, { kind: 'faster-at-least', value: 1.3 }),
    compare(arena, similar, { kind: 'fewer-gcs-at-least', fraction: 0.95 }),
  );
  return { measurements, comparisons };
}
