import { describe, expect, it } from 'vitest';
import { commit, commitKey, materializeInto, noSavepoint, rollback, rollbackKey, savepoint } from './backend.js';
import { alloc, InvalidArgumentError, materialize, Similar, type Space, Undef } from './index.js';
import { countingSpace, fakeFamily, InjectedFailure, transactionalSpace } from './test-support/fixtures.js';

describe('savepoint and rollback', () => {
  it('savepoint answers the space’s token, or noSavepoint when it has none', () => {
    const space = transactionalSpace();
    alloc(space, 'int8', 1);
    expect(savepoint(space)).toBe(1);
    expect(savepoint(countingSpace())).toBe(noSavepoint);
  });

  it('rollback undoes to the token, and does nothing for noSavepoint', () => {
    const space = transactionalSpace();
    const token = savepoint(space);
    materializeInto(space, { a: Undef('int8', 1), b: [Undef('int8', 1)] }, {});
    expect(space.live).toHaveLength(2);
    rollback(space, token, new Error('failed'));
    expect(space.live).toHaveLength(0);
    expect(() => rollback(countingSpace(), noSavepoint, new Error('failed'))).not.toThrow();
  });

  it('attaches a failing rollback to the error instead of throwing it', () => {
    const rollbackError = new Error('rollback failed');
    const space = {
      ...transactionalSpace(),
      [rollbackKey]: () => {
        throw rollbackError;
      },
    } as Space;
    const error = new InjectedFailure('the kernel failed');
    expect(() => rollback(space, 0, error)).not.toThrow();
    expect((error as { suppressed?: unknown }).suppressed).toBe(rollbackError);
  });

  it('a rollback covers lists too: a failure part-way through a list leaves the space unchanged', () => {
    const space = transactionalSpace();
    space.failAt(3);
    expect(() =>
      alloc(space, { layers: [{ w: Undef('float32', 1) }, { w: Undef('float32', 1) }, { w: Undef('float32', 1) }] }),
    ).toThrow(InjectedFailure);
    expect(space.live).toEqual([]);
  });
});

describe('commit', () => {
  it('hands the token to the space’s [commitKey]', () => {
    const space = transactionalSpace();
    const token = savepoint(space);
    commit(space, token);
    expect(space.commits).toEqual([token]);
    expect(space.rollbacks).toEqual([]);
  });

  it('does nothing for noSavepoint, or on a space without [commitKey] (an arena keeps nothing per token)', () => {
    const space = transactionalSpace();
    commit(space, noSavepoint);
    expect(space.commits).toEqual([]);
    const noCommit = { ...transactionalSpace(), [commitKey]: undefined } as unknown as Space;
    expect(() => commit(noCommit, savepoint(noCommit))).not.toThrow();
    expect(() => commit(countingSpace(), savepoint(countingSpace()))).not.toThrow();
  });

  it('a refusal from the space is thrown (there is no first error to attach it to)', () => {
    const fake = fakeFamily();
    const space = Similar(fake.array('float32', [1]));
    const token = savepoint(space);
    commit(space, token);
    expect(() => commit(space, token)).toThrow(InvalidArgumentError);
  });

  it('core’s materializer commits after a spec succeeds, and rolls back (never commits) after one fails', () => {
    const space = transactionalSpace();
    alloc(space, { a: Undef('int8', 1), b: { c: Undef('int8', 2) } });
    expect(space.commits).toEqual([0]);
    expect(space.rollbacks).toEqual([]);
    materialize(space, { d: Undef('int8', 1) });
    expect(space.commits).toEqual([0, 2]);
    space.failAt(2);
    expect(() => alloc(space, { e: Undef('int8', 1), f: Undef('int8', 1) })).toThrow(InjectedFailure);
    expect(space.commits).toEqual([0, 2]);
    expect(space.rollbacks).toEqual([3]);
    expect(space.live).toHaveLength(3);
  });
});
