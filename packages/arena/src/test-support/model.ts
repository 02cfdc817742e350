/**
 * A reference model of an arena, written as plainly as possible (lists and loops, no clocks or
 * monotonic stacks), and an interpreter that runs one generated program against both the real
 * arena and the model, checking after every operation that they agree.
 */
import {
  alloc,
  type DType,
  dtypeInfo,
  type Frame,
  type HostArray,
  scratchspace,
  type TypedArrayOf,
  Undef,
  withspace,
} from '@pol/core';
import { rollbackKey, savepointKey } from '@pol/core/backend';
import { expect } from 'vitest';
import { POISON_BYTE } from '../backend.js';
import { Arena, type Mark, mark, reset, retract, tryAlloc, type WasmMemory } from '../index.js';
import { SAVEPOINT_RING } from '../savepoint.js';
import { makeSlab, type SlabName } from './slabs.js';

export interface Shape {
  readonly dtype: DType;
  readonly dims: readonly number[];
}

export interface Config {
  readonly slab: SlabName;
  readonly base: number;
  readonly capacity: number;
  readonly alignment: number;
  readonly checked: boolean;
  /** Whether the arena's storage has `attach`, so that the program's `forget` ops reach the arena. */
  readonly forgetful: boolean;
  /**
   * Whether the arena is made over a region of a larger slab, with sentinel bytes on both sides
   * (an arena over a WebAssembly memory always is).
   */
  readonly region: boolean;
  readonly palette: readonly Shape[];
}

/** `via`, `on`, `frame`: -3 the innermost open frame (or the arena), -1 the arena, k ≥ 0 the k-th frame ever opened. */
export type Op =
  // byLength: a 1-D shape's carve spelled alloc(space, dtype, n), which takes the space's allocLengthKey.
  | {
      readonly kind: 'alloc';
      readonly via: number;
      readonly shape: number;
      readonly fallible: boolean;
      readonly byLength: boolean;
    }
  | { readonly kind: 'spec'; readonly via: number; readonly shapes: readonly number[] }
  | { readonly kind: 'mark' }
  | { readonly kind: 'retract'; readonly mark: number }
  | { readonly kind: 'foreign' }
  | { readonly kind: 'reset' }
  | { readonly kind: 'forget' }
  | { readonly kind: 'grow' }
  | { readonly kind: 'open'; readonly on: number; readonly ambient: number }
  | { readonly kind: 'close'; readonly frame: number }
  | { readonly kind: 'save'; readonly via: number }
  | { readonly kind: 'rollback'; readonly token: number; readonly via: number };

interface ModelCarve {
  readonly id: number;
  readonly t: number;
  readonly start: number;
  readonly end: number;
  readonly dtype: DType;
  readonly count: number;
  readonly array: HostArray;
  captured: TypedArrayOf<DType>; // the TypedArray as first read (again after a grow), for poison checks
  readonly fill: number;
}

interface ModelFrame {
  readonly frame: Frame<'host'>;
  readonly start: number;
  readonly t: number;
  readonly depth: number;
  open: boolean;
}

interface ModelSavepoint {
  readonly token: unknown;
  readonly depth: number; // frames open when taken
  readonly frame: ModelFrame | undefined; // the innermost open frame when taken
  readonly seq: number; // savepoints taken at its depth before it
  readonly epoch: number;
  readonly offset: number;
  readonly watermark: number;
  readonly t: number;
  lowest: number; // the lowest offset the arena went to since it was taken
}

interface ModelMark {
  readonly mark: Mark;
  readonly offset: number;
  readonly epoch: number;
  readonly t: number;
  lowest: number; // the lowest offset the arena went to since the mark was taken
}

const alignUp = (x: number, a: number) => Math.ceil(x / a) * a;

// The checks run after every operation of every program, so they compare by hand and call
// vitest's (slower, but well-reported) expect only when something is already wrong.
function same(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) if (!same((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  return true;
}
function expectSame(actual: unknown, expected: unknown, what?: string): void {
  if (!same(actual, expected)) expect(actual, what).toEqual(expected);
}
function check(condition: boolean, what: string, actual?: unknown): void {
  if (!condition) expect.fail(`${what}${actual === undefined ? '' : ` (got ${String(actual)})`}`);
}
function stale(f: () => unknown): boolean {
  try {
    f();
    return false;
  } catch (error) {
    return (error as { code?: unknown }).code === 'POL_STALE_ARRAY';
  }
}

/** Counters over all programs, to show the generated programs exercise every outcome. */
export const outcomes = new Map<string, number>();
const count = (what: string) => outcomes.set(what, (outcomes.get(what) ?? 0) + 1);

export function runProgram(config: Config, ops: readonly Op[]): void {
  // A region: `before` bytes of sentinels below it (so that its first byte is a multiple of 8 in
  // absolute terms, as a region must be) and a few above; the slab's own bytes otherwise.
  const regioned = config.region || config.slab === 'WebAssembly.Memory';
  const slabBase = config.slab === 'Uint8Array' || config.slab === 'Buffer' ? config.base : 0;
  const before = regioned ? alignUp(slabBase + 1 + 3 * config.base, 8) - slabBase : 0;
  const after = regioned ? 5 + config.base : 0;
  const made = makeSlab(config.slab, before + config.capacity + after, config.base);
  const slab = made.slab;
  const base = made.base + before;
  const capacity = regioned ? config.capacity : made.capacity;
  const regionOptions = regioned ? { byteOffset: before, byteLength: capacity } : {};
  const memory = config.slab === 'WebAssembly.Memory' ? (slab as WasmMemory) : undefined;
  const slabBytes = (): Uint8Array =>
    memory !== undefined
      ? new Uint8Array(memory.buffer)
      : slab instanceof Uint8Array
        ? slab
        : new Uint8Array(slab as ArrayBuffer | SharedArrayBuffer);
  const slabEnd = slabBytes().length;
  if (regioned && capacity === 0) {
    // A region of no bytes is refused before anything is made.
    let code: unknown;
    try {
      new Arena(slab, { alignment: config.alignment, ...regionOptions });
    } catch (error) {
      code = (error as { code?: unknown }).code;
    }
    check(code === 'POL_INVALID_REGION', 'an empty region is refused with InvalidRegionError', code);
    count('empty region');
    return;
  }
  const SENTINEL = 0x5c;
  if (regioned) {
    const bytes = slabBytes();
    bytes.fill(SENTINEL, 0, before);
    bytes.fill(SENTINEL, before + capacity, slabEnd);
  }
  // A forgetful arena's storage is the slab's own with `attach`, which keeps the arena's `forget`.
  let forget: (() => void) | undefined;
  const probe = new Arena(slab, regionOptions); // only to read the slab's storage: disposed at once, so its region is free
  probe.dispose();
  const storage = config.forgetful
    ? {
        ...probe.storage,
        attach(_slab: unknown, _arena: unknown, f: () => void) {
          check(forget === undefined, 'attach is called once per arena');
          forget = f;
        },
      }
    : undefined;
  const arena =
    storage === undefined
      ? new Arena(slab, { alignment: config.alignment, checked: config.checked, ...regionOptions })
      : new Arena(slab, { alignment: config.alignment, checked: config.checked, storage, ...regionOptions });
  if (config.forgetful) check(forget !== undefined, 'a storage with attach is attached to the arena');
  const other = new Arena(new ArrayBuffer(64));
  const unchecked = !config.checked;

  // The model.
  let offset = 0;
  let watermark = 0;
  let epoch = 0;
  let nextId = 0;
  let arraysCreated = 0;
  const frames: ModelFrame[] = [];
  const stack: ModelFrame[] = [];
  const marks: ModelMark[] = [];
  let live: ModelCarve[] = [];
  const dead: ModelCarve[] = [];
  // Unchecked mode: which array object a carve of (offset, dtype, dims) must return, and when it was cached.
  const cache = new Map<string, HostArray>();
  const cachedAt = new Map<string, number>();
  // Savepoints: tokens taken, how many were taken at each depth (the arena keeps the last
  // SAVEPOINT_RING of each depth), and when the last operation that a rollback cannot reach back
  // over with the cache (a mark, a frame, a release) happened.
  const savepoints: ModelSavepoint[] = [];
  const savesAtDepth: number[] = [];
  let disarmedAt = -1;
  const takeSavepoint = (token: unknown, t: number): void => {
    const depth = stack.length;
    const seq = savesAtDepth[depth] ?? 0;
    savesAtDepth[depth] = seq + 1;
    savepoints.push({ token, depth, frame: top(), seq, epoch, offset, watermark, t, lowest: offset });
  };
  const seen = new Set<HostArray>();

  // Unchecked arenas reuse frame objects, one per depth: a kept handle of a closed frame is the
  // same object as the next frame opened at its depth, and acts as that frame (the documented
  // aliasing). `owner` maps each frame object to the model frame it stands for now.
  const owner = new Map<Frame<'host'>, ModelFrame>();
  const lastAtDepth: (Frame<'host'> | undefined)[] = [];
  const top = () => stack[stack.length - 1];
  const resolve = (k: number): { space: Arena<'host'> | Frame<'host'>; frame: ModelFrame | undefined } => {
    if (k === -3) {
      const t = top();
      return t === undefined ? { space: arena, frame: undefined } : { space: t.frame, frame: t };
    }
    if (k < 0 || frames.length === 0) return { space: arena, frame: undefined };
    const f = frames[k % frames.length] as ModelFrame;
    return { space: f.frame, frame: owner.get(f.frame) ?? f };
  };

  /** Where the model places a carve at `from`, and the reason it cannot, if any. */
  const place = (
    from: number,
    frame: ModelFrame | undefined,
    shape: Shape,
  ): { start: number; end: number; count: number } | { error: string } => {
    if (frame !== undefined && !frame.open) return { error: 'POL_FRAME_CLOSED' };
    if (frame === undefined ? stack.length > 0 : top() !== frame) return { error: 'POL_FRAME_ORDER' };
    const size = dtypeInfo(shape.dtype).byteSize;
    const n = shape.dims.reduce((a, b) => a * b, 1);
    let start = alignUp(from, config.alignment);
    if ((base + start) % size !== 0) start += size - ((base + start) % size);
    const end = start + n * size;
    if (end > capacity) return { error: 'POL_ARENA_FULL' };
    return { start, end, count: n };
  };

  const keyOf = (start: number, shape: Shape) => `${start}|${shape.dtype}|${shape.dims.join(',')}`;

  const describeModel = () => ({
    kind: 'host',
    residency: 'host',
    capacity,
    byteOffset: before,
    disposed: false,
    offset,
    watermark,
    alignment: config.alignment,
    epoch,
    checked: config.checked,
    openFrames: stack.length,
    frameMarks: stack.map((f) => f.start),
  });

  const accept = (array: HostArray, shape: Shape, start: number, end: number, n: number, from: number, t: number): void => {
    // Alignment: at or past the arena-aligned offset by less than one element, and absolutely aligned.
    const size = dtypeInfo(shape.dtype).byteSize;
    const aligned = alignUp(from, config.alignment);
    check(
      start >= aligned && start < aligned + size,
      'a carve starts at the aligned offset, or less than an element past it',
      start,
    );
    check((base + start) % size === 0, 'a carve is absolutely aligned for its element', base + start);
    if (base % 8 === 0)
      check(start % Math.max(config.alignment, size) === 0, 'a carve over an aligned base is arena-aligned', start);
    const data = array.data;
    check(data.byteOffset === base + start, 'the view starts where the model says', data.byteOffset);
    check(data.length === n, 'the view has prod(dims) elements', data.length);
    check(array.dtype === shape.dtype, 'the dtype is as asked', array.dtype);
    expectSame(array.dims, shape.dims, 'dims');
    const key = keyOf(start, shape);
    const cached = cache.get(key);
    if (unchecked && cached !== undefined) {
      check(array === cached, 'a repeated carve returns the cached array object');
    } else {
      check(!seen.has(array), 'a first carve (or any checked carve) is a new array object');
      seen.add(array);
      arraysCreated++;
      if (unchecked) {
        cache.set(key, array);
        cachedAt.set(key, t);
      }
    }
    const id = nextId++;
    const fill = (id % 100) + 1;
    (data as Float64Array).fill(fill);
    live.push({ id, t, start, end, dtype: shape.dtype, count: n, array, captured: data, fill });
    offset = end;
    watermark = Math.max(watermark, offset);
  };

  // Release everything carved after time `t`, as a retract, frame close or reset does.
  const release = (target: number, t: number) => {
    const dying = live.filter((c) => c.t > t);
    live = live.filter((c) => c.t <= t);
    offset = target;
    for (const m of marks) m.lowest = Math.min(m.lowest, target);
    for (const p of savepoints) p.lowest = Math.min(p.lowest, target);
    for (const c of dying) {
      dead.push(c);
      if (!config.checked) continue;
      check(
        stale(() => c.array.data),
        'a released checked array refuses data',
      );
      if (c.count === 0) continue;
      const info = dtypeInfo(c.dtype);
      const values = c.captured as ArrayLike<number>;
      const poison = new info.TypedArray(1);
      new Uint8Array(poison.buffer).fill(POISON_BYTE);
      const expected = info.float ? Number.NaN : (poison as ArrayLike<number>)[0];
      for (let i = 0; i < values.length; i++) check(Object.is(values[i], expected), 'released bytes are poisoned', values[i]);
    }
  };

  const expectThrows = (code: string, f: () => unknown, spec = false) => {
    const before = arena.describe();
    let thrown: unknown;
    try {
      f();
    } catch (error) {
      thrown = error;
    }
    if ((thrown as { code?: string } | undefined)?.code !== code) expect.fail(`expected ${code}, got ${String(thrown)}`);
    const after = arena.describe();
    if (spec) expectSame({ ...after, arraysCreated: 0 }, { ...before, arraysCreated: 0 }, 'a refused spec changes nothing');
    else expectSame(after, before, 'a refused operation changes nothing');
    count(`refused ${code}`);
  };

  ops.forEach((op, t) => {
    switch (op.kind) {
      case 'alloc': {
        const shape = config.palette[op.shape % config.palette.length] as Shape;
        const { space, frame } = resolve(op.via);
        const from = offset;
        const at = place(from, frame, shape);
        const byLength = op.byLength && !op.fallible && shape.dims.length === 1;
        const run = () =>
          op.fallible
            ? tryAlloc(space, shape.dtype, shape.dims)
            : byLength
              ? alloc(space, shape.dtype, shape.dims[0] as number)
              : alloc(space, shape.dtype, shape.dims);
        if ('error' in at) {
          if (at.error === 'POL_ARENA_FULL' && op.fallible) {
            const before = arena.describe();
            check(run() === undefined, 'tryAlloc answers undefined when full');
            expectSame(arena.describe(), before, 'a tryAlloc that answers undefined changes nothing');
            count('tryAlloc undefined');
          } else {
            expectThrows(at.error, run);
          }
        } else {
          const array = run() as HostArray;
          accept(array, shape, at.start, at.end, at.count, from, t);
          count('alloc');
          if (byLength) count('alloc by length');
        }
        break;
      }
      case 'spec': {
        const shapes = op.shapes.map((i) => config.palette[i % config.palette.length] as Shape);
        const { space, frame } = resolve(op.via);
        const spec: Record<string, Undef> = {};
        shapes.forEach((s, i) => {
          spec[`m${i}`] = Undef(s.dtype, s.dims);
        });
        // Simulate all members first: the spec succeeds whole or changes nothing.
        let from = offset;
        // A closed frame refuses even an empty spec.
        let failure: string | undefined = frame !== undefined && !frame.open ? 'POL_FRAME_CLOSED' : undefined;
        const placed: { start: number; end: number; count: number; from: number }[] = [];
        for (const s of failure === undefined ? shapes : []) {
          const at = place(from, frame, s);
          if ('error' in at) {
            failure = at.error;
            break;
          }
          placed.push({ ...at, from });
          from = at.end;
        }
        // Past a closed frame, the spec takes a savepoint; a failure rolls back to it.
        if (failure !== 'POL_FRAME_CLOSED') takeSavepoint(undefined, t);
        if (failure !== undefined) {
          expectThrows(failure, () => alloc(space, spec), true);
          if (failure !== 'POL_FRAME_CLOSED') disarmedAt = t;
          // The members carved before the failure were made (and dropped); the cache is as it was.
          const fresh = new Set<string>();
          placed.forEach((p, i) => {
            const key = keyOf(p.start, shapes[i] as Shape);
            if (config.checked || (!cache.has(key) && !fresh.has(key))) arraysCreated++;
            fresh.add(key);
          });
          break;
        }
        const result = alloc(space, spec) as Record<string, HostArray>;
        shapes.forEach((s, i) => {
          const p = placed[i] as { start: number; end: number; count: number; from: number };
          accept(result[`m${i}`] as HostArray, s, p.start, p.end, p.count, p.from, t);
        });
        count('spec');
        break;
      }
      case 'mark': {
        const m = mark(arena);
        check(m.offset === offset && m.epoch === epoch, 'a mark snapshots offset and epoch');
        marks.push({ mark: m, offset, epoch, t, lowest: offset });
        disarmedAt = t;
        break;
      }
      case 'retract': {
        if (marks.length === 0) break;
        const m = marks[op.mark % marks.length] as ModelMark;
        const inner = top();
        const error =
          m.epoch !== epoch
            ? 'POL_STALE_MARK'
            : m.offset > offset
              ? 'POL_MARK_ABOVE_OFFSET'
              : m.lowest < m.offset
                ? 'POL_STALE_MARK'
                : inner !== undefined && m.t < inner.t
                  ? 'POL_FRAME_ORDER'
                  : undefined;
        if (error !== undefined) {
          expectThrows(error, () => retract(arena, m.mark));
          break;
        }
        retract(arena, m.mark);
        release(m.offset, m.t);
        disarmedAt = t;
        count('retract');
        break;
      }
      case 'grow': {
        if (memory === undefined) break;
        try {
          memory.grow(1);
        } catch {
          break; // at its maximum
        }
        // Every view taken before is detached; the arrays re-derive theirs.
        for (const c of live) if (!config.checked || !stale(() => c.array.data)) c.captured = c.array.data;
        count('grow');
        break;
      }
      case 'forget':
        if (forget === undefined) break;
        // The slab "died": the arena drops every cached array, so each next carve is a new object,
        // and a savepoint taken before now no longer restores the cache (it is empty).
        forget();
        cache.clear();
        cachedAt.clear();
        disarmedAt = t;
        count('forget');
        break;
      case 'foreign':
        expectThrows('POL_FOREIGN_MARK', () => retract(arena, mark(other)));
        break;
      case 'reset':
        if (stack.length > 0) {
          expectThrows('POL_FRAME_ORDER', () => reset(arena));
          break;
        }
        reset(arena);
        release(0, Number.NEGATIVE_INFINITY);
        epoch++;
        disarmedAt = t;
        count('reset');
        break;
      case 'open': {
        const { space, frame } = resolve(op.on);
        const ambient = op.ambient === -2 ? undefined : resolve(op.ambient);
        const run = () => (ambient === undefined ? scratchspace(space) : withspace(ambient.space, () => scratchspace(space)));
        const inner = top();
        const error =
          frame !== undefined
            ? !frame.open
              ? 'POL_FRAME_CLOSED'
              : inner !== frame
                ? 'POL_CONTENDED'
                : undefined
            : inner !== undefined && ambient?.frame !== inner
              ? 'POL_CONTENDED'
              : undefined;
        if (error !== undefined) {
          expectThrows(error, run);
          break;
        }
        const opened: ModelFrame = { frame: run(), start: offset, t, depth: stack.length, open: true };
        const previous = lastAtDepth[opened.depth];
        if (config.checked) check(!owner.has(opened.frame), 'a checked arena never reuses a frame object');
        else if (previous !== undefined)
          check(opened.frame === previous, 'an unchecked arena reuses the frame object of its depth');
        check(opened.frame.isOpen, 'a frame opens open');
        lastAtDepth[opened.depth] = opened.frame;
        owner.set(opened.frame, opened);
        frames.push(opened);
        stack.push(opened);
        disarmedAt = t;
        count(inner === undefined ? 'open' : 'open nested');
        break;
      }
      case 'close': {
        if (frames.length === 0) break;
        const kept = op.frame === -3 ? top() : frames[op.frame % frames.length];
        if (kept === undefined) break;
        const f = owner.get(kept.frame) ?? kept;
        if (!f.open) {
          const before = arena.describe();
          f.frame.close();
          expectSame(arena.describe(), before, 'closing a closed frame changes nothing');
          break;
        }
        if (top() !== f) {
          expectThrows('POL_FRAME_ORDER', () => f.frame.close());
          break;
        }
        f.frame.close();
        f.open = false;
        stack.pop();
        release(f.start, f.t);
        disarmedAt = t;
        count('close');
        break;
      }
      case 'save': {
        const { space, frame } = resolve(op.via);
        if (frame !== undefined && !frame.open) {
          expectThrows('POL_FRAME_CLOSED', () => space[savepointKey]?.());
          break;
        }
        const token = space[savepointKey]?.();
        check(typeof token === 'number', 'a savepoint token is a number', token);
        takeSavepoint(token, t);
        count('save');
        break;
      }
      case 'rollback': {
        const taken = savepoints.filter((p) => p.token !== undefined);
        if (taken.length === 0) break;
        const p = taken[op.token % taken.length] as ModelSavepoint;
        const { space } = resolve(op.via);
        const current =
          p.depth === stack.length &&
          p.frame === top() &&
          (savesAtDepth[p.depth] ?? 0) - p.seq <= SAVEPOINT_RING &&
          p.epoch === epoch &&
          p.offset <= offset &&
          p.lowest >= p.offset;
        if (!current) {
          expectThrows('POL_INVALID_ARGUMENT', () => space[rollbackKey]?.(p.token));
          break;
        }
        space[rollbackKey]?.(p.token);
        // The cache loses what was cached since the savepoint, unless a mark, a frame or a release
        // came in between (then it keeps everything: only its identity is not restored).
        if (disarmedAt < p.t) {
          for (const [key, at] of cachedAt) {
            if (at <= p.t) continue;
            cache.delete(key);
            cachedAt.delete(key);
          }
        }
        release(p.offset, p.t);
        watermark = p.watermark;
        disarmedAt = t;
        count('rollback');
        break;
      }
    }

    // After every operation: the arena is what the model says, and every live carve is intact.
    expectSame(
      arena.describe(),
      { ...describeModel(), storage: arena.storage.name, arraysCreated },
      'the arena agrees with the model',
    );
    // Every handle ever handed out is open exactly while the frame it stands for is.
    for (const f of frames)
      check(f.frame.isOpen === (owner.get(f.frame) ?? f).open, 'a kept frame is open exactly while its frame is');
    const sorted = live.filter((c) => c.end > c.start).sort((a, b) => a.start - b.start);
    for (let i = 1; i < sorted.length; i++) {
      check((sorted[i - 1] as ModelCarve).end <= (sorted[i] as ModelCarve).start, 'no two live carves overlap');
    }
    for (const c of live) {
      check(c.end <= offset, 'every live carve lies below the offset');
      const data = c.array.data as ArrayLike<number>;
      for (let i = 0; i < data.length; i++) check(data[i] === c.fill, 'a live carve keeps what was written to it', data[i]);
    }
    if (config.checked)
      for (const c of dead)
        check(
          stale(() => c.array.data),
          'a dead checked array stays dead',
        );
  });

  // The arena never wrote a byte outside its region.
  if (regioned) {
    const bytes = slabBytes();
    for (let i = 0; i < before; i++) check(bytes[i] === SENTINEL, 'the bytes below the region are untouched', i);
    for (let i = before + capacity; i < slabEnd; i++) check(bytes[i] === SENTINEL, 'the bytes above the region are untouched', i);
    count('region intact');
  }
}
