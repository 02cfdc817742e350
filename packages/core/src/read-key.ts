/**
 * `object[key]`, for a `key` enumerated from another object (`for (const key in spec)`), read
 * without V8's for-in fast path.
 *
 * Written as a plain keyed load inside such a loop, the read takes that fast path whenever the two
 * objects share a hidden class (a spec `{ y: Undef(x) }` and a caller's `{ y }` do: two object
 * literals with the same keys), and the optimizing tiers deoptimize whenever they stop sharing it
 * (the next verb's spec is `{ tmp: ... }`). A verb checking its caller's buffers against its
 * specs that way was recompiled thousands of times in a steady loop on Node.js 24 and 26, about 9 B
 * of new code a call. `Reflect.get` is the same read (own or inherited, getters run), without the
 * fast path. Internal to core.
 */
export function readKey(object: object, key: string): unknown {
  return Reflect.get(object, key);
}
