/// <reference types="@webgpu/types" preserve="true" />
/**
 * `@pol/webgpu/examples` for TypeScript before 6.0, whose DOM lib has no WebGPU: the same
 * exports, with `@webgpu/types` brought into the program for them, as `index-ts5.ts` of the
 * package's main entry does (the package's `exports` pick this file with the `types@<6.0` condition).
 *
 * @module
 */

export * from './index.js';
