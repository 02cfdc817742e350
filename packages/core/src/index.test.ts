import { describe, expect, it } from 'vitest';
import * as pol from './index.js';

/**
 * Every runtime export of the package, with the test file that covers its behaviour. A new export
 * fails this test until it is listed here, with tests beside its module.
 */
const coverage: Record<string, string> = {
  // alloc.ts
  alloc: 'alloc.test.ts',
  // ambient.ts
  ambientIsAsync: 'ambient.test.ts',
  ambientspace: 'ambient.test.ts',
  withspace: 'ambient.test.ts',
  // array.ts
  hostArray: 'array.test.ts',
  isArray: 'array.test.ts',
  shapeOf: 'array.test.ts',
  // descriptions.ts
  checkpoints: 'descriptions.test.ts',
  describe: 'descriptions.test.ts',
  outputs: 'descriptions.test.ts',
  scratch: 'descriptions.test.ts',
  // dtype.ts
  dtypeInfo: 'dtype.test.ts',
  dtypeOfTypedArray: 'dtype.test.ts',
  dtypes: 'dtype.test.ts',
  hasDType: 'dtype.test.ts',
  // errors.ts
  AsyncScopeUnsupportedError: 'errors.test.ts',
  CaptureViolation: 'errors.test.ts',
  FrameClosedError: 'errors.test.ts',
  InvalidArgumentError: 'errors.test.ts',
  InvalidDescriptionError: 'errors.test.ts',
  InvalidShapeError: 'errors.test.ts',
  InvalidSpecError: 'errors.test.ts',
  NoAmbientSpaceError: 'errors.test.ts',
  NotAFrameError: 'errors.test.ts',
  NotAnArrayError: 'errors.test.ts',
  NotASpaceError: 'errors.test.ts',
  PolError: 'errors.test.ts',
  UnknownDTypeError: 'errors.test.ts',
  ZeroUnsupportedError: 'errors.test.ts',
  // frame.ts
  scratchspace: 'frame.test.ts',
  // materialize.ts
  materialize: 'materialize.test.ts',
  // shape.ts
  byteLength: 'shape.test.ts',
  elementCount: 'shape.test.ts',
  // similar.ts
  capturing: 'similar.test.ts',
  Similar: 'similar.test.ts',
  // spec.ts
  checkSpec: 'spec.test.ts',
  // space.ts
  isFrame: 'space.test.ts',
  isSpace: 'space.test.ts',
  // undef.ts
  isUndef: 'undef.test.ts',
  Undef: 'undef.test.ts',
  zeroed: 'undef.test.ts',
  // zero.ts
  zeroArray: 'zero.test.ts',
};

describe('@pol/core exports', () => {
  it('exports exactly the inventoried names, each with its behaviour tests', () => {
    expect(Object.keys(pol).sort()).toEqual(Object.keys(coverage).sort());
  });

  it('exports functions, classes, symbols and frozen data, nothing undefined', () => {
    for (const [name, value] of Object.entries(pol)) {
      expect(value, name).toBeDefined();
      expect(['function', 'symbol', 'object'], name).toContain(typeof value);
    }
    expect(Object.isFrozen(pol.dtypes)).toBe(true);
  });

  it('keeps the backend protocol out of the user API (it is in @pol/core/backend)', () => {
    for (const name of ['spaceKey', 'frameKey', 'familyKey', 'makeHostArray', 'setAmbientStore', 'scopeFrame']) {
      expect(name in pol, name).toBe(false);
    }
  });
});
