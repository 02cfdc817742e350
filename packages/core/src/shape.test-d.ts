import { describe, expectTypeOf, it } from 'vitest';
import { describeValue } from './backend.js';
import { byteLength, elementCount } from './index.js';

describe('shape types', () => {
  it('take readonly dims and answer numbers', () => {
    const dims: readonly number[] = Object.freeze([2, 3]);
    expectTypeOf(elementCount(dims)).toEqualTypeOf<number>();
    expectTypeOf(byteLength('float32', dims)).toEqualTypeOf<number>();
    expectTypeOf(describeValue(Symbol('s'))).toEqualTypeOf<string>();
    // @ts-expect-error dims are numbers
    elementCount(['2']);
    // @ts-expect-error not a dtype
    byteLength('complex64', dims);
  });
});
