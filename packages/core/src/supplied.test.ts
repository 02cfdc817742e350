import { describe, expect, it } from 'vitest';
import { checkSupplied } from './backend.js';
import { hostArray, type Spec, Undef } from './index.js';

const spec = {
  y: Undef('float32', 2, 3),
  kept: new Int8Array(4),
  group: { w: Undef('float32', 4), b: Undef('float32', 2) },
  layers: [{ w: Undef('float64', 2) }, { w: Undef('float64', 3) }],
} satisfies Spec;

describe('checkSupplied', () => {
  it('accepts arrays of the described dtype and dims, and ignores names the spec does not describe', () => {
    expect(checkSupplied(spec, {})).toBeUndefined();
    expect(checkSupplied(spec, { y: hostArray(new Float32Array(6), [2, 3]), lr: 0.1, other: 'anything' })).toBeUndefined();
    expect(checkSupplied(spec, { kept: new Int8Array(4) })).toBeUndefined();
  });

  it('accepts partial and complete groups and lists, and undefined anywhere', () => {
    expect(checkSupplied(spec, { group: { w: new Float32Array(4) } })).toBeUndefined();
    expect(checkSupplied(spec, { group: { w: new Float32Array(4), b: new Float32Array(2) } })).toBeUndefined();
    expect(checkSupplied(spec, { group: { b: undefined, stray: undefined } })).toBeUndefined();
    expect(checkSupplied(spec, { layers: [undefined, { w: new Float64Array(3) }] })).toBeUndefined();
    expect(checkSupplied(spec, { layers: [{ w: new Float64Array(2) }] })).toBeUndefined();
    expect(checkSupplied(spec, { y: undefined })).toBeUndefined();
  });

  it('refuses an array of the wrong dims or dtype, naming the path, both shapes and the remedy', () => {
    expect(checkSupplied(spec, { y: new Float32Array(6) })).toEqual({
      path: 'y',
      expected: 'float32[2, 3]',
      got: 'float32[6]',
      remedy: "Pass a float32[2, 3] array under 'y', or leave 'y' out to have it materialized.",
      message:
        "The buffer supplied under 'y' is float32[6], but the spec describes 'y' as float32[2, 3]. Pass a float32[2, 3] array under 'y', or leave 'y' out to have it materialized.",
    });
    expect(checkSupplied(spec, { layers: [undefined, { w: new Float32Array(3) }] })).toMatchObject({
      path: 'layers[1].w',
      expected: 'float64[3]',
      got: 'float32[3]',
    });
    expect(checkSupplied(spec, { kept: new Int8Array(3) })).toMatchObject({ path: 'kept', expected: 'int8[4]', got: 'int8[3]' });
  });

  it('compares shapes across bare TypedArrays and Pol arrays, both ways', () => {
    const square = { m: hostArray(new Float32Array(4), [2, 2]), v: new Float32Array(4), u: Undef('float32', 4) } satisfies Spec;
    expect(checkSupplied(square, { m: hostArray(new Float32Array(4), [2, 2]) })).toBeUndefined();
    expect(checkSupplied(square, { m: new Float32Array(4) })).toMatchObject({
      path: 'm',
      expected: 'float32[2, 2]',
      got: 'float32[4]',
    });
    expect(checkSupplied(square, { v: hostArray(new Float32Array(4)) })).toBeUndefined();
    expect(checkSupplied(square, { v: hostArray(new Float32Array(4), [4, 1]) })).toMatchObject({
      path: 'v',
      got: 'float32[4, 1]',
    });
    expect(checkSupplied(square, { v: new Float64Array(4) })).toMatchObject({
      path: 'v',
      expected: 'float32[4]',
      got: 'float64[4]',
    });
    expect(checkSupplied(square, { u: hostArray(new Float32Array(4)) })).toBeUndefined();
    expect(checkSupplied(square, { u: new Int32Array(4) })).toMatchObject({ path: 'u', got: 'int32[4]' });
  });

  it('refuses a non-array where an array is described', () => {
    expect(checkSupplied(spec, { y: [1, 2, 3] })).toMatchObject({ path: 'y', got: 'an array of length 3' });
    expect(checkSupplied(spec, { group: { w: 4 } })).toMatchObject({ path: 'group.w', got: '4' });
  });

  it('refuses a group that is not a plain object, or names the spec does not describe inside one', () => {
    expect(checkSupplied(spec, { group: new Float32Array(4) })).toMatchObject({
      path: 'group',
      expected: 'a group { w, b }',
      got: 'float32[4]',
      remedy: "Pass a plain object with (some of) the names w, b under 'group', or leave 'group' out.",
    });
    expect(checkSupplied(spec, { group: { w: new Float32Array(4), bias: new Float32Array(2) } })).toMatchObject({
      path: 'group.bias',
      expected: 'nothing',
      got: 'float32[2]',
      remedy: "The spec describes 'group' as a group { w, b }: remove 'bias' (a misspelt name?).",
    });
  });

  it('refuses a list that is not a JavaScript array, or longer than described', () => {
    expect(checkSupplied(spec, { layers: { 0: { w: new Float64Array(2) } } })).toMatchObject({
      path: 'layers',
      expected: 'a list of 2',
      got: 'a plain object',
    });
    expect(checkSupplied(spec, { layers: [undefined, undefined, { w: new Float64Array(2) }] })).toMatchObject({
      path: 'layers[2]',
      expected: 'nothing',
      remedy: "The spec describes 'layers' as a list of 2: remove element 2.",
    });
    expect(checkSupplied(spec, { layers: [undefined, undefined, undefined] })).toBeUndefined();
  });

  it('changes nothing it is given', () => {
    const given = { group: { w: new Float32Array(4), bias: 1 } };
    checkSupplied(spec, given);
    expect(Object.keys(given.group)).toEqual(['w', 'bias']);
  });
});
