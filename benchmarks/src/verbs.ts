/**
 * Verbs and a training step: what `Allocating` costs around a real kernel, and a whole training
 * loop on an arena against the same loop allocating as it goes.
 */

import { getHeapSpaceStatistics } from 'node:v8';
import { Arena, mark, retract } from '@pol/arena';
import {
  alloc,
  describe,
  type Frame,
  type HostArray,
  hostArray,
  Similar,
  type Space,
  scratchspace,
  Undef,
  withspace,
} from '@pol/core';
import { Allocating, Shadows, walkShadows, zeroShadows } from '@pol/verbs';
import {
  blobs,
  initMlp,
  linearBackwardInto,
  linearInto,
  type Mlp,
  reluBackwardInto,
  reluInto,
  seededRandom,
  softmax,
  softmaxCrossEntropyBackwardInto,
  softmaxCrossEntropyInto,
  softmaxInto,
  trainStep,
} from '@pol/verbs/examples';
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
  // The floor of the shell: what a careful hand writes for the same job, with the same semantics
  // (y from the arena, tmp from a region released on return), its argument objects reused.
  const handArena = new Arena(new ArrayBuffer(1 << 16));
  const handStart = mark(handArena);
  const handOuts: { y: F32 } = { y: outs.y };
  const handScratch: { tmp: F32 } = { tmp: scratch.tmp };
  const handShell = () => {
    const y = handArena.alloc('float32', x.dims);
    const m = mark(handArena);
    handOuts.y = y;
    handScratch.tmp = handArena.alloc('float32', x.dims);
    nothingInto(handOuts, x, handScratch);
    retract(handArena, m);
    retract(handArena, handStart);
    return y;
  };
  // The same with an arena frame for tmp and the frame bound as the ambient space (what a verb
  // must do, so that verbs a kernel calls allocate where they die with it).
  const frameArena = new Arena(new ArrayBuffer(1 << 16));
  const frameStart = mark(frameArena);
  const frameOuts: { y: F32 } = { y: outs.y };
  const frameScratch: { tmp: F32 } = { tmp: scratch.tmp };
  const inFrame = () => nothingInto(frameOuts, x, frameScratch);
  const handFrameShell = () => {
    const y = frameArena.alloc('float32', x.dims);
    frameOuts.y = y;
    const frame: Frame<'host'> = scratchspace(frameArena);
    frameScratch.tmp = frame.alloc('float32', x.dims);
    withspace(frame, inFrame);
    frame.close();
    retract(frameArena, frameStart);
    return y;
  };
  return {
    'softmax-bare': bare,
    'softmax-verb-arena': verb,
    'softmax-verb-similar': unscoped,
    'noop-bare': shellBare,
    'noop-hand-shell': handShell,
    'noop-hand-frame-shell': handFrameShell,
    'noop-verb-arena': shell,
  };
}

const softmaxLabels: Readonly<Record<string, string>> = {
  'softmax-bare': 'softmaxInto (bare kernel, preallocated buffers)',
  'softmax-verb-arena': 'Pol softmax(arena, x) verb + retract, steady state',
  'softmax-verb-similar': 'Pol softmax(x) verb, no space (Similar: new arrays)',
  'noop-bare': 'a no-op kernel with softmax’s descriptions, called bare',
  'noop-hand-shell': 'the same, in a hand-written shell: y and tmp from an arena, a mark, a retract (floor)',
  'noop-hand-frame-shell': 'the hand-written shell with an arena frame bound as the ambient space (floor)',
  'noop-verb-arena': 'Pol Allocating(no-op kernel)(arena, x) + retract, steady state',
};

/** The three ways of running the same training step that the suite compares. */
export type TrainingKind = 'arena' | 'similar' | 'by-hand';

/** A training setup: data, parameters and shadows in one space, and one step on it. */
export function trainingLoop(kind: TrainingKind): { readonly step: () => F32; readonly losses: () => number } {
  const random = seededRandom(1);
  if (kind === 'similar') {
    const space = Similar(new Float32Array(0));
    const { x, labels } = blobs(space, random, 30, 3);
    const params = initMlp(space, random, 2, 16, 3);
    const grads = Shadows(space, params);
    return build(space, x, labels, params, grads, () => undefined);
  }
  const arena = new Arena(new ArrayBuffer(1 << 20));
  const { x, labels } = blobs(arena, random, 30, 3);
  const params = initMlp(arena, random, 2, 16, 3);
  const grads = Shadows(arena, params);
  if (kind === 'by-hand') return byHand(arena, x, labels, params, grads);
  const start = mark(arena);
  return build(arena, x, labels, params, grads, () => retract(arena, start));
}

function build(
  space: Space<'host'>,
  x: F32,
  labels: HostArray<'int32'>,
  params: Mlp,
  grads: Mlp,
  after: () => void,
): { readonly step: () => F32; readonly losses: () => number } {
  const options = { lr: 0.1 };
  // The last loss, in a typed cell: a number stored into a mutable closure variable is boxed anew
  // on every store (16 B a step, which would be counted against the step).
  const last = Float64Array.of(Number.NaN);
  const step = () => {
    const { loss } = trainStep(space, params, grads, x, labels, options);
    last[0] = loss.data[0] ?? Number.NaN;
    after();
    return loss;
  };
  return { step, losses: () => last[0] ?? Number.NaN };
}

/**
 * The floor of the training step: the same kernels in the same order, every buffer preallocated
 * once and every argument object made once, called by hand. What `trainStep`'s verbs cost is the
 * difference.
 */
function byHand(
  space: Space<'host'>,
  x: F32,
  labels: HostArray<'int32'>,
  params: Mlp,
  grads: Mlp,
): { readonly step: () => F32; readonly losses: () => number } {
  const batch = x.dims[0] ?? 0;
  const hidden = params.layer1.b.dims[0] ?? 0;
  const classes = params.layer2.b.dims[0] ?? 0;
  const b = alloc(space, {
    h: Undef('float32', [batch, hidden]),
    a: Undef('float32', [batch, hidden]),
    logits: Undef('float32', [batch, classes]),
    probs: Undef('float32', [batch, classes]),
    loss: Undef('float32', [1]),
    dlogits: Undef('float32', [batch, classes]),
    da: Undef('float32', [batch, hidden]),
    dh: Undef('float32', [batch, hidden]),
    dx: Undef('float32', x.dims),
  });
  const h = { y: b.h };
  const a = { y: b.a };
  const logits = { y: b.logits };
  const loss = { loss: b.loss };
  const probs = { probs: b.probs };
  const dlogits = { dlogits: b.dlogits };
  const d2 = { dx: b.da, dlayer: grads.layer2 };
  const da = { dx: b.dh };
  const d1 = { dx: b.dx, dlayer: grads.layer1 };
  const lr = 0.1;
  const sgd = (p: F32, g: F32): void => {
    const ps = p.data;
    const gs = g.data;
    for (let i = 0; i < ps.length; i++) ps[i] = (ps[i] ?? 0) - lr * (gs[i] ?? 0);
  };
  const last = Float64Array.of(Number.NaN); // as in build(): no boxed number per step
  const step = () => {
    linearInto(h, params.layer1, x);
    reluInto(a, b.h);
    linearInto(logits, params.layer2, b.a);
    softmaxCrossEntropyInto(loss, b.logits, labels, probs);
    zeroShadows(grads);
    softmaxCrossEntropyBackwardInto(dlogits, b.probs, labels);
    linearBackwardInto(d2, params.layer2, b.a, b.dlogits);
    reluBackwardInto(da, b.h, b.da);
    linearBackwardInto(d1, params.layer1, x, b.dh);
    walkShadows(params, grads, sgd);
    last[0] = b.loss.data[0] ?? Number.NaN;
    return b.loss;
  };
  return { step, losses: () => last[0] ?? Number.NaN };
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
    // The target for a real kernel is its bytes: a difference of +150 ns on a 12 µs call is
    // below what one run on a shared machine can resolve, so the time is shown as a ratio, not judged.
    compare(by('softmax-verb-arena'), by('softmax-bare'), { kind: 'bytes-at-most', bytes: 0 }),
    compare(by('softmax-verb-similar'), by('softmax-bare')),
    compare(by('noop-verb-arena'), by('noop-bare'), { kind: 'overhead-at-most', ns: 150, zeroBytes: true }),
    compare(by('noop-verb-arena'), by('noop-hand-frame-shell'), { kind: 'ratio-at-most', value: 1.5, zeroBytes: true }),
    compare(by('noop-hand-frame-shell'), by('noop-bare'), undefined, 'overhead'),
    compare(by('noop-hand-shell'), by('noop-bare'), undefined, 'overhead'),
  );

  // Training: the same step, on an arena, on Similar, and by hand (the floor), for TRAIN_STEPS
  // steps per round, counting collections. The loops start from the same seed and run the same
  // number of steps, so they compute the same values (and do the same work) throughout.
  run.log(trainingSection);
  const steps = run.quick ? 50 : TRAIN_STEPS;
  const rounds = run.quick ? 1 : 4;
  const kinds = ['similar', 'arena', 'by-hand'] as const;
  const loops = { similar: trainingLoop('similar'), arena: trainingLoop('arena'), 'by-hand': trainingLoop('by-hand') };
  // V8 grows the young generation while a loop allocates (from 4 MiB to 16 MiB here, over some
  // 20,000 steps), and how often it collects depends on that size: warm both loops up, interleaved,
  // until it has grown, so that both are measured at the size a long training run settles at.
  const youngGeneration = () => (getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0) / 2 ** 20;
  const warm = run.quick ? 10 : 20_000;
  for (let i = 0; i < warm; i++) for (const kind of kinds) loops[kind].step();
  const youngBefore = youngGeneration();
  const runs: Record<TrainingKind, LoopRun[]> = { similar: [], arena: [], 'by-hand': [] };
  for (let r = 0; r < rounds; r++) {
    // Rotate which goes first, so that none always inherits another's garbage or heat.
    for (let k = 0; k < kinds.length; k++) {
      const kind = kinds[(r + k) % kinds.length] as TrainingKind;
      runs[kind].push(await runSteps(loops[kind].step, steps));
    }
  }
  run.log(`  young generation: ${youngBefore} MiB before the measured rounds, ${youngGeneration()} MiB after`);
  if (loops.similar.losses() !== loops.arena.losses() || loops.arena.losses() !== loops['by-hand'].losses()) {
    throw new Error(
      `the training loops diverged: loss ${loops.similar.losses()} (Similar), ${loops.arena.losses()} (arena), ${loops['by-hand'].losses()} (by hand)`,
    );
  }
  const labels: Record<TrainingKind, string> = {
    arena: 'Pol trainStep(arena, …) + retract (every buffer from the arena)',
    similar: 'trainStep(Similar(x), …) (every buffer a new Float32Array)',
    'by-hand': 'the same kernels called by hand, every buffer preallocated (floor)',
  };
  const trainingMeasurement = async (kind: TrainingKind): Promise<Measurement> => {
    const bytes = await bytesPerOp(loops[kind].step, {
      ops: run.quick ? 8 : 200,
      maxOps: run.quick ? 16 : 2000,
      repeats: run.quick ? 1 : 3,
    });
    const m: Measurement = {
      id: `training.${kind}`,
      section: trainingSection,
      label: labels[kind],
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
  const hand = await trainingMeasurement('by-hand');
  measurements.push(similar, arena, hand);
  comparisons.push(
    compare(arena, similar, { kind: 'faster-at-least', value: 1.35, maxBytes: 256 }),
    // All of them: 0 collections over TRAIN_STEPS steps.
    compare(arena, similar, { kind: 'fewer-gcs-at-least', fraction: 1 }),
    compare(arena, hand, undefined, 'speed'),
    compare(hand, similar, undefined, 'speed'),
  );
  return { measurements, comparisons };
}
