/**
 * Where the time and the bytes of one benchmarked operation go: runs it in a loop under the V8
 * inspector's CPU profiler (self time per function) or its sampling heap profiler (bytes allocated
 * per operation per allocation site, collected objects included).
 *
 *   node --expose-gc dist/profile.js <target> [--heap]
 *
 * Targets: arena-steady, arena-first (n = 1,024), verb-shell, hand-frame-shell, softmax-verb, train-arena,
 * train-similar, gpu-eager, gpu-by-hand (the WebGPU perceptron step: `gpu-profile.ts`).
 */
import { Session } from 'node:inspector/promises';
import { type HostOp, hostOps } from './host.js';
import { softmaxOps, trainingLoop } from './verbs.js';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly selfSize?: number;
  readonly children?: readonly (number | ProfileNode)[];
}

/** `op` run `iterations` times; each call does `per` operations (default 1); `drain` awaited between calls. */
export interface Target {
  readonly op: () => unknown;
  readonly iterations: number;
  readonly per?: number;
  readonly drain?: () => Promise<unknown>;
}

const targets: Readonly<Record<string, () => Target | Promise<Target>>> = {
  'arena-steady': () => hostPass('arena-steady', 5_000_000),
  'arena-first': () => hostPass('arena-first', 500_000),
  'verb-shell': () => softmaxOp('noop-verb-arena', 500_000),
  'hand-frame-shell': () => softmaxOp('noop-hand-frame-shell', 500_000),
  'softmax-verb': () => softmaxOp('softmax-verb-arena', 30_000),
  'train-arena': () => ({ op: trainingLoop('arena').step, iterations: 10_000 }),
  'train-similar': () => ({ op: trainingLoop('similar').step, iterations: 10_000 }),
  // Loaded only when asked for: they load Dawn.
  'gpu-eager': async () => (await import('./gpu-profile.js')).gpuTarget('eager'),
  'gpu-by-hand': async () => (await import('./gpu-profile.js')).gpuTarget('byHand'),
};

// One of the softmax section's operations, after every other one of them has run as it does in
// the benchmark (interleaved there): the code they share (a verb's call path, the arena's frames,
// core's ambient binding) is then profiled with the inline caches the benchmark sees, every space
// and frame class included, not those of one operation run alone.
function softmaxOp(name: string, iterations: number): Target {
  const ops = softmaxOps();
  for (const [other, op] of Object.entries(ops)) {
    const calls = other.startsWith('softmax') ? 2_000 : 100_000;
    if (other !== name) for (let i = 0; i < calls; i++) op();
  }
  return { op: ops[name] as () => unknown, iterations };
}

// A host operation runs a pass of allocations per call: as many calls as make `allocations`.
function hostPass(name: string, allocations: number): Target {
  const { run, per } = hostOps(1024)[name] as HostOp;
  return { op: run, iterations: Math.ceil(allocations / per), per };
}

function site(frame: ProfileNode['callFrame']): string {
  const file = frame.url.split('/').slice(-3).join('/');
  return `${frame.functionName === '' ? '(anonymous)' : frame.functionName} ${file}:${frame.lineNumber + 1}`;
}

function top(totals: Map<string, number>, count: number, format: (v: number) => string): void {
  for (const [name, v] of [...totals].sort((a, b) => b[1] - a[1]).slice(0, count))
    console.log(`${format(v).padStart(9)}  ${name}`);
}

const [name, ...flags] = process.argv.slice(2);
const make = targets[name ?? ''];
if (make === undefined) {
  console.error(`usage: node --expose-gc dist/profile.js <${Object.keys(targets).join('|')}> [--heap]`);
  process.exit(2);
}
const { op, iterations, per = 1, drain } = await make();
const operations = iterations * per;
for (let i = 0; i < iterations / 5; i++) {
  op(); // warm up
  await drain?.();
}
const session = new Session();
session.connect();
if (flags.includes('--heap')) {
  await session.post('HeapProfiler.enable');
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 64,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  for (let i = 0; i < iterations; i++) {
    op();
    await drain?.();
  }
  const { profile } = await session.post('HeapProfiler.stopSampling');
  const totals = new Map<string, number>();
  let total = 0;
  const walk = (node: ProfileNode): void => {
    const size = node.selfSize ?? 0;
    if (size > 0) {
      totals.set(site(node.callFrame), (totals.get(site(node.callFrame)) ?? 0) + size);
      total += size;
    }
    for (const child of node.children ?? []) if (typeof child === 'object') walk(child);
  };
  walk(profile.head as unknown as ProfileNode);
  console.log(`${name}: about ${Math.round(total / operations)} bytes allocated per operation (sampled), by allocation site:`);
  top(totals, 20, (v) => `${(v / operations).toFixed(0)} B`);
} else {
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  await session.post('Profiler.start');
  const t0 = performance.now();
  for (let i = 0; i < iterations; i++) {
    op();
    await drain?.();
  }
  const t1 = performance.now();
  const { profile } = await session.post('Profiler.stop');
  const byId = new Map<number, ProfileNode>();
  for (const node of profile.nodes as unknown as ProfileNode[]) byId.set(node.id, node);
  const totals = new Map<string, number>();
  const samples = profile.samples ?? [];
  for (const id of samples) {
    const node = byId.get(id);
    if (node !== undefined) totals.set(site(node.callFrame), (totals.get(site(node.callFrame)) ?? 0) + 1);
  }
  const perOp = ((t1 - t0) * 1e6) / operations;
  console.log(`${name}: ${perOp.toFixed(0)} ns per operation (under the profiler); self time by function:`);
  top(totals, 25, (v) => `${((100 * v) / samples.length).toFixed(1)}%`);
}
session.disconnect();
process.exit(0); // a GPU target's devices would keep the process alive
