import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type AmbientStore,
  ambientBinder,
  bindAmbient,
  contextStore,
  lazyContextStore,
  setAmbientStore,
  syncStore,
} from './backend.js';
import { AsyncScopeUnsupportedError, ambientspace, type Space, scratchspace, withspace } from './index.js';
import { boundSpace, countingSpace, nodeContextVariable, unhandledRejectionsDuring } from './test-support/fixtures.js';

let previous: AmbientStore | undefined;
/** Make `store` the ambient store for this test (put back after it). */
function use(store: AmbientStore): AmbientStore {
  const was = setAmbientStore(store);
  previous ??= was;
  return store;
}
afterEach(() => {
  if (previous !== undefined) setAmbientStore(previous);
  previous = undefined;
});

/** The binder of the store in use; fails the test when there is none. */
function binder(): NonNullable<ReturnType<typeof ambientBinder>> {
  const b = ambientBinder();
  if (b === undefined) throw new Error('expected the ambient store to bind synchronously');
  return b;
}

describe('ambientBinder: binding without a callback', () => {
  it('binds on enter and restores the binding before it on leave, nested, without making the context variable', () => {
    let made = 0;
    const store = use(
      lazyContextStore(() => {
        made++;
        return nodeContextVariable();
      }),
    );
    const outer = countingSpace();
    const inner = countingSpace();
    const b = binder();
    const t1 = b.enter(outer);
    expect(ambientspace()).toBe(outer);
    const t2 = b.enter(inner);
    expect(ambientspace()).toBe(inner);
    withspace(outer, () => expect(ambientspace()).toBe(outer));
    expect(ambientspace()).toBe(inner);
    b.leave(t2);
    expect(ambientspace()).toBe(outer);
    b.leave(t1);
    expect(boundSpace()).toBeUndefined();
    expect(made).toBe(0);
    expect(store.engaged).toBe(false);
  });

  it('is what withspace and scratchspace see inside, and what a binding inside them restores to', () => {
    use(syncStore());
    const space = countingSpace();
    const b = binder();
    const token = b.enter(space);
    try {
      scratchspace((frame) => {
        expect(frame.parent).toBe(space);
        expect(ambientspace()).toBe(frame);
      });
      expect(ambientspace()).toBe(space);
    } finally {
      b.leave(token);
    }
    expect(boundSpace()).toBeUndefined();
  });

  it('is undefined once an async callback engaged the context variable, and for stores that bind only through run', async () => {
    const store = use(lazyContextStore(nodeContextVariable));
    expect(ambientBinder()).toBe(store);
    await bindAmbient(countingSpace(), async () => {});
    expect(store.engaged).toBe(true);
    expect(ambientBinder()).toBeUndefined();
    use(contextStore(nodeContextVariable()));
    expect(ambientBinder()).toBeUndefined();
    use({ async: false, run: (_space, f, arg) => f(arg as never), get: () => undefined });
    expect(ambientBinder()).toBeUndefined();
  });

  it('keeps an engagement during an entered binding right: the async callback keeps its own binding, the stack is restored on leave', async () => {
    const store = use(lazyContextStore(nodeContextVariable));
    const outer = countingSpace();
    const inner = countingSpace();
    const b = binder();
    const token = b.enter(outer);
    let pending: Promise<Space | undefined>;
    try {
      pending = bindAmbient(inner, async () => {
        await Promise.resolve();
        return ambientspace();
      });
      expect(store.engaged).toBe(true);
      expect(ambientspace()).toBe(outer);
    } finally {
      b.leave(token);
    }
    expect(boundSpace()).toBeUndefined();
    expect(await pending).toBe(inner);
  });

  it('checkResult refuses a promise on a store without async context (its rejection handled), and passes anything else', async () => {
    use(syncStore());
    const b = binder();
    expect(() => b.checkResult(42)).not.toThrow();
    expect(() => b.checkResult(undefined)).not.toThrow();
    const unhandled = await unhandledRejectionsDuring(() => {
      expect(() => b.checkResult(Promise.reject(new Error('late')))).toThrow(AsyncScopeUnsupportedError);
    });
    expect(unhandled).toEqual([]);
    use(lazyContextStore(nodeContextVariable));
    const promise = Promise.resolve(1);
    expect(() => binder().checkResult(promise)).not.toThrow();
  });

  it('binds exactly as bindAmbient does, over random nestings of both (property)', () => {
    // A program is a tree of bindings, each by the binder or by bindAmbient, some of which throw:
    // at every point the ambient space is the innermost binding still open, as a stack model says.
    type Step = { readonly by: 'binder' | 'run'; readonly throws: boolean; readonly inner: readonly Step[] };
    const step: fc.Memo<Step> = fc.memo((depth) =>
      fc.record({
        by: fc.constantFrom('binder' as const, 'run' as const),
        throws: fc.boolean(),
        inner: depth > 1 ? fc.array(step(depth - 1), { maxLength: 3 }) : fc.constant([]),
      }),
    );
    const spaces = [countingSpace(), countingSpace(), countingSpace(), countingSpace()];
    fc.assert(
      fc.property(fc.array(step(4), { maxLength: 4 }), fc.constantFrom('sync', 'lazy'), (program, kind) => {
        use(kind === 'sync' ? syncStore() : lazyContextStore(nodeContextVariable));
        const model: Space[] = [];
        const check = (): void => expect(boundSpace()).toBe(model[model.length - 1]);
        const runAll = (steps: readonly Step[], depth: number): void => {
          for (const s of steps) {
            const space = spaces[depth % spaces.length] as Space;
            const body = (): void => {
              model.push(space);
              check();
              try {
                runAll(s.inner, depth + 1);
                check();
                if (s.throws) throw new Error('planned');
              } finally {
                model.pop();
              }
            };
            try {
              if (s.by === 'run') bindAmbient(space, body);
              else {
                const b = binder();
                const token = b.enter(space);
                try {
                  body();
                } finally {
                  b.leave(token);
                }
              }
            } catch (error) {
              if ((error as Error).message !== 'planned') throw error;
            }
            check();
          }
        };
        runAll(program, 0);
        check();
      }),
      { numRuns: 200 },
    );
  });
});
