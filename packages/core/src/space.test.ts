import { describe, expect, it } from 'vitest';
import { assertSpace, commitKey, frameKey, openFrameKey, rollbackKey, savepointKey, scopeFrame, spaceKey } from './backend.js';
import { alloc, isFrame, isSpace, NotASpaceError, type PolError, Similar, type Space, scratchspace } from './index.js';
import { countingSpace } from './test-support/fixtures.js';

const host = Similar(new Float32Array(0));

describe('isSpace', () => {
  it('is true for Similar, frames and any object branded with spaceKey', () => {
    expect(isSpace(host)).toBe(true);
    expect(isSpace(countingSpace())).toBe(true);
    const frame = scopeFrame(host);
    expect(isSpace(frame)).toBe(true);
    frame.close();
  });

  it('is false for everything else, including a brand that is not a kind name', () => {
    for (const x of [
      {},
      { alloc: () => undefined },
      { [spaceKey]: true },
      { [spaceKey]: 1 },
      new Float32Array(1),
      'host',
      null,
      undefined,
      () => {},
    ]) {
      expect(isSpace(x)).toBe(false);
    }
  });
});

describe('isFrame', () => {
  it('is true for frames only', () => {
    scratchspace(host, (frame) => {
      expect(isFrame(frame)).toBe(true);
    });
    const frame = scratchspace(host);
    expect(isFrame(frame)).toBe(true);
    frame.close();
    expect(isFrame(frame)).toBe(true); // still a frame, just closed
    expect(isFrame(host)).toBe(false);
    expect(isFrame(countingSpace())).toBe(false);
    expect(isFrame({ [frameKey]: true })).toBe(false); // not a space
    expect(isFrame(null)).toBe(false);
  });
});

describe('assertSpace', () => {
  it('passes spaces through', () => {
    expect(() => assertSpace(host, 'test')).not.toThrow();
  });

  it('throws NotASpaceError naming the call and what to pass', () => {
    expect(() => assertSpace({}, 'myVerb')).toThrow(NotASpaceError);
    expect(() => assertSpace({}, 'myVerb')).toThrow(
      /^myVerb needs a space, got a plain object\. Pass an Arena, a Frame, or Similar\(x\) of an array; a custom space is an object with an alloc\(dtype, dims\) method and the spaceKey brand\.$/,
    );
    try {
      assertSpace(42, 'myVerb');
      expect.unreachable();
    } catch (error) {
      expect((error as PolError).code).toBe('POL_NOT_A_SPACE');
      expect((error as PolError).name).toBe('NotASpaceError');
    }
  });
});

describe('the space protocol', () => {
  it('uses registry-wide symbols, so two copies of the package interoperate', () => {
    expect(spaceKey).toBe(Symbol.for('@pol/core/space'));
    expect(frameKey).toBe(Symbol.for('@pol/core/frame'));
    expect(openFrameKey).toBe(Symbol.for('@pol/core/openFrame'));
    expect(savepointKey).toBe(Symbol.for('@pol/core/savepoint'));
    expect(rollbackKey).toBe(Symbol.for('@pol/core/rollback'));
    expect(commitKey).toBe(Symbol.for('@pol/core/commit'));
  });

  it('a custom space needs only the brand and the one leaf method', () => {
    const space = countingSpace();
    const a = alloc(space, 'int32', 2, 2);
    expect(space.calls).toEqual([{ dtype: 'int32', dims: [2, 2] }]);
    expect(a.dims).toEqual([2, 2]);
    expect(a.data).toBeInstanceOf(Int32Array);
  });

  it('a space typed as Space<"host"> is accepted wherever a space is', () => {
    const space: Space<'host'> = countingSpace();
    expect(isSpace(space)).toBe(true);
  });
});
