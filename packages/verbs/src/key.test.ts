import { type HostArray, hostArray } from '@pol/core';
import fc from 'fast-check';
import { expect, describe as group, test } from 'vitest';
import { fullKey, Tracker } from './key.js';

const f32 = (n: number, dims?: number[]): HostArray<'float32'> => hostArray(new Float32Array(n), dims);

// Values as describers see them: arrays, numbers, strings, plain objects and lists of them.
const leafArb = fc.oneof(
  fc.constantFrom<number[]>([1], [2], [2, 3], []).map((dims) => ({ kind: 'array' as const, dims })),
  fc.integer({ min: -2, max: 2 }).map((n) => ({ kind: 'number' as const, n })),
  fc.constantFrom('a', 'b').map((s) => ({ kind: 'string' as const, s })),
);
type Shape =
  | { kind: 'array'; dims: number[] }
  | { kind: 'number'; n: number }
  | { kind: 'string'; s: string }
  | { kind: 'group'; entries: [string, Shape][] }
  | { kind: 'list'; items: Shape[] };
const { shape: shapeArb } = fc.letrec<{ shape: Shape }>((tie) => ({
  shape: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leafArb,
    fc
      .array(fc.tuple(fc.constantFrom('p', 'q', 'r'), tie('shape')), { maxLength: 3 })
      .map((entries) => ({ kind: 'group' as const, entries })),
    fc.array(tie('shape'), { maxLength: 3 }).map((items) => ({ kind: 'list' as const, items })),
  ),
}));

/** A fresh value of the shape: new objects and new arrays every time, equal in dtype, dims and values. */
function build(shape: Shape): unknown {
  switch (shape.kind) {
    case 'array':
      return f32(
        shape.dims.reduce((a, b) => a * b, 1),
        shape.dims,
      );
    case 'number':
      return shape.n;
    case 'string':
      return shape.s;
    case 'group':
      return Object.fromEntries(shape.entries.map(([k, v]) => [k, build(v)]));
    default:
      return shape.items.map(build);
  }
}

group('full keys', () => {
  test('property: a fresh value of the same shape matches, whatever object identities it has', () => {
    fc.assert(
      fc.property(shapeArb, (shape) => {
        expect(fullKey(build(shape)).matches(build(shape))).toBe(true);
      }),
    );
  });

  test('property: a value of another shape does not match, unless it builds the same', () => {
    fc.assert(
      fc.property(shapeArb, shapeArb, (a, b) => {
        const same = JSON.stringify(build(a), replacer) === JSON.stringify(build(b), replacer);
        expect(fullKey(build(a)).matches(build(b))).toBe(same);
      }),
    );
  });

  test('arrays by family, dtype and dims; bare TypedArrays by dtype and length; other objects by identity', () => {
    expect(fullKey(f32(6, [2, 3])).matches(f32(6, [3, 2]))).toBe(false);
    expect(fullKey(f32(2)).matches(hostArray(new Float64Array(2)))).toBe(false);
    expect(fullKey(new Float32Array(2)).matches(new Float32Array(2))).toBe(true);
    expect(fullKey(new Float32Array(2)).matches(f32(2))).toBe(false);
    const f = () => 1;
    expect(fullKey(f).matches(f)).toBe(true);
    expect(fullKey(f).matches(() => 1)).toBe(false);
    expect(fullKey(Number.NaN).matches(Number.NaN)).toBe(true);
    expect(fullKey(0).matches(-0)).toBe(false);
  });
});

group('tracked keys', () => {
  test('only what was read is keyed, and reading through a view returns the values', () => {
    const tracker = new Tracker();
    const options = { n: 2, lr: 0.1, nested: { rows: 3, note: 'x' } };
    const view = tracker.view(options) as typeof options;
    expect(view.n).toBe(2);
    expect(view.nested.rows).toBe(3);
    tracker.close();
    const key = tracker.keyOf(options);
    expect(key.matches({ n: 2, lr: 5, nested: { rows: 3, note: 'y' } })).toBe(true);
    expect(key.matches({ n: 3, lr: 0.1, nested: { rows: 3 } })).toBe(false);
    expect(key.matches({ n: 2, nested: { rows: 4 } })).toBe(false);
    expect(key.matches({ n: 2 })).toBe(false);
    expect(key.matches(null)).toBe(false);
  });

  test('a read of a missing key is keyed too: absent must stay absent', () => {
    const tracker = new Tracker();
    const options: Record<string, unknown> = { a: 1 };
    const view = tracker.view(options) as Record<string, unknown>;
    expect(view.eps ?? 1e-5).toBe(1e-5);
    tracker.close();
    const key = tracker.keyOf(options);
    expect(key.matches({ a: 9 })).toBe(true);
    expect(key.matches({ a: 9, eps: 1e-3 })).toBe(false);
  });

  test('enumerating or probing an object keys all of it', () => {
    for (const probe of [
      (o: Record<string, unknown>) => Object.keys(o),
      (o: Record<string, unknown>) => ({ ...o }),
      (o: Record<string, unknown>) => 'b' in o,
      (o: Record<string, unknown>) => Object.hasOwn(o, 'b'),
    ]) {
      const tracker = new Tracker();
      const options = { a: 1, b: 2 };
      probe(tracker.view(options) as Record<string, unknown>);
      tracker.close();
      const key = tracker.keyOf(options);
      expect(key.matches({ a: 1, b: 2 })).toBe(true);
      expect(key.matches({ a: 1, b: 3 })).toBe(false);
      expect(key.matches({ b: 2, a: 1 })).toBe(false);
    }
  });

  test('the same object passed twice is one key; after close a view reads through without recording', () => {
    const tracker = new Tracker();
    const o = { a: 1, b: 2 };
    const first = tracker.view(o) as typeof o;
    const second = tracker.view(o) as typeof o;
    void first.a;
    tracker.close();
    void second.b;
    const key = tracker.keyOf(o);
    expect(key.matches({ a: 1, b: 99 })).toBe(true);
    expect(key.keys).toEqual(['a']);
  });

  test('non-plain values are not wrapped', () => {
    const tracker = new Tracker();
    const x = f32(2);
    expect(tracker.view(x)).toBe(x);
    expect(tracker.view(3)).toBe(3);
    expect(tracker.keyOf(x).matches(f32(2))).toBe(true);
  });
});

function replacer(_key: string, value: unknown): unknown {
  if (value instanceof Float32Array) return `f32:${value.length}`;
  if (typeof value === 'object' && value !== null && 'dims' in value && 'dtype' in value) {
    return `array:${(value as HostArray).dtype}:${(value as HostArray).dims.join('x')}`;
  }
  return value;
}
