import { describe, expectTypeOf, it } from 'vitest';
import { scopeFrame } from './backend.js';
import { type Frame, type PolArray, Similar, type Space, scratchspace } from './index.js';

const host = Similar(new Float32Array(0));

describe('scratchspace types', () => {
  it('returns what the callback returns, sync or async, and types the frame by the space’s kind', () => {
    expectTypeOf(scratchspace(host, () => 3)).toEqualTypeOf<number>();
    expectTypeOf(scratchspace(host, async () => 'x')).toEqualTypeOf<Promise<string>>();
    scratchspace(host, (frame) => {
      expectTypeOf(frame).toEqualTypeOf<Frame<'host'>>();
    });
    expectTypeOf(scratchspace((frame) => frame)).toEqualTypeOf<Frame>();
  });

  it('without a callback, returns a disposable frame', () => {
    const frame = scratchspace(host);
    expectTypeOf(frame).toEqualTypeOf<Frame<'host'>>();
    expectTypeOf(frame).toExtend<Disposable>();
    expectTypeOf(frame).toExtend<Space<'host'>>();
    expectTypeOf(frame.parent).toEqualTypeOf<Space<'host'>>();
    expectTypeOf(frame.isOpen).toEqualTypeOf<boolean>();
    frame.close();
  });

  it('refuses ill-typed calls', () => {
    // @ts-expect-error the callback is a function
    scratchspace(host, 3);
    // @ts-expect-error not a space
    scratchspace({});
    // @ts-expect-error the frame's isOpen is read-only
    scratchspace(host).isOpen = false;
  });

  it('scopeFrame takes an optional release of arrays', () => {
    expectTypeOf(scopeFrame(host)).toEqualTypeOf<Frame<'host'>>();
    expectTypeOf(scopeFrame).parameter(1).toEqualTypeOf<((arrays: readonly PolArray[]) => void) | undefined>();
  });
});
