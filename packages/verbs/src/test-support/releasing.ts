// A test double for device memory: an array family with `release` (so core's Similar over its
// arrays takes savepoints and releases on rollback), whose allocSimilar can be told to fail, and a
// space wrapper that records the savepoint tokens a verb ends, and how.
import { type DType, dtypeInfo, type HostArray, type PolArray, Similar, type Space } from '@pol/core';
import { type ArrayFamily, commitKey, familyKey, rollbackKey, savepointKey, spaceKey } from '@pol/core/backend';

export class DeviceFull extends Error {}

export interface Releasing {
  readonly family: ArrayFamily<'host'>;
  /** Every array the family made, in order. */
  readonly made: PolArray[];
  /** The arrays of each release call, in order. */
  readonly released: (readonly PolArray[])[];
  /** Fail the allocation whose first dim is this (a device out of memory). */
  failOnFirstDim: number | undefined;
  /** An array of this family (made directly, not counted in `made`), to use as an exemplar or input. */
  array(values: number[]): HostArray<'float32'>;
}

export function releasingFamily(): Releasing {
  // A class per family, carrying it on the prototype as the protocol says (a plain object would be
  // taken for an options object).
  class DeviceArray {
    constructor(
      readonly dtype: DType,
      readonly dims: readonly number[],
      readonly data: unknown,
    ) {}
  }
  const make = <D extends DType>(dtype: D, dims: readonly number[]): HostArray<D> => {
    let n = 1;
    for (const d of dims) n *= d;
    return new DeviceArray(dtype, Object.freeze(dims.slice()), new (dtypeInfo(dtype).TypedArray)(n)) as never;
  };
  const state: Releasing = {
    family: {
      kind: 'host',
      allocSimilar(_exemplar, dtype, dims) {
        if (dims[0] === state.failOnFirstDim) throw new DeviceFull(`out of device memory for ${dtype}[${dims.join(', ')}]`);
        const array = make(dtype, dims);
        state.made.push(array);
        return array;
      },
      release(arrays) {
        state.released.push(arrays.slice());
      },
      zero(array) {
        (array as HostArray<'float32'>).data.fill(0);
      },
      describe: (x) => `fake device ${x.dtype}[${x.dims.join(', ')}]`,
    },
    made: [],
    released: [],
    failOnFirstDim: undefined,
    array(values) {
      const array = make('float32', [values.length]);
      array.data.set(values);
      return array;
    },
  };
  Object.defineProperty(DeviceArray.prototype, familyKey, { value: state.family });
  return state;
}

/** What happened to each savepoint a recording space handed out. */
export interface Ended {
  readonly taken: unknown[];
  readonly committed: unknown[];
  readonly rolledBack: unknown[];
}

/** `Similar(exemplar)`, passing the savepoint protocol through while recording each token's end. */
export function recordingSimilar(exemplar: PolArray): { readonly space: Space<'host'>; readonly ended: Ended } {
  const inner = Similar(exemplar as HostArray<'float32'>);
  const ended: Ended = { taken: [], committed: [], rolledBack: [] };
  const space: Space<'host'> = {
    [spaceKey]: 'host',
    alloc: (dtype, dims) => inner.alloc(dtype, dims),
    [savepointKey]: () => {
      const token = inner[savepointKey]?.();
      ended.taken.push(token);
      return token;
    },
    [commitKey]: (token) => {
      ended.committed.push(token);
      inner[commitKey]?.(token);
    },
    [rollbackKey]: (token) => {
      ended.rolledBack.push(token);
      inner[rollbackKey]?.(token);
    },
  };
  return { space, ended };
}
