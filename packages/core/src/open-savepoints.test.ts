import { describe, expect, it } from 'vitest';
import { hostArray, InvalidArgumentError, type PolArray } from './index.js';
import { OpenSavepoints } from './open-savepoints.js';

const array = (): PolArray => hostArray(new Float32Array(1));
const owner = { toString: () => 'the test space' };

describe('OpenSavepoints', () => {
  it('keeps nothing for an allocation with no savepoint open', () => {
    const open = new OpenSavepoints();
    open.note(array());
    const token = open.take();
    expect(open.rollback(token, owner)).toEqual([]);
  });

  it('notes under the innermost open savepoint; a commit moves its arrays to the one before, or forgets them', () => {
    const open = new OpenSavepoints();
    const outer = open.take();
    const a = array();
    open.note(a);
    const inner = open.take();
    const b = array();
    open.note(b);
    open.commit(inner, owner);
    expect(open.rollback(outer, owner)).toEqual([a, b]);
    const alone = open.take();
    open.note(array());
    open.commit(alone, owner);
    expect(open.rollback(open.take(), owner)).toEqual([]);
  });

  it('tokens are distinct objects, and one not open is refused naming the owner, changing nothing', () => {
    const open = new OpenSavepoints();
    const t = open.take();
    expect(open.take()).not.toBe(t);
    const a = array();
    open.note(a);
    open.commit(open.take(), owner);
    expect(() => open.commit({}, owner)).toThrow(InvalidArgumentError);
    expect(() => open.rollback(undefined, owner)).toThrow(/not open on the test space/);
    expect(open.rollback(t, owner)).toEqual([]);
    expect(() => open.rollback(t, owner)).toThrow(/^Cannot roll back this savepoint/);
  });
});
