import { describe, expect, it } from 'vitest';
import {
  AsyncScopeUnsupportedError,
  CaptureViolation,
  FrameClosedError,
  InvalidArgumentError,
  InvalidDescriptionError,
  InvalidShapeError,
  InvalidSpecError,
  NoAmbientSpaceError,
  NotAFrameError,
  NotAnArrayError,
  NotASpaceError,
  PolError,
  UnknownDTypeError,
  ZeroUnsupportedError,
} from './index.js';

const kinds = [
  ['InvalidShapeError', () => new InvalidShapeError('m'), 'POL_INVALID_SHAPE'],
  ['UnknownDTypeError', () => new UnknownDTypeError('m'), 'POL_UNKNOWN_DTYPE'],
  ['NotASpaceError', () => new NotASpaceError('m'), 'POL_NOT_A_SPACE'],
  ['InvalidSpecError', () => new InvalidSpecError('a.b', 'm'), 'POL_INVALID_SPEC'],
  ['NoAmbientSpaceError', () => new NoAmbientSpaceError('m'), 'POL_NO_AMBIENT_SPACE'],
  ['AsyncScopeUnsupportedError', () => new AsyncScopeUnsupportedError('m'), 'POL_ASYNC_SCOPE_UNSUPPORTED'],
  ['NotAFrameError', () => new NotAFrameError('m'), 'POL_NOT_A_FRAME'],
  ['InvalidDescriptionError', () => new InvalidDescriptionError('m'), 'POL_INVALID_DESCRIPTION'],
  ['NotAnArrayError', () => new NotAnArrayError('m'), 'POL_NOT_AN_ARRAY'],
  ['FrameClosedError', () => new FrameClosedError('m'), 'POL_FRAME_CLOSED'],
  ['CaptureViolation', () => new CaptureViolation('x', 'y'), 'POL_CAPTURE_VIOLATION'],
  ['InvalidArgumentError', () => new InvalidArgumentError('m'), 'POL_INVALID_ARGUMENT'],
  ['ZeroUnsupportedError', () => new ZeroUnsupportedError('m'), 'POL_ZERO_UNSUPPORTED'],
] as const;

describe('error classes', () => {
  it.each(kinds)('%s extends PolError and Error, with its own name and stable code', (name, make, code) => {
    const error = make();
    expect(error).toBeInstanceOf(PolError);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe(name);
    expect(error.code).toBe(code);
    expect(error.stack).toContain(name);
  });

  it('gives every kind a distinct code', () => {
    const codes = kinds.map(([, make]) => make().code);
    expect(new Set(codes).size).toBe(kinds.length);
  });

  it('keeps the message as given', () => {
    expect(new InvalidShapeError('dims[0] is -1').message).toBe('dims[0] is -1');
    expect(new NotASpaceError('alloc needs a space').message).toBe('alloc needs a space');
  });

  it('PolError carries a code and an optional cause', () => {
    const cause = new Error('root');
    const error = new PolError('POL_CUSTOM', 'wrapped', { cause });
    expect(error.code).toBe('POL_CUSTOM');
    expect(error.name).toBe('PolError');
    expect(error.cause).toBe(cause);
    expect(new PolError('POL_CUSTOM', 'plain').cause).toBeUndefined();
  });

  it('a subclass outside core gets its own name too', () => {
    class MyBackendError extends PolError {
      constructor() {
        super('MY_BACKEND', 'backend failed');
      }
    }
    const error = new MyBackendError();
    expect(error.name).toBe('MyBackendError');
    expect(error).toBeInstanceOf(PolError);
  });

  it('InvalidSpecError carries the key path', () => {
    const error = new InvalidSpecError('layers.w', 'layers.w is 5');
    expect(error.path).toBe('layers.w');
    expect(error.message).toBe('layers.w is 5');
  });
});

describe('CaptureViolation', () => {
  const error = new CaptureViolation('A new float32[3, 4] array', 'Similar(float32[8] on gpu)');

  it('keeps what was refused as attempted', () => {
    expect(error.attempted).toBe('A new float32[3, 4] array');
  });

  it('says in two sentences what was refused and why, then the whole remedy: an arena made before capture, warmed up, sized from its watermark', () => {
    expect(error.message).toBe(
      'A new float32[3, 4] array was refused: the device of Similar(float32[8] on gpu) is recording a capture, and a buffer ' +
        'made now would belong to this one eager run, so replay would bind it after it is gone. Pass an arena ' +
        '(or a frame on one) made before capture(), warmed up by running the step eagerly on it and sized from its watermark: ' +
        'a carve creates nothing and gives the same offsets on every run.',
    );
    expect(error.message.split('. ')).toHaveLength(2);
    expect(error.message.length).toBeLessThan(480);
  });
});

describe('CaptureViolation with a backend explanation', () => {
  it('uses the explanation as the whole message and keeps the code and class', () => {
    const error = new CaptureViolation(
      'device.createShaderModule',
      'device "gpu0"',
      'Creating a shader module under capture: warm up first.',
    );
    expect(error.message).toBe('Creating a shader module under capture: warm up first.');
    expect(error.attempted).toBe('device.createShaderModule');
    expect(error.code).toBe('POL_CAPTURE_VIOLATION');
    expect(error).toBeInstanceOf(PolError);
  });
});
