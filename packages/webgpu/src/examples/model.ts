/**
 * Where the perceptron lives on the device: two arenas, one `GPUBuffer` each, and the model's
 * buffers carved from them, made from the same data and initial weights as the CPU example's.
 *
 * @module
 */
import type { Arena } from '@pol/arena';
import { alloc, type Frame, Similar, Undef } from '@pol/core';
import { shadowSpec, walkShadows } from '@pol/verbs';
import { blobs, initMlp, type Mlp, seededRandom } from '@pol/verbs/examples';
import { deviceArena, upload } from '../index.js';
import type { GpuF32, GpuI32, GpuMlp } from './types.js';

/**
 * The two arenas a model lives on, one `GPUBuffer` each. `params` holds the weights and biases,
 * which the layers bind `read` and only SGD writes; `arena` holds everything else (data, labels,
 * gradients, the loss) and the step's frames (activations, scratch). No dispatch writes both, so
 * each can be bound read-only where the other is written.
 *
 * @example
 * ```ts
 * import { type ModelArenas, modelArenas } from '@pol/webgpu/examples';
 * const arenas: ModelArenas = modelArenas(device, { params: 1 << 12, arena: 1 << 16 }, { label: 'model' });
 * console.log(arenas.params.slab.buffer === arenas.arena.slab.buffer); // false
 * arenas.params.slab.destroy();
 * arenas.arena.slab.destroy();
 * ```
 */
export interface ModelArenas {
  readonly params: Arena<'gpu'>;
  readonly arena: Arena<'gpu'>;
}

/**
 * Make the two arenas, of `bytes.params` and `bytes.arena` bytes, labelled after `label`
 * (`checked` makes both checked arenas). If the second cannot be made, the first is destroyed.
 *
 * @example
 * ```ts
 * import { modelArenas } from '@pol/webgpu/examples';
 * const { params, arena } = modelArenas(device, { params: 1024, arena: 1 << 16 }, { label: 'mlp' });
 * console.log(params.capacity, arena.capacity); // 1024 65536
 * params.slab.destroy();
 * arena.slab.destroy();
 * ```
 */
export function modelArenas(
  device: GPUDevice,
  bytes: { readonly params: number; readonly arena: number },
  options: { readonly label: string; readonly checked?: boolean },
): ModelArenas {
  const checked = options.checked ?? false;
  const params = deviceArena(device, bytes.params, { label: `${options.label} parameters`, checked });
  try {
    return { params, arena: deviceArena(device, bytes.arena, { label: options.label, checked }) };
  } catch (error) {
    params.slab.destroy();
    throw error;
  }
}

/**
 * Destroy both arenas' slabs (the arenas stay readable as a record).
 *
 * @example
 * ```ts
 * import { destroyArenas, modelArenas } from '@pol/webgpu/examples';
 * const arenas = modelArenas(device, { params: 1024, arena: 4096 }, { label: 'brief' });
 * destroyArenas(arenas);
 * console.log(arenas.arena.capacity); // 4096
 * ```
 */
export function destroyArenas(arenas: ModelArenas): void {
  arenas.params.slab.destroy();
  arenas.arena.slab.destroy();
}

/**
 * Everything one model needs on the device: the data, the parameters, their gradients (their
 * `Shadows`) and the loss.
 *
 * @example
 * ```ts
 * import { destroyArenas, type GpuModel, modelArenas, placeModel } from '@pol/webgpu/examples';
 * const arenas = modelArenas(device, { params: 1 << 12, arena: 1 << 16 }, { label: 'model' });
 * const model: GpuModel = placeModel(arenas, { seed: 1, hidden: 16 });
 * console.log(model.x.dims, model.labels.dims, model.grads.layer1.w.dims); // [ 90, 2 ] [ 90 ] [ 2, 16 ]
 * destroyArenas(arenas);
 * ```
 */
export interface GpuModel {
  readonly x: GpuF32;
  readonly labels: GpuI32;
  readonly params: GpuMlp;
  readonly grads: GpuMlp;
  readonly loss: GpuF32;
}

/** Descriptions of arrays like the host parameters `p`, for carving their device twins. */
function likeMlp(p: Mlp) {
  return {
    layer1: { w: Undef(p.layer1.w), b: Undef(p.layer1.b) },
    layer2: { w: Undef(p.layer2.w), b: Undef(p.layer2.b) },
  };
}

/**
 * Carve the model's buffers, the parameters from `arenas.params` and the rest from `arenas.arena`
 * (always in the same order, so on two pairs of arenas they land at the same offsets), and upload
 * the data (`blobs`: 90 points in the plane, 3 classes) and initial parameters (`initMlp`, 2 →
 * `hidden` → 3), made on the host from `seededRandom(seed)` exactly as the CPU example makes them.
 *
 * @example
 * ```ts
 * import { download } from '@pol/webgpu';
 * import { destroyArenas, modelArenas, placeModel } from '@pol/webgpu/examples';
 * const arenas = modelArenas(device, { params: 1 << 12, arena: 1 << 16 }, { label: 'placed' });
 * const m = placeModel(arenas, { seed: 1, hidden: 16 });
 * console.log(arenas.params.offset, (await download(m.grads.layer2.b)).data); // 780 Float32Array(3) [ 0, 0, 0 ]
 * destroyArenas(arenas);
 * ```
 */
export function placeModel(
  arenas: { readonly params: Arena<'gpu'> | Frame<'gpu'>; readonly arena: Arena<'gpu'> | Frame<'gpu'> },
  options: { readonly seed: number; readonly hidden: number },
): GpuModel {
  const host = Similar(new Float32Array(0)); // the GC space, for the host-side copies
  const random = seededRandom(options.seed);
  const data = blobs(host, random, 30, 3);
  const init = initMlp(host, random, 2, options.hidden, 3);
  const params = alloc(arenas.params, likeMlp(init));
  const rest = alloc(arenas.arena, {
    x: Undef(data.x),
    labels: Undef(data.labels),
    grads: shadowSpec(init), // the parameters' Shadows: zeroed, of the same shapes, on the step's buffer
    loss: Undef('float32', [1]),
  });
  upload(rest.x, data.x);
  upload(rest.labels, data.labels);
  walkShadows(init, params, (h, g) => upload(g, h));
  return { ...rest, params };
}
