import { describe, expectTypeOf, it } from 'vitest';
import { openFrameKey, rollbackKey, savepointKey, spaceKey } from './backend.js';
import { alloc, type Frame, type HostArray, isFrame, isSpace, type Space } from './index.js';

describe('space types', () => {
  it('a custom space needs the brand and the leaf method, and alloc types follow its kind', () => {
    const space: Space<'host'> = {
      [spaceKey]: 'host',
      alloc: (dtype, dims) => alloc(space, dtype, dims),
    };
    expectTypeOf(space.alloc('int8', [2])).toEqualTypeOf<HostArray<'int8'>>();
    expectTypeOf(alloc(space, 'float32', 2)).toEqualTypeOf<HostArray<'float32'>>();
    expectTypeOf(space[openFrameKey]).toEqualTypeOf<(() => Frame<'host'>) | undefined>();
    expectTypeOf(space[savepointKey]).toEqualTypeOf<(() => unknown) | undefined>();
    expectTypeOf(space[rollbackKey]).toEqualTypeOf<((token: unknown) => void) | undefined>();
  });

  it('refuses a space without the brand or the method', () => {
    // @ts-expect-error the brand is required
    const unbranded: Space<'host'> = { alloc: () => ({}) as never };
    // @ts-expect-error the leaf method is required
    const methodless: Space<'host'> = { [spaceKey]: 'host' };
    void unbranded;
    void methodless;
  });

  it('isSpace and isFrame narrow', () => {
    const x: unknown = undefined;
    if (isSpace(x)) expectTypeOf(x).toEqualTypeOf<Space>();
    if (isFrame(x)) expectTypeOf(x).toEqualTypeOf<Frame>();
  });
});
