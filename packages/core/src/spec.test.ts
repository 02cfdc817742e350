import { describe, expect, it } from 'vitest';
import { alloc, checkSpec, hostArray, InvalidSpecError, type Spec, Undef } from './index.js';
import { countingSpace } from './test-support/fixtures.js';

describe('checkSpec with JavaScript arrays', () => {
  it('accepts lists and tuples of Undefs, data arrays, specs and more lists, empty ones too', () => {
    const spec = {
      layers: [{ w: Undef('float32', 2, 3), b: Undef('float32', 3) }, { w: Undef('float32', 3, 1) }],
      pair: [Undef('int8', 1), new Float32Array(2)],
      grid: [[Undef('uint8', 1)], [], [hostArray(new Int16Array(2))]],
      none: [],
    };
    expect(checkSpec(spec)).toBeUndefined();
  });

  it('names an index in the path: layers[1].w, grid[0][2]', () => {
    expect(checkSpec({ layers: [{ w: Undef('float32', 1) }, { w: 'zeros' }] })?.path).toBe('layers[1].w');
    expect(checkSpec({ grid: [[Undef('int8', 1), Undef('int8', 1), 7]] })?.path).toBe('grid[0][2]');
    expect(checkSpec({ a: { b: [Undef('int8', 1), { c: null }] } })?.path).toBe('a.b[1].c');
  });

  it('refuses holes and undefined elements, naming their index', () => {
    // biome-ignore lint/suspicious/noSparseArray: a hole is the bad input under test.
    const holey = [Undef('int8', 1), , Undef('int8', 1)];
    const problem = checkSpec({ layers: holey });
    expect(problem?.path).toBe('layers[1]');
    expect(problem?.message).toBe(
      'layers[1] is undefined, but a spec value must be an Undef, a data array (a TypedArray or a Pol array), a nested spec, or a JavaScript array of those',
    );
    expect(checkSpec({ layers: [undefined] })?.path).toBe('layers[0]');
  });

  it('detects cycles through arrays', () => {
    const list: unknown[] = [Undef('int8', 1)];
    list.push(list);
    expect(checkSpec({ list })).toEqual({ path: 'list[1]', message: 'the spec refers back to itself at list[1]' });
    const spec: Record<string, unknown> = {};
    spec.layers = [{ up: spec }];
    expect(checkSpec(spec)?.path).toBe('layers[0].up');
  });

  it('accepts the same list or group twice (a shared branch is no cycle)', () => {
    const shared = [Undef('int8', 1)];
    const group = { w: Undef('int8', 1) };
    expect(checkSpec({ a: shared, b: shared, c: [group, group] })).toBeUndefined();
  });

  it('keeps the top of a spec a plain object: a list at the top is refused with an empty path', () => {
    expect(checkSpec([Undef('int8', 1)])?.path).toBe('');
  });

  it('is reentrant: a getter that checks another spec while one is being checked', () => {
    const inner = { y: Undef('int8', 1) };
    const spec = {
      get x() {
        expect(checkSpec({ deep: [inner] })).toBeUndefined();
        return [Undef('int8', 1)];
      },
      z: [{ bad: 1 }],
    };
    expect(checkSpec(spec)?.path).toBe('z[0].bad');
    expect(checkSpec({ again: [[inner]] })).toBeUndefined();
  });
});

describe('alloc with lists in the spec', () => {
  it('materializes a list element by element into a fresh JavaScript array', () => {
    const space = countingSpace();
    const spec = { layers: [{ w: Undef('float32', 2, 3) }, { w: Undef('float32', 3, 1) }] };
    const { layers } = alloc(space, spec);
    expect(Array.isArray(layers)).toBe(true);
    expect(layers).not.toBe(spec.layers);
    expect(layers.map((l) => l.w.dims)).toEqual([
      [2, 3],
      [3, 1],
    ]);
    expect(space.calls.map((c) => c.dims)).toEqual([
      [2, 3],
      [3, 1],
    ]);
  });

  it('passes data arrays inside lists through untouched', () => {
    const mine = new Float32Array(3);
    const theirs = hostArray(new Int8Array(2));
    const out = alloc(countingSpace(), { list: [mine, Undef('int8', 1), theirs] });
    expect(out.list[0]).toBe(mine);
    expect(out.list[2]).toBe(theirs);
  });

  it('gives an empty list for an empty list, and allocates nothing for it', () => {
    const space = countingSpace();
    expect(alloc(space, { none: [] }).none).toEqual([]);
    expect(space.calls).toEqual([]);
  });

  it('refuses a bad element with InvalidSpecError naming its path, allocating nothing', () => {
    const space = countingSpace();
    try {
      alloc(space, { first: Undef('int8', 1), layers: [{ w: Undef('float32', 1) }, { w: 3 }] } as unknown as Spec);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidSpecError);
      expect((error as InvalidSpecError).path).toBe('layers[1].w');
      expect((error as InvalidSpecError).message).toContain('layers[1].w is 3');
    }
    expect(space.calls).toEqual([]);
  });
});
