import { PolError } from '@pol/core';
import { expect, test } from 'vitest';
import {
  BufferMismatchError,
  DescriptionConflictError,
  NoSpaceError,
  NotAKernelError,
  NotAPrimalError,
  ShadowMismatchError,
} from './errors.js';

test('every error is a PolError with a stable code, its class name, and its message', () => {
  const cases: [PolError, string, string][] = [
    [new NotAKernelError('m'), 'POL_NOT_A_KERNEL', 'NotAKernelError'],
    [new NoSpaceError('m'), 'POL_NO_SPACE', 'NoSpaceError'],
    [new BufferMismatchError('y', 'float32[2]', 'float64[2]', 'm'), 'POL_BUFFER_MISMATCH', 'BufferMismatchError'],
    [new DescriptionConflictError('v', 'rstd', 'outputs', 'checkpoints'), 'POL_DESCRIPTION_CONFLICT', 'DescriptionConflictError'],
    [new NotAPrimalError('a.b', 'm'), 'POL_NOT_A_PRIMAL', 'NotAPrimalError'],
    [new ShadowMismatchError('a', 'm'), 'POL_SHADOW_MISMATCH', 'ShadowMismatchError'],
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
