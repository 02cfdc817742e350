import { describe, expect, it } from 'vitest';
import { keepAncestors, takeAncestors } from './backend.js';
import { checkSpec, Undef } from './index.js';

describe('takeAncestors and keepAncestors: one spare stack for every cycle-checking walk', () => {
  it('hands back the stack kept last, once; a second taker meanwhile gets a fresh one', () => {
    const first = takeAncestors();
    keepAncestors(first);
    const taken = takeAncestors();
    expect(taken).toBe(first);
    const meanwhile = takeAncestors(); // a walk inside a walk (a getter)
    expect(meanwhile).not.toBe(taken);
    expect(meanwhile).toEqual([]);
    keepAncestors(meanwhile);
    keepAncestors(taken); // the outer walk returns last: its stack is the spare
    expect(takeAncestors()).toBe(taken);
    keepAncestors(taken);
  });

  it('does not keep a stack that still holds containers (an unbalanced walk)', () => {
    const stack = takeAncestors();
    stack.push({});
    keepAncestors(stack);
    const next = takeAncestors();
    expect(next).not.toBe(stack);
    expect(next).toEqual([]);
    keepAncestors(next);
  });

  it("is core's spec check's stack: a check returns it, balanced, for the next walk", () => {
    const mine = takeAncestors();
    keepAncestors(mine);
    expect(checkSpec({ layers: [{ w: Undef('float32', 2) }], b: { c: Undef('int8', 1) } })).toBeUndefined();
    const after = takeAncestors();
    expect(after).toBe(mine);
    expect(after).toEqual([]);
    keepAncestors(after);
  });

  it('a walk that throws leaves the next one a fresh stack, never a dirty one', () => {
    const throwing = {
      get x(): unknown {
        throw new Error('a getter that throws');
      },
    };
    expect(() => checkSpec({ nested: throwing })).toThrow('a getter that throws');
    const next = takeAncestors();
    expect(next).toEqual([]);
    keepAncestors(next);
  });
});
