// Internal: the checks of the buffers a caller passes under described names, against a plan's
// compiled specs. They run on every call that passes options, before anything is allocated, so a
// buffer that does not fit throws with every space, arena and frame unchanged. A check that passes
// allocates nothing: message strings and key paths are built only when one fails.

import { isArray, isPlainObject, shapeOf } from '@pol/core';
import { BufferMismatchError } from './errors.js';
import { CONSTANT, GROUP, LEAF, type SpecNode } from './program.js';
import { describeValue, sameDims, shapeText } from './shared.js';

/**
 * Check every buffer `given` holds under a name `root` (a compiled group) describes. Names it does
 * not describe are left alone: they are the kernel's own options.
 */
export function checkSupplied(verb: string, root: SpecNode, given: Record<string, unknown>): void {
  const { names, children } = root;
  for (let j = 0; j < names.length; j++) {
    const name = names[j] as string;
    const value = given[name];
    if (value !== undefined) checkValue(verb, children[j] as SpecNode, value, undefined, name);
  }
}

// The path of a caller's buffer is `prefix.key` (just `key` at the top): joined only for a message,
// or once per nested group, never per leaf checked.
function keyPath(prefix: string | undefined, key: string): string {
  return prefix === undefined ? key : `${prefix}.${key}`;
}

function checkValue(verb: string, want: SpecNode, got: unknown, prefix: string | undefined, name: string): void {
  switch (want.kind) {
    case LEAF:
      checkArray(verb, want.dtype, want.dims, got, prefix, name);
      return;
    case CONSTANT: {
      const shape = shapeOf(want.value as never);
      checkArray(verb, shape.dtype, shape.dims, got, prefix, name);
      return;
    }
    case GROUP:
      checkGroup(verb, want, got, keyPath(prefix, name));
      return;
    default:
      checkList(verb, want, got, keyPath(prefix, name));
  }
}

function checkGroup(verb: string, want: SpecNode, got: unknown, path: string): void {
  if (!isPlainObject(got)) {
    throw mismatch(
      verb,
      path,
      groupText(want),
      valueText(got),
      `Pass a plain object with (some of) the names ${want.names.join(', ')} under '${path}', or leave '${path}' out.`,
    );
  }
  for (const key in got) {
    if (got[key] !== undefined && !want.names.includes(key)) {
      throw mismatch(
        verb,
        `${path}.${key}`,
        'nothing',
        valueText(got[key]),
        `The kernel describes '${path}' as ${groupText(want)}: remove '${key}' (a misspelt name?).`,
      );
    }
  }
  const { names, children } = want;
  for (let j = 0; j < names.length; j++) {
    const value = got[names[j] as string];
    if (value !== undefined) checkValue(verb, children[j] as SpecNode, value, path, names[j] as string);
  }
}

function checkList(verb: string, want: SpecNode, got: unknown, path: string): void {
  const n = want.children.length;
  if (!Array.isArray(got) || got.length !== n) {
    throw mismatch(
      verb,
      path,
      `a list of ${n}`,
      valueText(got),
      `Pass a JavaScript array of ${n} under '${path}' (undefined where it should be materialized), or leave '${path}' out.`,
    );
  }
  for (let j = 0; j < n; j++) {
    const value: unknown = got[j];
    if (value !== undefined) checkValue(verb, want.children[j] as SpecNode, value, path, String(j));
  }
}

function checkArray(
  verb: string,
  dtype: string,
  dims: readonly number[],
  got: unknown,
  prefix: string | undefined,
  name: string,
): void {
  if (!isArray(got)) throw arrayMismatch(verb, keyPath(prefix, name), dtype, dims, describeValue(got));
  const shape = shapeOf(got);
  if (shape.dtype !== dtype || !sameDims(shape.dims, dims)) {
    throw arrayMismatch(verb, keyPath(prefix, name), dtype, dims, shapeText(shape.dtype, shape.dims));
  }
}

function groupText(node: SpecNode): string {
  return `a group { ${node.names.join(', ')} }`;
}

/** A short description of any value, with the dtype and dims of arrays. */
export function valueText(x: unknown): string {
  if (isArray(x)) {
    const shape = shapeOf(x);
    return shapeText(shape.dtype, shape.dims);
  }
  return describeValue(x);
}

function mismatch(verb: string, path: string, expected: string, got: string, remedy: string): BufferMismatchError {
  return new BufferMismatchError(
    path,
    expected,
    got,
    `${verb}: the buffer passed under '${path}' is ${got}, but the kernel describes '${path}' as ${expected}. ${remedy}`,
  );
}

function arrayMismatch(verb: string, path: string, dtype: string, dims: readonly number[], got: string): BufferMismatchError {
  const expected = shapeText(dtype, dims);
  return mismatch(
    verb,
    path,
    expected,
    got,
    `Pass a ${expected} array under '${path}', or leave '${path}' out to have it materialized.`,
  );
}
