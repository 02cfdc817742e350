// Internal: the specs of one part of a call plan (the result: outputs then checkpoints; or the
// scratch), ready to be materialized on every call into a list of values, one per top-level name.
//
// Core's `materializeInto` is the one spec materializer, and every spec goes through it, with one
// exception that is the point of a plan: a spec whose every top-level value is an Undef (the common
// case: `{ y: Undef(x) }`) is materialized here by the plan it was compiled into, name by name:
// the caller's buffer under the name when there is one (used as is, never zeroed), else
// `space.alloc(dtype, dims)`, zeroed through core's `zeroArray` when the Undef is `zeroed`. Those
// are core's rules for a leaf, applied without walking the spec again; a spec with groups, lists or
// arrays passed through goes to `materializeInto`, into a staging object of the plan's own.

import { type DType, isUndef, type Space, type Spec, zeroArray } from '@pol/core';
import { materializeInto } from '@pol/core/backend';
import { clearNames } from './reuse.js';
import { namesOf } from './specs.js';

export class SpecPlan {
  /** Every top-level name, in materialization order. */
  readonly names: readonly string[];
  /** This call's values, by the index of their name in `names`; `clear()` empties it. */
  readonly values: unknown[] = [];
  readonly #specs: readonly Spec[];
  /**
   * Whether every top-level value is an Undef: then `dtypes`, `dims` and `zeroed` hold each name's,
   * read once (what a steady call carves from, see steady.ts); else they are empty (core's path).
   */
  readonly flat: boolean;
  readonly dtypes: DType[] = [];
  readonly dims: (readonly number[])[] = [];
  readonly zeroed: boolean[] = [];
  // The general path's object for materializeInto to write into; never handed out.
  readonly #staging: Record<string, unknown> = {};

  constructor(specs: readonly Spec[]) {
    this.#specs = specs;
    const names: string[] = [];
    let flat = true;
    for (const spec of specs) {
      for (const name of namesOf(spec)) {
        names.push(name);
        const value = spec[name];
        if (isUndef(value)) {
          this.dtypes.push(value.dtype);
          this.dims.push(value.dims);
          this.zeroed.push(value.zeroed);
        } else flat = false;
      }
    }
    this.names = names;
    this.flat = flat;
    if (!flat) {
      this.dtypes.length = 0;
      this.dims.length = 0;
      this.zeroed.length = 0;
    }
  }

  /** Materialize every name into `values`: the caller's buffer under it (in `supplied`), else from `space`. */
  fill(space: Space, supplied: Readonly<Record<string, unknown>> | undefined): void {
    // Two methods, so that the flat one, a steady call's, is small enough for V8 to inline.
    if (this.flat) this.#fillFlat(space, supplied);
    else this.#fillSpecs(space, supplied);
  }

  #fillFlat(space: Space, supplied: Readonly<Record<string, unknown>> | undefined): void {
    const { names, values } = this;
    const dtypes = this.dtypes;
    const dims = this.dims;
    const zero = this.zeroed;
    for (let j = 0; j < names.length; j++) {
      const given = supplied === undefined ? undefined : supplied[names[j] as string];
      if (given !== undefined) {
        values[j] = given;
        continue;
      }
      const array = space.alloc(dtypes[j] as DType, dims[j] as readonly number[]);
      if (zero[j] === true) zeroArray(array);
      values[j] = array;
    }
  }

  #fillSpecs(space: Space, supplied: Readonly<Record<string, unknown>> | undefined): void {
    const { names, values } = this;
    const staging = this.#staging;
    try {
      for (const spec of this.#specs) materializeInto(space, spec, staging, supplied as Record<string, unknown> | undefined);
      for (let j = 0; j < names.length; j++) values[j] = staging[names[j] as string];
    } finally {
      clearNames(staging, names);
    }
  }

  /** Drop this call's values, so that the plan keeps nothing alive between calls. */
  clear(): void {
    const values = this.values;
    for (let j = 0; j < values.length; j++) values[j] = undefined;
  }
}
