import type { GpuArray } from '../index.js';

/**
 * A row-major float32 array on the device: what every kernel of the perceptron reads and writes
 * (the device twin of `F32` in `@pol/verbs/examples`).
 *
 * @example
 * ```ts
 * import { alloc } from '@pol/core';
 * import { deviceArena } from '@pol/webgpu';
 * import type { GpuF32 } from '@pol/webgpu/examples';
 * const arena = deviceArena(device, 1 << 12);
 * const x: GpuF32 = alloc(arena, 'float32', [2, 3]);
 * console.log(x.dims, x.size); // [ 2, 3 ] 24
 * arena.slab.destroy();
 * ```
 */
export type GpuF32 = GpuArray<'float32'>;

/**
 * An int32 array on the device: the class labels.
 *
 * @example
 * ```ts
 * import { alloc } from '@pol/core';
 * import { deviceArena } from '@pol/webgpu';
 * import type { GpuI32 } from '@pol/webgpu/examples';
 * const arena = deviceArena(device, 1 << 12);
 * const labels: GpuI32 = alloc(arena, 'int32', [90]);
 * console.log(labels.dtype); // 'int32'
 * arena.slab.destroy();
 * ```
 */
export type GpuI32 = GpuArray<'int32'>;

/**
 * One dense layer's parameters on the device: `w` is `[inputs, outputs]`, `b` is `[outputs]`.
 *
 * @example
 * ```ts
 * import { alloc, Undef } from '@pol/core';
 * import { deviceArena } from '@pol/webgpu';
 * import type { GpuLayer } from '@pol/webgpu/examples';
 * const arena = deviceArena(device, 1 << 12);
 * const layer: GpuLayer = alloc(arena, { w: Undef('float32', [2, 16]), b: Undef('float32', [16]) });
 * console.log(layer.w.dims, layer.b.dims); // [ 2, 16 ] [ 16 ]
 * arena.slab.destroy();
 * ```
 */
export interface GpuLayer {
  w: GpuF32;
  b: GpuF32;
}

/**
 * The perceptron's parameters on the device, or their gradients (their `Shadows`): two layers.
 *
 * @example
 * ```ts
 * import { alloc, Undef } from '@pol/core';
 * import { deviceArena } from '@pol/webgpu';
 * import type { GpuMlp } from '@pol/webgpu/examples';
 * const arena = deviceArena(device, 1 << 12);
 * const layer = (inputs: number, outputs: number) => ({ w: Undef('float32', [inputs, outputs]), b: Undef('float32', [outputs]) });
 * const params: GpuMlp = alloc(arena, { layer1: layer(2, 16), layer2: layer(16, 3) });
 * console.log(params.layer2.w.dims); // [ 16, 3 ]
 * arena.slab.destroy();
 * ```
 */
export interface GpuMlp {
  layer1: GpuLayer;
  layer2: GpuLayer;
}
