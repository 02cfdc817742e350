import { describe, expect, it } from 'vitest';
import { describeValue, isPlainObject, isThenable } from './backend.js';
import { hostArray, Similar, scratchspace, Undef } from './index.js';

describe('isThenable', () => {
  it('is true for promises and for any object or function with a then method', () => {
    expect(isThenable(Promise.resolve(1))).toBe(true);
    // biome-ignore lint/suspicious/noThenProperty: a hand-made thenable is what is under test.
    expect(isThenable({ then() {} })).toBe(true);
    // biome-ignore lint/suspicious/noThenProperty: a hand-made thenable is what is under test.
    const fn = Object.assign(() => {}, { then: () => {} });
    expect(isThenable(fn)).toBe(true);
    expect(isThenable((async () => {})())).toBe(true);
  });

  it('is false for everything else, a then that is not a function included', () => {
    // biome-ignore lint/suspicious/noThenProperty: a then that is not a function is what is under test.
    for (const x of [null, undefined, 0, 'then', {}, { then: 1 }, [], () => {}, Symbol('x'), 1n]) {
      expect(isThenable(x)).toBe(false);
    }
  });
});

describe('isPlainObject', () => {
  it('isPlainObject is true for object literals and null-prototype objects only', () => {
    expect(isPlainObject({})).toBe(true);
    expect(isPlainObject(Object.create(null))).toBe(true);
    for (const x of [[], new Map(), new Float32Array(1), Undef('int8', 1), null, undefined, 'x', 1, () => {}]) {
      expect(isPlainObject(x)).toBe(false);
    }
    class Thing {}
    expect(isPlainObject(new Thing())).toBe(false);
  });
});

describe('describeValue', () => {
  it('renders values briefly and safely for messages', () => {
    expect(describeValue('w')).toBe("'w'");
    expect(describeValue(3)).toBe('3');
    expect(describeValue(Number.NaN)).toBe('NaN');
    expect(describeValue(5n)).toBe('5n');
    expect(describeValue(null)).toBe('null');
    expect(describeValue(undefined)).toBe('undefined');
    expect(describeValue(true)).toBe('true');
    expect(describeValue(Symbol('s'))).toBe('Symbol(s)');
    expect(describeValue(function kernel() {})).toBe('function kernel');
    expect(describeValue(() => {})).toBe('function (anonymous)');
    expect(describeValue([1, 2, 3])).toBe('an array of length 3');
    expect(describeValue({ a: 1 })).toBe('a plain object');
    expect(describeValue(Object.create(null))).toBe('a plain object');
    expect(describeValue(new Map())).toBe('a Map');
    expect(describeValue(new Float32Array(2))).toBe('a Float32Array');
    expect(describeValue(new Int8Array(2))).toBe('an Int8Array');
    expect(describeValue(new Uint8Array(2))).toBe('a Uint8Array');
    expect(describeValue(new ArrayBuffer(2))).toBe('an ArrayBuffer');
  });

  it('names Pol’s own values as users know them', () => {
    expect(describeValue(Undef('float32', 2))).toBe('an Undef');
    expect(describeValue(new (class UploadBatch {})())).toBe('an UploadBatch');
    // What the user holds, never an internal class: the space Similar(x) returns, a frame on it.
    const similar = Similar(new Float32Array(1));
    expect(describeValue(similar)).toBe('a Similar space');
    expect(scratchspace(similar, (frame) => describeValue(frame))).toBe('a Frame');
    expect(describeValue(hostArray(new Float32Array(2)))).toBe('a HostArray');
  });

  it('never calls into the value (no toString of user objects)', () => {
    const hostile = {
      toString(): string {
        throw new Error('called');
      },
    };
    expect(describeValue(hostile)).toBe('a plain object');
  });
});
