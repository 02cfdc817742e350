import { describe, expect, it } from 'vitest';
import * as backend from './backend.js';
import * as pol from './index.js';

/**
 * Every runtime export of `@pol/core/backend`, with the test file that covers its behaviour. A new
 * export fails this test until it is listed here, with tests beside its module.
 */
const coverage: Record<string, string> = {
  // ambient.ts
  ambientBinder: 'stack-store.test.ts',
  bindAmbient: 'ambient.test.ts',
  contextStore: 'ambient.test.ts',
  lazyContextStore: 'ambient.test.ts',
  setAmbientStore: 'ambient.test.ts',
  syncStore: 'ambient.test.ts',
  // ancestors.ts
  keepAncestors: 'ancestors.test.ts',
  takeAncestors: 'ancestors.test.ts',
  // context-variable.ts
  isAsyncFunction: 'context-variable.test.ts',
  // array.ts
  familyKey: 'array.test.ts',
  familyOf: 'array.test.ts',
  hostFamily: 'array.test.ts',
  makeHostArray: 'array.test.ts',
  valueText: 'array.test.ts',
  // dims.ts
  frozenDims: 'dims.test.ts',
  internDim: 'dims.test.ts',
  internDims: 'dims.test.ts',
  sameDims: 'dims.test.ts',
  // failure.ts
  attachSuppressed: 'failure.test.ts',
  closeAfterFailure: 'failure.test.ts',
  // frame.ts
  openFrame: 'frame.test.ts',
  scopeFrame: 'frame.test.ts',
  // materialize.ts
  materializeInto: 'materialize.test.ts',
  // options.ts
  passedCount: 'passed.test.ts',
  readOptions: 'options.test.ts',
  // power-of-two.ts
  isPowerOfTwo: 'power-of-two.test.ts',
  // savepoint.ts
  commit: 'savepoint.test.ts',
  noSavepoint: 'savepoint.test.ts',
  rollback: 'savepoint.test.ts',
  savepoint: 'savepoint.test.ts',
  // shape.ts
  shapeText: 'shape.test.ts',
  // space.ts
  allocLengthKey: 'alloc.test.ts',
  assertSpace: 'space.test.ts',
  commitKey: 'space.test.ts',
  frameKey: 'space.test.ts',
  openFrameKey: 'space.test.ts',
  rollbackKey: 'space.test.ts',
  savepointKey: 'space.test.ts',
  spaceKey: 'space.test.ts',
  // supplied.ts
  checkSupplied: 'supplied.test.ts',
  // value.ts
  describeValue: 'value.test.ts',
  isPlainObject: 'value.test.ts',
  isThenable: 'value.test.ts',
};

describe('@pol/core/backend exports', () => {
  it('exports exactly the inventoried names, each with its behaviour tests', () => {
    expect(Object.keys(backend).sort()).toEqual(Object.keys(coverage).sort());
  });

  it('shares no name with @pol/core: each name is imported from one entry point', () => {
    expect(Object.keys(backend).filter((name) => name in pol)).toEqual([]);
  });

  it('every protocol symbol is registered with Symbol.for, so two installed copies interoperate', () => {
    const keys = [backend.familyKey, backend.spaceKey, backend.frameKey, backend.openFrameKey];
    for (const key of [...keys, backend.savepointKey, backend.rollbackKey, backend.commitKey, backend.allocLengthKey]) {
      expect(Symbol.keyFor(key)).toMatch(/^@pol\/core\//);
    }
    expect(Object.isFrozen(backend.hostFamily)).toBe(true);
  });

  it('exports functions and symbols and frozen data, nothing undefined', () => {
    for (const [name, value] of Object.entries(backend)) {
      expect(value, name).toBeDefined();
      expect(['function', 'symbol', 'object'], name).toContain(typeof value);
    }
  });
});
