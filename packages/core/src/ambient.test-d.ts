import { describe, expectTypeOf, it } from 'vitest';
import { type AmbientBinder, type AmbientStore, ambientBinder, bindAmbient, setAmbientStore, syncStore } from './backend.js';
import { ambientIsAsync, ambientspace, Similar, type Space, withspace } from './index.js';

const host = Similar(new Float32Array(0));

describe('ambient types', () => {
  it('withspace returns what the callback returns', () => {
    expectTypeOf(withspace(host, () => 1)).toEqualTypeOf<number>();
    expectTypeOf(withspace(host, async () => 'a')).toEqualTypeOf<Promise<string>>();
    // @ts-expect-error the first argument is a space
    withspace({}, () => 1);
    // @ts-expect-error the callback takes no arguments
    withspace(host, (x: number) => x);
  });

  it('bindAmbient passes its argument on, and needs one exactly when f takes one', () => {
    expectTypeOf(bindAmbient(host, () => 1)).toEqualTypeOf<number>();
    expectTypeOf(bindAmbient(host, (x: number) => x.toFixed(2), 3)).toEqualTypeOf<string>();
    // @ts-expect-error f takes an argument, and none is given
    bindAmbient(host, (x: number) => x.toFixed(2));
    // @ts-expect-error the argument is not what f takes
    bindAmbient(host, (x: number) => x.toFixed(2), 'three');
  });

  it('ambientBinder answers a binder or undefined; enter takes a space and gives a token that leave takes', () => {
    const binder = ambientBinder();
    expectTypeOf(binder).toEqualTypeOf<AmbientBinder | undefined>();
    if (binder !== undefined) {
      const token = binder.enter(host);
      expectTypeOf(token).toEqualTypeOf<unknown>();
      binder.leave(token);
      binder.checkResult(Promise.resolve(1));
      // @ts-expect-error enter takes a space
      binder.enter({});
      // @ts-expect-error leave takes the token enter gave
      binder.leave();
    }
  });

  it('ambientspace answers a space', () => {
    expectTypeOf(ambientspace()).toEqualTypeOf<Space>();
    expectTypeOf(ambientspace(host)).toExtend<Space>();
    // @ts-expect-error the fallback is a space
    ambientspace(3);
  });

  it('stores', () => {
    expectTypeOf(syncStore()).toEqualTypeOf<AmbientStore>();
    expectTypeOf(setAmbientStore).returns.toEqualTypeOf<AmbientStore>();
    expectTypeOf(ambientIsAsync()).toEqualTypeOf<boolean>();
  });
});
