import { type DType, type HostArray, hostArray } from '@pol/core';
import fc from 'fast-check';

/** Dims of up to three axes, each 0 to 4 long. */
export const dimsArb: fc.Arbitrary<number[]> = fc.array(fc.integer({ min: 0, max: 4 }), { maxLength: 3 });

const dtypeArb = fc.constantFrom<DType>('float32', 'float64', 'int32', 'uint8', 'int64');

const ctors = {
  float32: Float32Array,
  float64: Float64Array,
  int32: Int32Array,
  uint8: Uint8Array,
  int64: BigInt64Array,
} as const;

/** A host array of a random dtype and dims, filled with a recognizable value. */
export const primalArb: fc.Arbitrary<HostArray> = fc.tuple(dtypeArb, dimsArb).map(([dtype, dims]) => {
  const n = dims.reduce((a, b) => a * b, 1);
  const Ctor = ctors[dtype as keyof typeof ctors];
  const data = new Ctor(n);
  if (data instanceof BigInt64Array) data.fill(3n);
  else data.fill(3);
  return hostArray(data, dims) as HostArray;
});

/** A nested structure of primals: an array, or plain objects of them up to three levels deep. */
export type Tree = HostArray | { [key: string]: Tree };

export const treeArb: fc.Arbitrary<Tree> = fc.letrec<{ tree: Tree; node: Tree }>((tie) => ({
  tree: fc.oneof({ depthSize: 'small', withCrossShrink: true }, primalArb, tie('node')),
  node: fc.dictionary(fc.stringMatching(/^[a-z]{1,3}$/), tie('tree'), { minKeys: 0, maxKeys: 3 }),
})).tree;

/** The leaves of a tree with their key paths, in key order. */
export function leaves(tree: Tree, path = ''): [string, HostArray][] {
  if ('dtype' in tree && 'dims' in tree) return [[path, tree as HostArray]];
  return Object.entries(tree).flatMap(([k, v]) => leaves(v as Tree, path === '' ? k : `${path}.${k}`));
}
