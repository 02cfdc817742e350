// A plan's own path for flat specs must be exactly core's materializer on them: the same
// allocations in the same order, the same zeroing, the caller's buffers used as they are.
import { type HostArray, hostArray, type Spec, Undef, zeroed } from '@pol/core';
import { materializeInto } from '@pol/core/backend';
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { SpecPlan } from './spec-plan.js';
import { countingSpace } from './test-support/counting.js';

const leafArb = fc.record({
  dtype: fc.constantFrom('float32' as const, 'int32' as const, 'float64' as const),
  dims: fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 2 }),
  zero: fc.boolean(),
  supplied: fc.boolean(),
});
const flatArb = fc.uniqueArray(fc.tuple(fc.constantFrom('a', 'b', 'c', 'd', 'e'), leafArb), {
  selector: ([n]) => n,
  maxLength: 5,
});

test('property: flat specs materialize as core materializes them', () => {
  fc.assert(
    fc.property(flatArb, flatArb, (first, second) => {
      const names = new Set(first.map(([n]) => n));
      const rest = second.filter(([n]) => !names.has(n));
      const toSpec = (entries: typeof first): Spec =>
        Object.fromEntries(entries.map(([n, l]) => [n, l.zero ? zeroed(Undef(l.dtype, l.dims)) : Undef(l.dtype, l.dims)]));
      const specs = [toSpec(first), toSpec(rest)];
      const supplied: Record<string, HostArray> = {};
      for (const [n, l] of [...first, ...rest]) {
        if (!l.supplied) continue;
        const count = l.dims.reduce((a, b) => a * b, 1);
        const data =
          l.dtype === 'float32' ? new Float32Array(count) : l.dtype === 'int32' ? new Int32Array(count) : new Float64Array(count);
        supplied[n] = hostArray(data.fill(7) as Float32Array, l.dims) as HostArray;
      }
      const viaPlan = countingSpace(Number.NaN);
      const plan = new SpecPlan(specs);
      plan.fill(viaPlan, supplied);
      const viaCore = countingSpace(Number.NaN);
      const into: Record<string, unknown> = {};
      for (const spec of specs) materializeInto(viaCore, spec, into, supplied);
      expect(plan.names).toEqual(Object.keys(into));
      expect(viaPlan.log).toEqual(viaCore.log);
      for (const [j, name] of plan.names.entries()) {
        const mine = plan.values[j] as HostArray;
        const theirs = into[name] as HostArray;
        if (supplied[name] !== undefined) expect(mine).toBe(supplied[name]);
        expect([mine.dtype, mine.dims, Array.from(mine.data as ArrayLike<number>)]).toEqual([
          theirs.dtype,
          theirs.dims,
          Array.from(theirs.data as ArrayLike<number>),
        ]);
      }
      plan.clear();
      expect(plan.values.every((v) => v === undefined)).toBe(true);
    }),
  );
});

test('a spec with a group or a list goes through core: the same result', () => {
  const spec = { y: Undef('float32', 2), g: { w: zeroed(Undef('float32', 1)) }, l: [Undef('int32', 3)] } as unknown as Spec;
  const plan = new SpecPlan([spec]);
  const space = countingSpace(Number.NaN);
  plan.fill(space, undefined);
  expect(plan.names).toEqual(['y', 'g', 'l']);
  expect(space.log).toEqual(['float32[2]', 'float32[1]', 'int32[3]']);
  expect(Array.from((plan.values[1] as { w: HostArray<'float32'> }).w.data)).toEqual([0]);
  expect(Array.isArray(plan.values[2])).toBe(true);
});
