/**
 * Host allocation: one float32 array of n elements, by every means a user has, at n = 16, 1,024 and
 * 65,536. One operation is one allocation (for the pools, one allocation and its free).
 */
import { Arena } from '@pol/arena';
import { Similar } from '@pol/core';
import { MemPool } from '@thi.ng/malloc';
import * as typedArrayPool from 'typedarray-pool';
import { type Comparison, compare, type Measurement, type RunOptions, type SuiteResult } from './model.js';
import { measureOps } from './op.js';

/** The sizes measured, in float32 elements. */
export const hostSizes = [16, 1024, 65536] as const;

/** Allocations per arena pass: an arena is reset (steady state) or replaced (first pass) after this many. */
const PASS = 256;
/** The arena's default alignment: every carve starts on a 256-byte boundary. */
const ALIGNMENT = 256;

function alignUp(x: number, a: number): number {
  return Math.ceil(x / a) * a;
}

/** `Host allocation, n = 1,024` */
export function hostSection(n: number): string {
  return `Host allocation, n = ${n.toLocaleString('en-US')} float32`;
}

/** The operations measured at size n, by id suffix. */
export function hostOps(n: number): { readonly [name: string]: () => unknown } {
  const dims = [n];
  const stride = alignUp(n * 4, ALIGNMENT);
  const slab = new ArrayBuffer(PASS * stride);

  // First pass: every carve is at an offset the arena has not carved before, so it makes a new view
  // (and caches it). A fresh arena over the same slab every PASS carves; its construction is
  // included, amortized over PASS allocations.
  let fresh = new Arena(slab);
  let freshCount = 0;
  const arenaFirst = () => {
    if (freshCount === PASS) {
      fresh = new Arena(slab);
      freshCount = 0;
    }
    freshCount++;
    return fresh.alloc('float32', dims);
  };

  // Steady state: the same sequence of PASS carves, then a reset; every carve returns the array
  // object carved there before. The reset is included, amortized over PASS allocations.
  const steady = new Arena(slab);
  for (let i = 0; i < PASS; i++) steady.alloc('float32', dims);
  steady.reset();
  let steadyCount = 0;
  const arenaSteady = () => {
    if (steadyCount === PASS) {
      steady.reset();
      steadyCount = 0;
    }
    steadyCount++;
    return steady.alloc('float32', dims);
  };

  const similar = Similar(new Float32Array(0));
  const similarAlloc = () => similar.alloc('float32', dims);

  const newArray = () => new Float32Array(n);

  // The floor: a view over memory already allocated, at the same offsets the arena carves.
  let viewCount = 0;
  const bareView = () => {
    if (viewCount === PASS) viewCount = 0;
    return new Float32Array(slab, viewCount++ * stride, n);
  };

  const tpool = typedArrayPool as unknown as {
    malloc(n: number, dtype: 'float32'): Float32Array;
    free(array: Float32Array): void;
  };
  const pooled = () => {
    const a = tpool.malloc(n, 'float32');
    tpool.free(a);
    return a;
  };

  const memPool = new MemPool({ size: 4 * stride + 4096 });
  const thing = () => {
    const a = memPool.mallocAs('f32', n);
    if (a === undefined) throw new Error('@thi.ng/malloc: pool exhausted');
    memPool.free(a);
    return a;
  };

  return {
    'arena-first': arenaFirst,
    'arena-steady': arenaSteady,
    similar: similarAlloc,
    'new-float32array': newArray,
    'bare-view': bareView,
    'typedarray-pool': pooled,
    'thi-ng-malloc': thing,
  };
}

const labels: Readonly<Record<string, (n: number) => string>> = {
  'arena-first': () => 'Pol arena.alloc, first pass (new views)',
  'arena-steady': () => 'Pol arena.alloc, steady state (repeated sequence)',
  similar: () => 'Pol Similar(x).alloc',
  'bare-view': () => 'new Float32Array(buffer, offset, n) (floor)',
  'new-float32array': (n) => `new Float32Array(${n})`,
  'typedarray-pool': () => 'typedarray-pool malloc + free',
  'thi-ng-malloc': () => '@thi.ng/malloc mallocAs + free',
};

const polOps = new Set(['arena-first', 'arena-steady', 'similar']);

/** The host allocation suite. */
export async function hostAllocation(run: RunOptions): Promise<SuiteResult> {
  const measurements: Measurement[] = [];
  const comparisons: Comparison[] = [];
  for (const n of hostSizes) {
    const section = hostSection(n);
    run.log(section);
    const ops = hostOps(n);
    const names = Object.keys(ops);
    const specs = names.map((name) => ({
      id: `host.${name}.${n}`,
      section,
      label: labels[name]?.(n) ?? name,
      pol: polOps.has(name),
      unit: 'alloc' as const,
      op: ops[name] as () => unknown,
      bytesOps: n >= 65536 ? 64 : 4096,
    }));
    const results = await measureOps(specs, run);
    measurements.push(...results);
    const byName = new Map(results.map((m, i) => [names[i] ?? '', m]));
    const get = (name: string): Measurement => {
      const m = byName.get(name);
      if (m === undefined) throw new Error(`missing measurement ${name}`);
      return m;
    };
    const first = get('arena-first');
    const steady = get('arena-steady');
    const view = get('bare-view');
    comparisons.push(
      compare(first, view, { kind: 'ratio-at-most', value: 1.5 }),
      compare(steady, view, { kind: 'ratio-at-most', value: 0.5, zeroBytes: true }),
      compare(steady, get('typedarray-pool'), { kind: 'faster-at-least', value: 3 }),
      compare(steady, get('new-float32array'), n === 1024 ? { kind: 'faster-at-least', value: 40 } : undefined),
      compare(steady, get('thi-ng-malloc')),
      compare(get('similar'), get('new-float32array')),
    );
  }
  return { measurements, comparisons };
}
