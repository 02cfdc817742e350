import { PolError } from '@pol/core';
import { expect, test } from 'vitest';
import {
  BareTypedArrayError,
  BufferMismatchError,
  DescriberContractError,
  DescriptionConflictError,
  ExtraInputError,
  HostDataRequiredError,
  KindMismatchError,
  MisplacedSpaceError,
  MissingInputError,
  NoSpaceError,
  NotAKernelError,
  NotAPrimalError,
  OutputsWrittenError,
  ShadowMismatchError,
  UndescribedKernelError,
  VerbArgumentError,
} from './errors.js';

test('every error is a PolError with a stable code, its class name, and its message', () => {
  const cases: [PolError, string, string][] = [
    [new NotAKernelError('m'), 'POL_NOT_A_KERNEL', 'NotAKernelError'],
    [new NoSpaceError('m'), 'POL_NO_SPACE', 'NoSpaceError'],
    [new BufferMismatchError('y', 'float32[2]', 'float64[2]', 'm'), 'POL_BUFFER_MISMATCH', 'BufferMismatchError'],
    [new DescriptionConflictError('v', 'rstd', 'outputs', 'checkpoints'), 'POL_DESCRIPTION_CONFLICT', 'DescriptionConflictError'],
    [new NotAPrimalError('a.b', 'm'), 'POL_NOT_A_PRIMAL', 'NotAPrimalError'],
    [new ShadowMismatchError('a', 'm'), 'POL_SHADOW_MISMATCH', 'ShadowMismatchError'],
    [new MisplacedSpaceError('k', 'x', 2, 'm'), 'POL_MISPLACED_SPACE', 'MisplacedSpaceError'],
    [new ExtraInputError('k', 'input 2', 3, 'm'), 'POL_EXTRA_INPUT', 'ExtraInputError'],
    [new MissingInputError('k', 'x', 2, 'm'), 'POL_MISSING_INPUT', 'MissingInputError'],
    [new BareTypedArrayError('k', 'x', 1, 'm', new TypeError('t')), 'POL_BARE_TYPED_ARRAY', 'BareTypedArrayError'],
    [new UndescribedKernelError('k', 'm'), 'POL_UNDESCRIBED_KERNEL', 'UndescribedKernelError'],
    [new OutputsWrittenError('k', '0', 'm'), 'POL_OUTPUTS_WRITTEN', 'OutputsWrittenError'],
    [new DescriberContractError('k', 'outputs', 'y', 'a', 'b', 'm'), 'POL_DESCRIBER_CONTRACT', 'DescriberContractError'],
    [new HostDataRequiredError('k', 'out', 'm'), 'POL_HOST_DATA_REQUIRED', 'HostDataRequiredError'],
    [new KindMismatchError('w', 'host', 'gpu', 'm'), 'POL_KIND_MISMATCH', 'KindMismatchError'],
  ];
  for (const [error, code, name] of cases) {
    expect(error).toBeInstanceOf(PolError);
    expect(error).toBeInstanceOf(Error);
    expect(error.code).toBe(code);
    expect(error.name).toBe(name);
    expect(error.message.length).toBeGreaterThan(0);
  }
});

test('the fields name what was wrong', () => {
  const mismatch = new BufferMismatchError('grads.w', 'float32[2, 2]', 'float32[4]', 'msg');
  expect([mismatch.path, mismatch.expected, mismatch.got, mismatch.message]).toEqual([
    'grads.w',
    'float32[2, 2]',
    'float32[4]',
    'msg',
  ]);
  const conflict = new DescriptionConflictError('Allocating(norm)', 'rstd', 'outputs', 'checkpoints');
  expect(conflict.described).toBe('rstd');
  expect(conflict.message).toContain("Allocating(norm): the kernel describes 'rstd' both in its outputs and in its checkpoints");
  expect(conflict.message).toContain('rename one of them');
  expect(new NotAPrimalError('a.b', 'm').path).toBe('a.b');
  expect(new ShadowMismatchError('c', 'm').path).toBe('c');
});

test('the argument errors name the verb, the parameter and the position, and keep a cause', () => {
  const cause = new TypeError('reading data');
  const e = new BareTypedArrayError('softmaxInto', 'x', 1, 'm', cause);
  expect(e).toBeInstanceOf(VerbArgumentError);
  expect([e.verb, e.parameter, e.argument, e.cause]).toEqual(['softmaxInto', 'x', 1, cause]);
  const missing = new MissingInputError('k', 'x', 2, 'm');
  expect(missing.cause).toBeUndefined();
  const contract = new DescriberContractError('grow', 'outputs', 'y', 'Undef(float32[1])', 'Undef(float32[2])', 'm');
  expect([contract.verb, contract.lifetime, contract.path, contract.expected, contract.got]).toEqual([
    'grow',
    'outputs',
    'y',
    'Undef(float32[1])',
    'Undef(float32[2])',
  ]);
});
