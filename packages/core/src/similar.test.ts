import { describe, expect, it } from 'vitest';
import {
  alloc,
  CaptureViolation,
  capturing,
  type DType,
  familyKey,
  familyOf,
  hostArray,
  hostFamily,
  InvalidShapeError,
  isSpace,
  NotAnArrayError,
  outputs,
  PolError,
  Similar,
  scratchspace,
  spaceKey,
  Undef,
  UnknownDTypeError,
} from './index.js';
import { fakeFamily } from './test-support/fixtures.js';

describe('Similar', () => {
  it('around a TypedArray: a host space making fresh host arrays of any dtype and dims', () => {
    const x = new Float32Array([1, 2, 3, 4]);
    const space = Similar(x);
    expect(isSpace(space)).toBe(true);
    expect(space[spaceKey]).toBe('host');
    const y = alloc(space, 'int32', [2, 2]);
    expect(y.dtype).toBe('int32');
    expect(y.dims).toEqual([2, 2]);
    expect(y.data).toBeInstanceOf(Int32Array);
    expect(y.data.buffer).not.toBe(x.buffer);
    expect(familyOf(y)).toBe(hostFamily);
    expect([...x]).toEqual([1, 2, 3, 4]);
  });

  it('around a host array, and around a TypedArray subclass (a Node.js Buffer is one)', () => {
    expect(alloc(Similar(hostArray(new Int8Array(6), [2, 3])), 'float64', 1).data).toBeInstanceOf(Float64Array);
    class Bytes extends Uint8Array {}
    expect(String(Similar(new Bytes(3)))).toBe('Similar(uint8[3] on host)');
  });

  it('each alloc is a fresh array', () => {
    const space = Similar(new Float32Array(0));
    const a = alloc(space, 'float32', 2);
    const b = alloc(space, 'float32', 2);
    expect(a).not.toBe(b);
    expect(a.data).not.toBe(b.data);
  });

  it('prints the exemplar it is around', () => {
    expect(String(Similar(new Float32Array(8)))).toBe('Similar(float32[8] on host)');
    expect(String(Similar(hostArray(new Int16Array(6), [3, 2])))).toBe('Similar(int16[3, 2] on host)');
  });

  it('dispatches on the exemplar’s family, passing the exemplar and never reading its data', () => {
    const fake = fakeFamily();
    const x = fake.array('float32', [4]);
    Object.defineProperty(x, 'data', {
      get() {
        throw new Error('the exemplar’s data was read');
      },
    });
    const space = Similar(x);
    expect(String(space)).toBe('Similar(fake float32[4])');
    const y = alloc(space, 'uint8', 2, 2);
    expect(fake.allocated).toEqual([y]);
    expect(y.dims).toEqual([2, 2]);
  });

  it('validates dtype and dims on its own alloc method too, before asking the family', () => {
    const fake = fakeFamily();
    const space = Similar(fake.array('float32', [1]));
    expect(() => space.alloc('float32', [-1])).toThrow(InvalidShapeError);
    expect(() => space.alloc('complex64' as DType, [1])).toThrow(UnknownDTypeError);
    expect(fake.allocated).toEqual([]);
  });

  it('refuses a non-array exemplar with NotAnArrayError saying what to do', () => {
    for (const bad of [
      [1, 2, 3],
      { dtype: 'float32', dims: [2] },
      { dtype: 'float32', dims: [2], [familyKey]: null },
      3,
      null,
      undefined,
      'float32',
      new Uint8ClampedArray(2),
    ]) {
      expect(() => Similar(bad as unknown as Float32Array)).toThrow(NotAnArrayError);
    }
    expect(() => Similar([1, 2] as unknown as Float32Array)).toThrow(
      /Similar\(x\) needs an exemplar array \(a TypedArray, a HostArray, a GpuArray\), got an array of length 2\. To allocate host arrays without one, use Similar\(new Float32Array\(0\)\)\./,
    );
    expect(() => Similar({} as unknown as Float32Array)).toThrow(/got a plain object/);
    expect(() => Similar(7 as unknown as Float32Array)).toThrow(/got 7/);
    try {
      Similar(Undef('float32', 2) as unknown as Float32Array);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(PolError);
      expect((error as PolError).code).toBe('POL_NOT_AN_ARRAY');
      expect((error as PolError).name).toBe('NotAnArrayError');
    }
  });
});

describe('capturing', () => {
  it('is false for everything that cannot capture', () => {
    const fake = fakeFamily();
    for (const x of [
      new Float32Array(1),
      new BigInt64Array(1),
      hostArray(new Int8Array(2)),
      alloc(Similar(new Float32Array(0)), 'float32', 1),
      fake.array('float32', [1]), // a family that captures, but is not capturing now
      [1, 2],
      {},
      3,
      null,
      undefined,
    ]) {
      expect(capturing(x)).toBe(false);
    }
  });

  it('asks the array’s family, so a backend answers for its arrays', () => {
    const fake = fakeFamily();
    const x = fake.array('float32', [4]);
    fake.capturing = true;
    expect(capturing(x)).toBe(true);
    expect(capturing(new Float32Array(4))).toBe(false);
    fake.capturing = false;
    expect(capturing(x)).toBe(false);
  });
});

describe('CaptureViolation from Similar under capture', () => {
  it('every alloc form throws instead of allocating, and nothing is allocated', () => {
    const fake = fakeFamily();
    const space = Similar(fake.array('float32', [8]));
    fake.capturing = true;
    expect(() => alloc(space, 'float32', 3, 4)).toThrow(CaptureViolation);
    expect(() => alloc(space, Undef('int8', 2))).toThrow(CaptureViolation);
    expect(() => alloc(space, { y: Undef('float32', 2) })).toThrow(CaptureViolation);
    expect(fake.allocated).toEqual([]);
    fake.capturing = false;
    expect(alloc(space, 'float32', 1).dims).toEqual([1]);
  });

  it('carries the whole explanation: what, from which space, why, and that an Arena is the fix', () => {
    const fake = fakeFamily();
    const space = Similar(fake.array('float32', [8]));
    fake.capturing = true;
    try {
      alloc(space, 'float32', 3, 4);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(CaptureViolation);
      const { message, code, name } = error as CaptureViolation;
      expect(code).toBe('POL_CAPTURE_VIOLATION');
      expect(name).toBe('CaptureViolation');
      expect(message).toMatch(
        /^A new float32\[3, 4\] array was requested from Similar\(fake float32\[8\]\) while its device is recording a capture\./,
      );
      expect(message).toMatch(/fails .*replay|lands on replay/);
      expect(message).toMatch(/Pass an Arena \(or a Frame on one\) instead/);
      expect(message).toMatch(/Warm up eagerly, read the watermark, size the slab, then capture\./);
      expect(message).toMatch(/fell back to its default Similar space \(or a scratchspace on one\)/);
    }
  });

  it('a frame on a capturing Similar opens, but refuses to allocate', () => {
    const fake = fakeFamily();
    const space = Similar(fake.array('float32', [8]));
    fake.capturing = true;
    scratchspace(space, (frame) => {
      expect(() => alloc(frame, 'float32', 2)).toThrow(CaptureViolation);
      expect(() => alloc('float32', 2)).toThrow(CaptureViolation);
    });
    expect(fake.allocated).toEqual([]);
    expect(fake.released).toEqual([]);
  });

  it('outputs materialized into a capturing Similar throw it too', () => {
    const fake = fakeFamily();
    const x = fake.array('float32', [8]);
    const kernel = (_o: { y: unknown }, _x: unknown): void => {};
    outputs.define(kernel, () => ({ y: Undef('float32', 8) }));
    fake.capturing = true;
    expect(() => outputs(Similar(x), kernel, x)).toThrow(CaptureViolation);
    expect(fake.allocated).toEqual([]);
  });
});
