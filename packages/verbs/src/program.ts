// Internal: a spec compiled once, when a call plan is made, into a tree of nodes that materializes
// the same buffers on every later call without looking at the spec again: no Undef, no key walk
// of a describer's object, no shadow lookup.
//
// Invariants:
// - `materialize` allocates each leaf the caller did not cover exactly once, in the spec's key
//   order (the order a bump arena needs to hand out the same addresses call after call), zeroes a
//   shadow leaf right after allocating it, and passes caller buffers through by identity: a leaf as
//   is, a complete group as the caller's own object;
// - an object this module hands out (a group, or through `assemble`, a result) is never written
//   again: when `reuse` allows, a later call hands the very same object out again exactly when it
//   would hold the very same values, and makes a fresh one otherwise. On an arena in steady state
//   the arrays repeat, so the objects do too, and a call makes no garbage.

import {
  type DType,
  isArray,
  isPlainObject,
  isUndef,
  type Space,
  shapeOf,
  type Undef,
} from '@pol/core';
import { isShadowUndef } from './shadow-mark.js';
import { describeValue, sameDims, shapeText, zeroArray } from './shared.js';

export const LEAF = 0;
export const CONSTANT = 1;
export const GROUP = 2;
export const LIST = 3;

/** One value of a compiled spec. */
export class SpecNode {
  kind = LEAF;
  /** LEAF: what to allocate, and whether it is a shadow (zeroed when materialized). */
  dtype: DType = 'float32';
  dims: readonly number[] = [];
  zero = false;
  /** CONSTANT: the array the spec passes through. */
  value: unknown;
  /** GROUP: the names, in the spec's order; GROUP and LIST: the values. */
  names: string[] = [];
  children: SpecNode[] = [];
  /** GROUP and LIST: the last object made for this node, for `reuse`. */
  last: WeakRef<object> | undefined;
  /** GROUP and LIST: the values of the object being made (always cleared after). */
  readonly pending: unknown[] = [];

  /** How many leaves (arrays to allocate when nothing is given) this node holds. */
  leaves(): number {
    if (this.kind === LEAF) return 1;
    let n = 0;
    for (const child of this.children) n += child.leaves();
    return n;
  }
}

/** Compile a spec value (an Undef, an array, a plain object of them, a JS array of them). */
export function compile(value: unknown): SpecNode {
  const node = new SpecNode();
  if (isUndef(value)) {
    node.kind = LEAF;
    node.dtype = value.dtype;
    node.dims = value.dims;
    node.zero = isShadowUndef(value);
    return node;
  }
  if (isArray(value)) {
    node.kind = CONSTANT;
    node.value = value;
    return node;
  }
  if (Array.isArray(value)) {
    node.kind = LIST;
    for (const element of value) node.children.push(compile(element));
    return node;
  }
  node.kind = GROUP;
  const group = value as Record<string, unknown>;
  for (const key in group) {
    if (!Object.hasOwn(group, key)) continue;
    node.names.push(key);
    node.children.push(compile(group[key]));
  }
  return node;
}

/** A group node over the top-level entries of several compiled specs, in order (outputs, then checkpoints). */
export function joinGroups(...groups: SpecNode[]): SpecNode {
  const node = new SpecNode();
  node.kind = GROUP;
  for (const g of groups) {
    node.names.push(...g.names);
    node.children.push(...g.children);
  }
  return node;
}

/**
 * The value of `node` for one call: `given` (the caller's buffer under its name, already checked)
 * where there is one, else materialized from `space`. Groups and lists the caller left out or gave
 * in part are made here, reused from the last call when `reuse` and the values repeat.
 */
export function materialize(node: SpecNode, space: Space, given: unknown, reuse: boolean): unknown {
  switch (node.kind) {
    case LEAF: {
      if (given !== undefined) return given;
      const array = space.alloc(node.dtype, node.dims);
      if (node.zero) zeroArray(array);
      return array;
    }
    case CONSTANT:
      return given === undefined ? node.value : given;
    case GROUP: {
      const group = given as Record<string, unknown> | undefined;
      if (group !== undefined && isComplete(node, group)) return group;
      const { names, children, pending } = node;
      try {
        for (let j = 0; j < children.length; j++) {
          pending[j] = materialize(children[j] as SpecNode, space, group?.[names[j] as string], reuse);
        }
        return assemble(node, names, pending, children.length, reuse);
      } finally {
        clear(pending, children.length);
      }
    }
    default: {
      const list = given as unknown[] | undefined;
      if (list !== undefined && isComplete(node, list)) return list;
      const { children, pending } = node;
      try {
        for (let j = 0; j < children.length; j++) pending[j] = materialize(children[j] as SpecNode, space, list?.[j], reuse);
        return assembleList(node, pending, children.length, reuse);
      } finally {
        clear(pending, children.length);
      }
    }
  }
}

/** Whether the caller's (already checked) group or list covers every value `node` describes. */
export function isComplete(node: SpecNode, given: unknown): boolean {
  if (node.kind === LEAF || node.kind === CONSTANT) return given !== undefined;
  const children = node.children;
  for (let j = 0; j < children.length; j++) {
    const value =
      node.kind === GROUP ? (given as Record<string, unknown>)[node.names[j] as string] : (given as unknown[])[j];
    if (value === undefined || !isComplete(children[j] as SpecNode, value)) return false;
  }
  return true;
}

/**
 * The object `{ names[j]: values[j] }`: the one made last time for `cache` when `reuse` and it
 * holds exactly these values, else a fresh one (remembered for next time when `reuse`).
 */
export function assemble(
  cache: { last: WeakRef<object> | undefined },
  names: readonly string[],
  values: readonly unknown[],
  count: number,
  reuse: boolean,
): Record<string, unknown> {
  if (reuse) {
    const last = cache.last?.deref() as Record<string, unknown> | undefined;
    if (last !== undefined && holds(last, names, values, count)) return last;
  }
  const out: Record<string, unknown> = {};
  for (let j = 0; j < count; j++) out[names[j] as string] = values[j];
  if (reuse) cache.last = new WeakRef(out);
  return out;
}

function holds(last: Record<string, unknown>, names: readonly string[], values: readonly unknown[], count: number): boolean {
  for (let j = 0; j < count; j++) if (last[names[j] as string] !== values[j]) return false;
  return true;
}

function assembleList(node: SpecNode, values: readonly unknown[], count: number, reuse: boolean): unknown[] {
  if (reuse) {
    const last = node.last?.deref() as unknown[] | undefined;
    if (last !== undefined && last.length === count) {
      let same = true;
      for (let j = 0; j < count && same; j++) same = last[j] === values[j];
      if (same) return last;
    }
  }
  const out: unknown[] = [];
  for (let j = 0; j < count; j++) out.push(values[j]);
  if (reuse) node.last = new WeakRef(out);
  return out;
}

export function clear(values: unknown[], count: number): void {
  for (let j = 0; j < count; j++) values[j] = undefined;
}

/**
 * Where a spec a describer returns now differs from the compiled one (for checked mode), as the
 * key path and both sides in words; `undefined` when it describes the same buffers.
 */
export function difference(
  node: SpecNode,
  value: unknown,
  path: string,
): { readonly path: string; readonly expected: string; readonly got: string } | undefined {
  switch (node.kind) {
    case LEAF: {
      const expected = leafText(node.dtype, node.dims, node.zero);
      if (!isUndef(value)) return { path, expected, got: valueWords(value) };
      const u = value as Undef;
      if (u.dtype !== node.dtype || !sameDims(u.dims, node.dims) || isShadowUndef(u) !== node.zero) {
        return { path, expected, got: leafText(u.dtype, u.dims, isShadowUndef(u)) };
      }
      return undefined;
    }
    case CONSTANT:
      return value === node.value ? undefined : { path, expected: 'the same array as before', got: valueWords(value) };
    case GROUP: {
      const expected = `a group { ${node.names.join(', ')} }`;
      if (!isPlainObject(value)) return { path, expected, got: valueWords(value) };
      const keys = Object.keys(value);
      if (keys.length !== node.names.length || keys.some((k, j) => k !== node.names[j])) {
        return { path, expected, got: `a group { ${keys.join(', ')} }` };
      }
      for (let j = 0; j < node.names.length; j++) {
        const name = node.names[j] as string;
        const d = difference(node.children[j] as SpecNode, value[name], path === '' ? name : `${path}.${name}`);
        if (d !== undefined) return d;
      }
      return undefined;
    }
    default: {
      const expected = `a list of ${node.children.length}`;
      if (!Array.isArray(value)) return { path, expected, got: valueWords(value) };
      if (value.length !== node.children.length) return { path, expected, got: `a list of ${value.length}` };
      for (let j = 0; j < value.length; j++) {
        const d = difference(node.children[j] as SpecNode, value[j], `${path}[${j}]`);
        if (d !== undefined) return d;
      }
      return undefined;
    }
  }
}

function leafText(dtype: string, dims: readonly number[], shadow: boolean): string {
  return `${shadow ? 'a shadow ' : ''}Undef(${shapeText(dtype, dims)})`;
}

function valueWords(value: unknown): string {
  if (isArray(value)) {
    const s = shapeOf(value);
    return `an array ${shapeText(s.dtype, s.dims)}`;
  }
  if (isUndef(value)) return `Undef(${shapeText(value.dtype, value.dims)})`;
  return describeValue(value);
}
