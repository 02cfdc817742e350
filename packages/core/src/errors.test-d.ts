import { describe, expectTypeOf, it } from 'vitest';
import {
  type AsyncScopeUnsupportedError,
  CaptureViolation,
  type FrameClosedError,
  type InvalidArgumentError,
  type InvalidDescriptionError,
  type InvalidShapeError,
  InvalidSpecError,
  type NoAmbientSpaceError,
  type NotAFrameError,
  type NotAnArrayError,
  type NotASpaceError,
  PolError,
  type UnknownDTypeError,
} from './index.js';

describe('error class types', () => {
  it('every error class extends PolError, which extends Error', () => {
    expectTypeOf<PolError>().toExtend<Error>();
    expectTypeOf<InvalidShapeError>().toExtend<PolError>();
    expectTypeOf<UnknownDTypeError>().toExtend<PolError>();
    expectTypeOf<NotASpaceError>().toExtend<PolError>();
    expectTypeOf<InvalidSpecError>().toExtend<PolError>();
    expectTypeOf<NoAmbientSpaceError>().toExtend<PolError>();
    expectTypeOf<AsyncScopeUnsupportedError>().toExtend<PolError>();
    expectTypeOf<NotAFrameError>().toExtend<PolError>();
    expectTypeOf<InvalidDescriptionError>().toExtend<PolError>();
    expectTypeOf<NotAnArrayError>().toExtend<PolError>();
    expectTypeOf<FrameClosedError>().toExtend<PolError>();
    expectTypeOf<CaptureViolation>().toExtend<PolError>();
    expectTypeOf<InvalidArgumentError>().toExtend<PolError>();
  });

  it('code is a readonly string; InvalidSpecError has a readonly path', () => {
    expectTypeOf<PolError['code']>().toEqualTypeOf<string>();
    expectTypeOf<InvalidSpecError['path']>().toEqualTypeOf<string>();
    const error = new InvalidSpecError('a', 'm');
    // @ts-expect-error path is read-only
    error.path = 'b';
    // @ts-expect-error code is read-only
    error.code = 'X';
  });

  it('CaptureViolation keeps what was refused as a readonly attempted string', () => {
    expectTypeOf<CaptureViolation['attempted']>().toEqualTypeOf<string>();
    const error = new CaptureViolation('A new float32[4] array', 'Similar(float32[4] on gpu)');
    // @ts-expect-error attempted is read-only
    error.attempted = 'other';
  });

  it('constructors take what each kind needs', () => {
    expectTypeOf(CaptureViolation).constructorParameters.toEqualTypeOf<
      [attempted: string, space: string, explanation?: string | undefined]
    >();
    expectTypeOf(InvalidSpecError).constructorParameters.toEqualTypeOf<[path: string, message: string]>();
    expectTypeOf(new PolError('POL_X', 'message', { cause: new Error('root') })).toEqualTypeOf<PolError>();
    // @ts-expect-error a PolError needs a code and a message
    new PolError('POL_X');
  });
});
