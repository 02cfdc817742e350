/**
 * WebGPU's numeric flags and buffer binding types, as this package uses them. Spelled out here so
 * that the package never needs WebGPU's globals (`GPUBufferUsage`, …) to be defined.
 *
 * @module
 */

/** `GPUBufferUsage` flags, as numbers. */
export const Usage = Object.freeze({
  MAP_READ: 0x0001,
  MAP_WRITE: 0x0002,
  COPY_SRC: 0x0004,
  COPY_DST: 0x0008,
  INDEX: 0x0010,
  VERTEX: 0x0020,
  UNIFORM: 0x0040,
  STORAGE: 0x0080,
  INDIRECT: 0x0100,
  QUERY_RESOLVE: 0x0200,
});

/** Every `GPUBufferUsage` flag at once: a usage above this is not WebGPU's. */
export const ALL_USAGES = 0x03ff;

/** `GPUMapMode.READ`. */
export const MAP_MODE_READ = 0x0001;

/** How a buffer binding is used: WebGPU's three buffer binding types. */
export type BufferBindingKind = 'uniform' | 'storage' | 'read-only-storage';
