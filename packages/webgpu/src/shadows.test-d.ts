// With @pol/webgpu anywhere in the program, ArrayTypes gains 'gpu': shadows of host primals must
// still be host arrays, typed as such (issue: the kind was lost, and `grads.w.data` did not compile).
import type { Arena } from '@pol/arena';
import { type HostArray, hostArray } from '@pol/core';
import { Shadows } from '@pol/verbs';
import { expectTypeOf, describe as group, test } from 'vitest';
import type { GpuArray } from './index.js';

type F32 = HostArray<'float32'>;
declare const hostArena: Arena<'host'>;
declare const gpuArena: Arena<'gpu'>;
declare const gw: GpuArray<'float32'>;

group('Shadows with @pol/webgpu in the program', () => {
  test('shadows of host primals are host arrays: grads.w.data type-checks', () => {
    const grads = Shadows({ w: hostArray(Float32Array.of(1, 2)) });
    expectTypeOf(grads.w).toEqualTypeOf<F32>();
    expectTypeOf(grads.w.data).toEqualTypeOf<Float32Array>();
    expectTypeOf(Shadows({ b: new Int32Array(2) }).b).toEqualTypeOf<HostArray<'int32'>>();
    const layers = [{ w: hostArray(Float32Array.of(1)) }] as const;
    expectTypeOf(Shadows({ layers }).layers[0].w.data).toEqualTypeOf<Float32Array>();
  });

  test('shadows of device primals are device arrays; a space given decides the kind', () => {
    expectTypeOf(Shadows({ w: gw }).w).toEqualTypeOf<GpuArray<'float32'>>();
    expectTypeOf(Shadows(hostArena, { w: gw }).w).toEqualTypeOf<F32>();
    expectTypeOf(Shadows(gpuArena, { w: hostArray(Float32Array.of(1)) }).w).toEqualTypeOf<GpuArray<'float32'>>();
  });
});
