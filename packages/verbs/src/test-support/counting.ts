// A test double for the space protocol: host memory that counts what is live, supports savepoints
// (like an arena's all-or-nothing spec allocation), opens frames that free what they allocated
// when they close, poisons fresh arrays (arena memory is not zeroed), and can be told to fail.
import { type DType, dtypeInfo, type Frame, type HostArray, type Space } from '@pol/core';
import { frameKey, makeHostArray, openFrameKey, rollbackKey, savepointKey, spaceKey } from '@pol/core/backend';

export interface Counting extends Space<'host'> {
  /** Arrays allocated and not yet freed (by a frame closing or a rollback), across the space and its frames. */
  readonly live: number;
  /** Every allocation ever made, in order, as `dtype[dims]` strings. */
  readonly log: readonly string[];
  /** Frames open right now. */
  readonly openFrames: readonly Frame<'host'>[];
  /** Fail (throw) on the allocation after `n` more succeed; `undefined` never fails. */
  failAfter: number | undefined;
}

class FullError extends Error {}

export { FullError };

export function countingSpace(poison = Number.NaN): Counting {
  const log: string[] = [];
  const openFrames: Frame<'host'>[] = [];
  let live = 0;
  const make = <D extends DType>(dtype: D, dims: readonly number[]): HostArray<D> => {
    if (state.failAfter !== undefined) {
      if (state.failAfter <= 0) throw new FullError(`counting space full at ${dtype}[${dims.join(', ')}]`);
      state.failAfter--;
    }
    let n = 1;
    for (const d of dims) n *= d;
    const data = new (dtypeInfo(dtype).TypedArray)(n);
    if (dtypeInfo(dtype).bigint) (data as BigInt64Array).fill(7n);
    else (data as Float32Array).fill(poison);
    live++;
    log.push(`${dtype}[${dims.join(', ')}]`);
    return makeHostArray(dtype, Object.freeze(dims.slice()), data);
  };

  const frameOn = (parent: Space<'host'>): Frame<'host'> => {
    let mine = 0;
    let open = true;
    const frame: Frame<'host'> = {
      [spaceKey]: 'host',
      [frameKey]: true,
      parent,
      get isOpen() {
        return open;
      },
      alloc<D extends DType>(dtype: D, dims: readonly number[]) {
        if (!open) throw new Error('closed');
        if (openFrames[openFrames.length - 1] !== frame) throw new Error('not the innermost frame');
        const a = make(dtype, dims);
        mine++;
        return a;
      },
      [openFrameKey]: () => {
        const f = frameOn(frame);
        openFrames.push(f);
        return f;
      },
      [savepointKey]: () => mine,
      [rollbackKey]: (token: unknown) => {
        live -= mine - (token as number);
        mine = token as number;
      },
      close() {
        if (!open) return;
        open = false;
        live -= mine;
        mine = 0;
        const i = openFrames.lastIndexOf(frame);
        if (i !== openFrames.length - 1) throw new Error('closing a frame that is not innermost');
        openFrames.pop();
      },
      [Symbol.dispose]() {
        frame.close();
      },
    };
    return frame;
  };

  let own = 0;
  const state: Counting = {
    [spaceKey]: 'host',
    failAfter: undefined,
    get live() {
      return live;
    },
    log,
    openFrames,
    alloc<D extends DType>(dtype: D, dims: readonly number[]) {
      if (openFrames.length > 0) throw new Error('allocating from the bare space while a frame is open');
      const a = make(dtype, dims);
      own++;
      return a;
    },
    [openFrameKey]: () => {
      const f = frameOn(state);
      openFrames.push(f);
      return f;
    },
    [savepointKey]: () => own,
    [rollbackKey]: (token: unknown) => {
      live -= own - (token as number);
      own = token as number;
    },
  };
  return state;
}
