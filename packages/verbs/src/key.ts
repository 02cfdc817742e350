// Internal: the key of a call plan, the part of a call's arguments its describers may depend on.
//
// Describers are pure functions of their arguments' dtype, dims and options, so a plan is keyed
// on exactly that, read without allocating on every call:
// - an array argument by its family, dtype and dims (a bare TypedArray by its dtype and length);
// - a primitive by its value (a describer may read a positional number: nothing can tell);
// - a plain object (an options object, a group of parameters) by what the describers *read* of
//   it: on the call that builds a plan, describers receive a tracking view of each plain object
//   (a Proxy) that records every key they get; the key holds those keys and, for each, the key of
//   the value they found. A describer that enumerates or probes the object (`for...in`, spread,
//   `in`, `Object.keys`) makes the whole object part of the key: its own keys, in order, and all
//   their values. An option no describer reads (a learning rate, a caller buffer, a callback
//   made fresh on every call) is not in the key, so passing a fresh options object on every call
//   still finds the plan;
// - a JS array by its length and every element's key;
// - anything else (a class instance, a function) by identity, held weakly so that a plan never
//   keeps an argument alive.

import { type AnyArray, dtypeOfTypedArray, isArray, type PolArray } from '@pol/core';
import { familyKey, isPlainObject, sameDims } from '@pol/core/backend';

const PRIMITIVE = 0;
const POL_ARRAY = 1;
const TYPED_ARRAY = 2;
const GROUP = 3;
const LIST = 4;
const IDENTITY = 5;

/** What a plan remembers of one argument (or of one value inside a plain object or JS array). */
export class ValueKey {
  kind = PRIMITIVE;
  /** PRIMITIVE: the value. */
  value: unknown;
  /**
   * IDENTITY: the object, weakly: a set of that one object. Not a WeakRef, whose `deref` adds its
   * target to V8's keep-alive list for the rest of the task, allocating on the first call of every
   * task (about 120 B measured), where `WeakSet.has` allocates nothing.
   */
  ref: WeakSet<object> | undefined;
  /** POL_ARRAY: the family; TYPED_ARRAY: unused. */
  family: unknown;
  /** POL_ARRAY and TYPED_ARRAY. */
  dtype: string | undefined;
  /** POL_ARRAY: the dims (a frozen copy). */
  dims: readonly number[] | undefined;
  /** TYPED_ARRAY: the length; LIST: the length. */
  length = 0;
  /** GROUP: the keys the describers read (all own keys, in order, when `exact`). */
  keys: string[] = [];
  /** GROUP and LIST: the value keys, one per entry of `keys` (or per element). */
  children: ValueKey[] = [];
  /** GROUP: whether the object's own keys must be exactly `keys`, in order. */
  exact = false;

  /** Whether `v` has what this key remembers. Allocates nothing. */
  matches(v: unknown): boolean {
    // An array argument, a steady call's common case, here; every other kind apart, so that this
    // stays small enough for V8 to inline into the plan lookup.
    if (this.kind !== POL_ARRAY) return this.#matchesOther(v);
    if (typeof v !== 'object' || v === null) return false;
    const a = v as PolArray;
    return a[familyKey] === this.family && a.dtype === this.dtype && sameDims(a.dims, this.dims as readonly number[]);
  }

  #matchesOther(v: unknown): boolean {
    switch (this.kind) {
      case PRIMITIVE:
        return Object.is(v, this.value);
      case TYPED_ARRAY:
        return dtypeOfTypedArray(v) === this.dtype && (v as { length: number }).length === this.length;
      case GROUP:
        return this.#matchesGroup(v);
      case LIST: {
        if (!Array.isArray(v) || v.length !== this.length) return false;
        const children = this.children;
        for (let i = 0; i < children.length; i++) if (!(children[i] as ValueKey).matches(v[i])) return false;
        return true;
      }
      default:
        return (typeof v === 'object' && v !== null) || typeof v === 'function' ? this.ref?.has(v) === true : false;
    }
  }

  #matchesGroup(v: unknown): boolean {
    if (!isPlainObject(v)) return false;
    const keys = this.keys;
    const children = this.children;
    if (this.exact) {
      let j = 0;
      for (const key in v) {
        if (key !== keys[j]) return false;
        j++;
      }
      if (j !== keys.length) return false;
    }
    for (let j = 0; j < keys.length; j++) if (!(children[j] as ValueKey).matches(v[keys[j] as string])) return false;
    return true;
  }
}

/** The key of `v` in full: every key and value of plain objects, as when a describer enumerates one. */
export function fullKey(v: unknown, depth = 0): ValueKey {
  const key = new ValueKey();
  if (isArray(v)) {
    const dtype = dtypeOfTypedArray(v);
    if (dtype !== undefined) {
      key.kind = TYPED_ARRAY;
      key.dtype = dtype;
      key.length = (v as AnyArray as { length: number }).length;
    } else {
      const a = v as PolArray;
      key.kind = POL_ARRAY;
      key.family = a[familyKey];
      key.dtype = a.dtype;
      key.dims = Object.isFrozen(a.dims) ? a.dims : Object.freeze(a.dims.slice());
    }
    return key;
  }
  if (depth < 32 && isPlainObject(v)) {
    key.kind = GROUP;
    key.exact = true;
    for (const k in v) {
      key.keys.push(k);
      key.children.push(fullKey(v[k], depth + 1));
    }
    return key;
  }
  if (depth < 32 && Array.isArray(v)) {
    key.kind = LIST;
    key.length = v.length;
    for (let i = 0; i < v.length; i++) key.children.push(fullKey(v[i], depth + 1));
    return key;
  }
  if ((typeof v === 'object' && v !== null) || typeof v === 'function') {
    key.kind = IDENTITY;
    key.ref = new WeakSet([v as object]);
    return key;
  }
  key.value = v;
  return key;
}

/**
 * Records what describers read of the plain objects they are handed. `view(v)` gives what a
 * describer receives in place of `v`; once the describers have run, `close()` stops recording (a
 * view kept by a describer then reads through), and `keyOf(v)` is the key of the argument `v`.
 */
export class Tracker {
  #recording = true;
  readonly #groups = new Map<object, ValueKey>();

  /** What to hand a describer for the argument `v`: a recording view of a plain object, else `v`. */
  view(v: unknown): unknown {
    if (!isPlainObject(v)) return v;
    let key = this.#groups.get(v);
    if (key === undefined) {
      key = new ValueKey();
      key.kind = GROUP;
      this.#groups.set(v, key);
    }
    return this.#proxy(v, key, 0);
  }

  close(): void {
    this.#recording = false;
  }

  /** The key of argument `v`, as far as the describers looked. */
  keyOf(v: unknown): ValueKey {
    return (isPlainObject(v) ? this.#groups.get(v) : undefined) ?? fullKey(v);
  }

  #proxy(target: Record<string, unknown>, key: ValueKey, depth: number): object {
    const tracker = this;
    const enumerate = (): void => {
      if (!tracker.#recording || key.exact) return;
      const full = fullKey(target, depth);
      key.exact = true;
      key.keys = full.keys;
      key.children = full.children;
    };
    return new Proxy(target, {
      get(t, property, receiver) {
        const value: unknown = Reflect.get(t, property, receiver);
        if (!tracker.#recording || typeof property !== 'string' || key.exact) return value;
        const at = key.keys.indexOf(property);
        if (at >= 0) {
          const child = key.children[at] as ValueKey;
          return child.kind === GROUP && !child.exact && isPlainObject(value) ? tracker.#proxy(value, child, depth + 1) : value;
        }
        // A nested plain object is tracked in turn, unless a proxy may not stand in for it (a frozen
        // object's own value must be returned as is): then it is keyed in full.
        if (depth < 32 && isPlainObject(value) && !isFixed(t, property)) {
          const child = new ValueKey();
          child.kind = GROUP;
          key.keys.push(property);
          key.children.push(child);
          return tracker.#proxy(value, child, depth + 1);
        }
        key.keys.push(property);
        key.children.push(fullKey(value, depth + 1));
        return value;
      },
      has(t, property) {
        enumerate();
        return Reflect.has(t, property);
      },
      ownKeys(t) {
        enumerate();
        return Reflect.ownKeys(t);
      },
      getOwnPropertyDescriptor(t, property) {
        enumerate();
        return Reflect.getOwnPropertyDescriptor(t, property);
      },
      set(t, property, value, receiver) {
        enumerate();
        return Reflect.set(t, property, value, receiver);
      },
      defineProperty(t, property, descriptor) {
        enumerate();
        return Reflect.defineProperty(t, property, descriptor);
      },
      deleteProperty(t, property) {
        enumerate();
        return Reflect.deleteProperty(t, property);
      },
    });
  }
}

// Whether a Proxy's get must return the target's own value for `property` (a non-configurable,
// non-writable data property).
function isFixed(target: object, property: string): boolean {
  const d = Reflect.getOwnPropertyDescriptor(target, property);
  return d !== undefined && d.configurable === false && d.writable === false;
}
