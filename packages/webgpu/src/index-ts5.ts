/// <reference types="@webgpu/types" preserve="true" />
/**
 * `@pol/webgpu` for TypeScript before 6.0, whose DOM lib has no WebGPU: the same exports, with
 * `@webgpu/types` brought into the program for them. From 6.0 on the DOM lib declares WebGPU, and
 * the package's main types (`index.d.ts`) bring nothing in, so the two never clash (the package's
 * `exports` pick this file with the `types@<6.0` condition).
 *
 * @module
 */

export * from './index.js';
