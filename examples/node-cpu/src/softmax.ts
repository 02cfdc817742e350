import { describe, type HostArray, Undef } from '@pol/core';

type F32 = HostArray<'float32'>;

/**
 * A numerically stable softmax that allocates nothing: it writes into `out.y`, and uses
 * `options.tmp` as scratch. What it needs is described below, so the caller decides where those
 * buffers come from.
 */
export const softmaxInto = describe(
  function softmaxInto(out: { y: F32 }, x: F32, options: { tmp: F32 }): void {
    const xs = x.data;
    const tmp = options.tmp.data;
    const ys = out.y.data;
    let max = Number.NEGATIVE_INFINITY;
    for (let i = 0; i < xs.length; i++) max = Math.max(max, xs[i] ?? 0);
    let sum = 0;
    for (let i = 0; i < xs.length; i++) {
      const e = Math.exp((xs[i] ?? 0) - max);
      tmp[i] = e;
      sum += e;
    }
    for (let i = 0; i < xs.length; i++) ys[i] = (tmp[i] ?? 0) / sum;
  },
  {
    outputs: (x: F32) => ({ y: Undef(x) }),
    scratch: (x: F32) => ({ tmp: Undef(x) }),
  },
);
