import { describe, expect, it } from 'vitest';
import { asyncUnsupported, isAsyncFunction, readerOf, runThrough } from './context-variable.js';
import { AsyncScopeUnsupportedError, InvalidArgumentError, Similar } from './index.js';
import { nodeContextVariable } from './test-support/fixtures.js';

describe('isAsyncFunction', () => {
  it('is true for async functions, arrows and methods, known before they run', () => {
    const o = {
      async method(): Promise<void> {},
    };
    for (const f of [async () => {}, async function named() {}, o.method]) expect(isAsyncFunction(f)).toBe(true);
  });

  it('is false for everything else, a function that returns a promise and an async generator included', () => {
    const values: unknown[] = [
      () => Promise.resolve(),
      function plain() {},
      function* generator() {},
      async function* asyncGenerator() {},
      class {},
      undefined,
      null,
      {},
      Promise.resolve(),
    ];
    for (const v of values) expect(isAsyncFunction(v)).toBe(false);
  });
});

describe('readerOf', () => {
  const space = Similar(new Float32Array(0));

  it('reads through getStore, or through get as AsyncContext.Variable spells it', () => {
    const als = nodeContextVariable();
    expect(als.run(space, readerOf(als, 'test'))).toBe(space);
    let bound: typeof space | undefined;
    const asyncContext = {
      run<R>(value: typeof space, f: () => R): R {
        bound = value;
        try {
          return f();
        } finally {
          bound = undefined;
        }
      },
      get: () => bound,
    };
    expect(asyncContext.run(space, readerOf(asyncContext, 'test'))).toBe(space);
  });

  it('refuses an object that is not AsyncLocalStorage-like, naming the caller', () => {
    for (const v of [undefined, {}, { run() {} }, { getStore() {} }]) {
      expect(() => readerOf(v as never, 'contextStore')).toThrow(InvalidArgumentError);
    }
    expect(() => readerOf({} as never, 'contextStore')).toThrow(/^contextStore needs an AsyncLocalStorage-like object/);
  });
});

describe('runThrough and asyncUnsupported', () => {
  it('runThrough calls f(arg) inside the variable with the space bound', () => {
    const als = nodeContextVariable();
    const space = Similar(new Float32Array(0));
    expect(runThrough(als, space, (x: number) => (als.getStore() === space ? x + 1 : -1), 41)).toBe(42);
    expect(als.getStore()).toBeUndefined();
  });

  it('asyncUnsupported is the typed refusal, saying what to do instead', () => {
    const error = asyncUnsupported();
    expect(error).toBeInstanceOf(AsyncScopeUnsupportedError);
    expect(error.message).toMatch(/Pass the space \(or frame\) to the async code explicitly/);
  });
});
