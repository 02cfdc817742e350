/**
 * Host allocation: one float32 array of n elements, by every means a user has, at n = 16, 1,024 and
 * 65,536, beside the floor: the cheapest hand-written code doing the same job. One operation is one
 * allocation (for the pools, one allocation and its free; for the frame rows, a frame opened, one
 * array carved in it, and the frame closed).
 *
 * Each timed call runs a whole pass of PASS operations in a loop of its own, and the figures are per
 * operation. Called one at a time, every operation would be called from the harness's one call site,
 * which sees every operation of every suite (a megamorphic call, never inlined): a few nanoseconds
 * added to every row alike, as large as the steady carve itself, which pushed every ratio towards 1.
 * A loop per operation is what a user's kernel does: it calls the allocator from its own call site.
 * Every loop stores each result in the same small array, so that no allocation can be optimized away
 * and every row pays the same for it.
 */
import { Arena } from '@pol/arena';
import { alloc, type Frame, type HostArray, Similar, scratchspace } from '@pol/core';
import { makeHostArray, openFrameKey } from '@pol/core/backend';
import { MemPool } from '@thi.ng/malloc';
import * as typedArrayPool from 'typedarray-pool';
import { type Comparison, compare, type Measurement, type RunOptions, type SuiteResult } from './model.js';
import { measureOps } from './op.js';

/** The sizes measured, in float32 elements. */
export const hostSizes = [16, 1024, 65536] as const;

/** The size whose section also measures frames (a frame's cost does not depend on n). */
const FRAME_SIZE = 1024;
/** Allocations per arena pass: an arena is reset (steady state) or replaced (first pass) after this many. */
const PASS = 256;
/** Carves per arena in the longer first pass (at n ≤ 1,024: a slab of this many places). */
const LONG_PASS = 1024;
/** The large slab's bytes (at n ≤ 1,024): 64 MiB, 262,144 aligned places. */
const LARGE_SLAB = 64 << 20;
/** The arena's default alignment: every carve starts on a 256-byte boundary. */
const ALIGNMENT = 256;
/** Shapes that take turns at every offset in the cycling row: more than the old cache's eight per offset. */
const CYCLE = 9;

/** Where every loop keeps its results (see the module comment). */
const keep: unknown[] = new Array(64).fill(undefined);

/** One measured operation: `run` does it `per` times. */
export interface HostOp {
  readonly run: () => unknown;
  readonly per: number;
}

function alignUp(x: number, a: number): number {
  return Math.ceil(x / a) * a;
}

/** `Host allocation, n = 1,024` */
export function hostSection(n: number): string {
  return `Host allocation, n = ${n.toLocaleString('en-US')} float32`;
}

/**
 * The floor of a steady carve, written by hand: a dense array indexed by offset, a dtype and 1-D
 * dims compare, a capacity check, a bump. What an arena's hit path cannot beat. Its index has at
 * most 1,024 slots, as the arena's does (a slot per alignment when that fits, else per window of a
 * larger power of two, each holding the entry that starts in it): one slot per alignment over a
 * 64 MiB slab is a 2 MiB array that a pass touches every 8 KiB of, which costs the floor cache and
 * TLB misses that the cheapest code does not pay.
 */
class FloorCache {
  offset = 0;
  readonly #capacity: number;
  readonly #shift: number;
  readonly #slots: ({ start: number; dtype: string; d0: number; end: number; array: HostArray<'float32'> } | undefined)[];

  constructor(slab: ArrayBuffer, n: number) {
    const stride = alignUp(n * 4, ALIGNMENT);
    this.#capacity = slab.byteLength;
    let shift = Math.log2(ALIGNMENT);
    while (slab.byteLength / 2 ** shift >= 1024) shift++;
    this.#shift = shift;
    this.#slots = new Array((slab.byteLength >>> shift) + 1).fill(undefined);
    for (let i = 0; i < PASS; i++) {
      const start = i * stride;
      const array = makeHostArray('float32', Object.freeze([n]), new Float32Array(slab, start, n));
      this.#slots[start >>> shift] ??= { start, dtype: 'float32', d0: n, end: start + n * 4, array };
    }
  }

  alloc(dtype: 'float32', dims: readonly number[]): HostArray<'float32'> {
    const start = (this.offset + ALIGNMENT - 1) & -ALIGNMENT;
    const slot = this.#slots[start >>> this.#shift];
    if (
      slot !== undefined &&
      slot.start === start &&
      slot.dtype === dtype &&
      dims.length === 1 &&
      slot.d0 === dims[0] &&
      slot.end <= this.#capacity
    ) {
      this.offset = slot.end;
      return slot.array;
    }
    throw new Error('the floor only serves the sequence it was built for');
  }
}

/** The operations measured at size n, by id suffix. */
export function hostOps(n: number): { readonly [name: string]: HostOp } {
  const dims = [n];
  const stride = alignUp(n * 4, ALIGNMENT);
  const slab = new ArrayBuffer(PASS * stride);
  const pass = (run: () => unknown): HostOp => ({ run, per: PASS });

  // First pass: every carve is at an offset the arena has not carved before, so it makes a new view
  // (and caches it). A fresh arena over the same slab for every pass; its construction is included,
  // amortized over PASS allocations.
  const arenaFirst = () => {
    const fresh = new Arena(slab);
    for (let i = 0; i < PASS; i++) keep[i & 63] = fresh.alloc('float32', dims);
    return keep;
  };

  // The same first pass through core's alloc(space, dtype, n), what a kernel's own code calls.
  const arenaFirstAlloc = () => {
    const fresh = new Arena(slab);
    for (let i = 0; i < PASS; i++) keep[i & 63] = alloc(fresh, 'float32', n);
    return keep;
  };

  // A longer first pass: LONG_PASS carves per fresh arena over a slab of LONG_PASS places (four
  // times the others': every place a dense slot of its own, and four times the arrays the cache
  // keeps alive until the arena goes), against a bare view cycling over the same places.
  const long = n <= 1024 ? new ArrayBuffer(LONG_PASS * stride) : undefined;
  const arenaFirstLong = () => {
    const fresh = new Arena(long as ArrayBuffer);
    for (let i = 0; i < LONG_PASS; i++) keep[i & 63] = fresh.alloc('float32', dims);
    return keep;
  };
  const bareViewLong = () => {
    for (let i = 0; i < LONG_PASS; i++) keep[i & 63] = new Float32Array(long as ArrayBuffer, i * stride, n);
    return keep;
  };

  // The first pass on a large slab, as programs make them (64 MiB, where the others' slab is just the
  // pass's places): the same carves at the same offsets, a fresh arena each pass, against a bare
  // view over the same slab. While the cache's first level had 1,024 windows whatever the slab, a
  // slab this size put four places in each at n = 16, and three carves in four went to the second
  // level's table. (Each row a function literal of its own, not made by a shared factory: closures
  // of one literal share V8's feedback, and each row's must be its own.)
  const large = n <= 1024 ? new ArrayBuffer(LARGE_SLAB) : undefined;
  const arenaFirstLarge = () => {
    const fresh = new Arena(large as ArrayBuffer);
    for (let i = 0; i < PASS; i++) keep[i & 63] = fresh.alloc('float32', dims);
    return keep;
  };
  const bareViewLarge = () => {
    for (let i = 0; i < PASS; i++) keep[i & 63] = new Float32Array(large as ArrayBuffer, i * stride, n);
    return keep;
  };

  // Steady state: the same sequence of PASS carves, then a reset; every carve returns the array
  // object carved there before. The reset is included, amortized over PASS allocations.
  const steady = new Arena(slab);
  for (let i = 0; i < PASS; i++) steady.alloc('float32', dims);
  const arenaSteady = () => {
    steady.reset();
    for (let i = 0; i < PASS; i++) keep[i & 63] = steady.alloc('float32', dims);
    return keep;
  };

  // Shapes cycling at one offset: CYCLE shapes take turns at offset 0 (a reset after each carve),
  // beside one shape doing the same. The old cache kept eight shapes per offset, so a ninth made
  // every carve miss.
  const shapes = Array.from({ length: CYCLE }, (_, k) => [n - k]);
  const oneOffset = new Arena(slab);
  const arenaOneOffset = () => {
    for (let i = 0; i < PASS; i++) {
      keep[i & 63] = oneOffset.alloc('float32', dims);
      oneOffset.reset();
    }
    return keep;
  };
  const cycling = new Arena(slab);
  let turn = 0;
  const arenaCycle = () => {
    for (let i = 0; i < PASS; i++) {
      keep[i & 63] = cycling.alloc('float32', shapes[turn] as number[]);
      cycling.reset();
      turn = turn === CYCLE - 1 ? 0 : turn + 1;
    }
    return keep;
  };
  arenaCycle();

  // The same, at every offset of a pass: carve i of pass p has shape (i + p) mod CYCLE, so each of
  // the PASS offsets holds CYCLE arrays (a working set CYCLE times the steady row's).
  const spread = new Arena(slab);
  let spreadPass = 0;
  const arenaCycleSpread = () => {
    spread.reset();
    for (let i = 0; i < PASS; i++) keep[i & 63] = spread.alloc('float32', shapes[(i + spreadPass) % CYCLE] as number[]);
    spreadPass = spreadPass === CYCLE - 1 ? 0 : spreadPass + 1;
    return keep;
  };
  for (let i = 0; i < CYCLE; i++) arenaCycleSpread(); // every shape at every offset once

  // The steady floor, on its own copy of the slab's layout.
  const floor = new FloorCache(slab, n);
  const floorSteady = () => {
    floor.offset = 0;
    for (let i = 0; i < PASS; i++) keep[i & 63] = floor.alloc('float32', dims);
    return keep;
  };

  // The first-carve floor: one view plus one wrapper object.
  const floorFirst = () => {
    for (let i = 0; i < PASS; i++) keep[i & 63] = makeHostArray('float32', dims, new Float32Array(slab, i * stride, n));
    return keep;
  };

  // The peers that allocate fresh memory are timed one call at a time: a pass of 65,536-element
  // arrays would be 64 MiB, and their cost dwarfs the harness's.
  const similar = Similar(new Float32Array(0));
  const similarAlloc = () => similar.alloc('float32', dims);

  const newArray = () => new Float32Array(n);

  // A view over memory already allocated, at the same offsets the arena carves.
  const bareView = () => {
    for (let i = 0; i < PASS; i++) keep[i & 63] = new Float32Array(slab, i * stride, n);
    return keep;
  };

  const tpool = typedArrayPool as unknown as {
    malloc(n: number, dtype: 'float32'): Float32Array;
    free(array: Float32Array): void;
  };
  const pooled = () => {
    for (let i = 0; i < PASS; i++) {
      const a = tpool.malloc(n, 'float32');
      tpool.free(a);
      keep[i & 63] = a;
    }
    return keep;
  };

  const memPool = new MemPool({ size: 4 * stride + 4096 });
  const thing = () => {
    for (let i = 0; i < PASS; i++) {
      const a = memPool.mallocAs('f32', n);
      if (a === undefined) throw new Error('@thi.ng/malloc: pool exhausted');
      memPool.free(a);
      keep[i & 63] = a;
    }
    return keep;
  };

  const ops: Record<string, HostOp> = {
    'arena-first': pass(arenaFirst),
    'arena-first-alloc': pass(arenaFirstAlloc),
    'arena-steady': pass(arenaSteady),
    'arena-one-offset': pass(arenaOneOffset),
    'arena-cycle': pass(arenaCycle),
    'arena-cycle-spread': pass(arenaCycleSpread),
    similar: { run: similarAlloc, per: 1 },
    'new-float32array': { run: newArray, per: 1 },
    'bare-view': pass(bareView),
    'floor-steady': pass(floorSteady),
    'floor-first': pass(floorFirst),
    'typedarray-pool': pass(pooled),
    'thi-ng-malloc': pass(thing),
  };
  if (long !== undefined) {
    ops['arena-first-long'] = { run: arenaFirstLong, per: LONG_PASS };
    ops['bare-view-long'] = { run: bareViewLong, per: LONG_PASS };
  }
  if (large !== undefined) {
    ops['arena-first-large'] = pass(arenaFirstLarge);
    ops['bare-view-large'] = pass(bareViewLarge);
  }
  if (n === FRAME_SIZE) Object.assign(ops, frameOps(slab, dims));
  return ops;
}

/** Frames: open, carve one array, close; on the arena directly, through scratchspace, and by hand. */
function frameOps(slab: ArrayBuffer, dims: readonly number[]): Record<string, HostOp> {
  // Typed with the frame protocol it implements, which the public Arena leaves optional (core's Space).
  const arena = new Arena(slab) as Arena<'host'> & { [openFrameKey](): Frame<'host'> };
  const open = () => {
    for (let i = 0; i < PASS; i++) {
      const frame = arena[openFrameKey]();
      keep[i & 63] = frame.alloc('float32', dims);
      frame.close();
    }
    return keep;
  };

  // The callback is made once, as a caller who cares about garbage writes it.
  const inFrame = (frame: { alloc(dtype: 'float32', dims: readonly number[]): unknown }) => frame.alloc('float32', dims);
  const scratch = () => {
    for (let i = 0; i < PASS; i++) keep[i & 63] = scratchspace(arena, inFrame);
    return keep;
  };

  // The floor: remember the offset, carve from a dense cache, restore the offset.
  const floor = new FloorCache(slab, dims[0] as number);
  const byHand = () => {
    for (let i = 0; i < PASS; i++) {
      const mark = floor.offset;
      keep[i & 63] = floor.alloc('float32', dims);
      floor.offset = mark;
    }
    return keep;
  };
  return {
    'arena-frame': { run: open, per: PASS },
    scratchspace: { run: scratch, per: PASS },
    'floor-frame': { run: byHand, per: PASS },
  };
}

const labels: Readonly<Record<string, (n: number) => string>> = {
  'arena-first': () => 'Pol arena.alloc, first pass (new views)',
  'arena-first-alloc': () => "Pol alloc(arena, 'float32', n), first pass (new views)",
  'arena-first-long': () => `Pol arena.alloc, first pass of ${LONG_PASS.toLocaleString('en-US')} carves per arena`,
  'bare-view-long': () => `new Float32Array(buffer, offset, n) over ${LONG_PASS.toLocaleString('en-US')} places`,
  'arena-first-large': () => 'Pol arena.alloc, first pass on a 64 MiB slab',
  'bare-view-large': () => 'new Float32Array(buffer, offset, n) on a 64 MiB slab',
  'arena-steady': () => 'Pol arena.alloc, steady state (repeated sequence)',
  'arena-one-offset': () => 'Pol arena.alloc + reset, one shape at one offset',
  'arena-cycle': () => `Pol arena.alloc + reset, ${CYCLE} shapes cycling at one offset`,
  'arena-cycle-spread': () => `Pol arena.alloc, steady state, ${CYCLE} shapes cycling at each of ${PASS} offsets`,
  similar: () => 'Pol Similar(x).alloc',
  'bare-view': () => 'new Float32Array(buffer, offset, n)',
  'floor-steady': () => 'steady floor by hand: dense index, dtype and dims compare, bump',
  'floor-first': () => 'first-carve floor by hand: one view and one wrapper',
  'new-float32array': (n) => `new Float32Array(${n})`,
  'typedarray-pool': () => 'typedarray-pool malloc + free',
  'thi-ng-malloc': () => '@thi.ng/malloc mallocAs + free',
  'arena-frame': () => 'Pol arena frame: open, one carve, close',
  scratchspace: () => 'Pol scratchspace(arena, f), one carve in f',
  'floor-frame': () => 'frame floor by hand: remember offset, carve, restore',
};

const polOps = new Set([
  'arena-first',
  'arena-first-alloc',
  'arena-first-long',
  'arena-first-large',
  'arena-steady',
  'arena-one-offset',
  'arena-cycle',
  'arena-cycle-spread',
  'similar',
  'arena-frame',
  'scratchspace',
]);

/** A measurement of calls that each did `per` operations, as one of single operations. */
function perOperation(m: Measurement, per: number): Measurement {
  if (per === 1) return m;
  return { ...m, timeNs: m.timeNs / per, p50Ns: m.p50Ns / per, bytesPerOp: m.bytesPerOp / per, ops: m.ops * per };
}

/** The host allocation suite. */
export async function hostAllocation(run: RunOptions): Promise<SuiteResult> {
  const measurements: Measurement[] = [];
  const comparisons: Comparison[] = [];
  // One set of operations made and dropped first, so that every size is measured alike: V8 compiles
  // a function made only once so far for its own closure (the arena it reads becomes a constant),
  // which sped up the first size's rows, some more than others, and made its ratios disagree with
  // the other sizes'. From the second set on, every operation is compiled for any closure.
  hostOps(hostSizes[0]);
  for (const n of hostSizes) {
    const section = hostSection(n);
    run.log(section);
    const ops = hostOps(n);
    const names = Object.keys(ops);
    const per = names.map((name) => (ops[name] as HostOp).per);
    const specs = names.map((name, i) => ({
      id: `host.${name}.${n}`,
      section,
      label: labels[name]?.(n) ?? name,
      pol: polOps.has(name),
      unit: 'alloc' as const,
      op: (ops[name] as HostOp).run,
      bytesOps: Math.max(8, Math.ceil((n >= 65536 ? 64 : 4096) / (per[i] ?? 1))),
    }));
    // Measured per call, reported per operation. Five rounds in a rotated order: in a fixed order each
    // row followed the same one, and the rows that allocate whole arrays (Similar, new Float32Array: a
    // quarter of a megabyte each at n = 65,536) left the collector work that fell on the bare view
    // timed next, so the ratios to it swung by a third between runs.
    const results = (await measureOps(specs, run, 5, true)).map((m, i) => perOperation(m, per[i] ?? 1));
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
      compare(first, view, { kind: 'ratio-at-most', value: 2.5, maxBytes: 300 }),
      compare(get('arena-first-alloc'), view, { kind: 'ratio-at-most', value: 2.5, maxBytes: 300 }),
      compare(first, get('floor-first')),
      compare(steady, view, { kind: 'ratio-at-most', value: 0.5, zeroBytes: true }),
      compare(steady, get('floor-steady'), undefined, 'time-ratio'),
      compare(get('arena-cycle'), get('arena-one-offset'), { kind: 'ratio-at-most', value: 2, zeroBytes: true }),
      compare(get('arena-cycle-spread'), steady, undefined, 'time-ratio'),
      compare(steady, get('typedarray-pool'), { kind: 'faster-at-least', value: 3 }),
      compare(steady, get('new-float32array'), n === 1024 ? { kind: 'faster-at-least', value: 40 } : undefined),
      compare(steady, get('thi-ng-malloc')),
      compare(get('similar'), get('new-float32array')),
    );
    if (byName.has('arena-first-long')) {
      comparisons.push(
        compare(get('arena-first-long'), get('bare-view-long'), { kind: 'ratio-at-most', value: 2.5, maxBytes: 300 }),
      );
    }
    if (byName.has('arena-first-large')) {
      comparisons.push(
        compare(get('arena-first-large'), get('bare-view-large'), { kind: 'ratio-at-most', value: 2.5, maxBytes: 300 }),
      );
    }
    if (n === FRAME_SIZE) {
      const floorFrame = get('floor-frame');
      comparisons.push(
        compare(get('arena-frame'), floorFrame, { kind: 'bytes-at-most', bytes: 0 }),
        compare(get('scratchspace'), floorFrame, { kind: 'bytes-at-most', bytes: 0 }),
      );
    }
  }
  return { measurements, comparisons };
}
