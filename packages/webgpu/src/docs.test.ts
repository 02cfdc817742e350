/// <reference types="node" />
// Every ```ts example in the doc comments of src/ (the examples' perceptron included) and in
// README.md type-checks, runs on a real WebGPU device (Dawn; SwiftShader without a GPU), and
// prints what its comments say; every public export appears in one. Examples use a `device` and
// the `gpu` object they do not create (the README's "Node.js (Dawn) notes" show how), and WebGPU's
// globals (GPUBufferUsage, …), as a browser page would.
import { docExamples } from '@pol/doc-examples';
import { create, globals } from 'webgpu';

// Dawn frees its instance when this object is garbage-collected: keep it for the whole file.
let gpu: GPU | undefined;

docExamples({
  root: new URL('..', import.meta.url),
  imports: { '@pol/webgpu': 'src/index.ts', '@pol/webgpu/examples': 'src/examples/index.ts' },
  coverage: ['src/index.ts', 'src/examples/index.ts'],
  types: ['node', '@webgpu/types'],
  // One module registry for all examples, as in one program: Pol instruments a device once.
  freshModules: false,
  timeout: 30_000,
  globals: {
    declarations: [
      '/** A WebGPU device (in the tests, Dawn over SwiftShader). */',
      'declare const device: GPUDevice;',
      '/** The WebGPU entry point: `navigator.gpu` in a browser, `create([])` from Dawn in Node.js. */',
      'declare const gpu: GPU;',
    ].join('\n'),
    values: async () => {
      gpu ??= create([]);
      const adapter = await gpu.requestAdapter();
      if (adapter === null) {
        throw new Error(
          `No WebGPU adapter (VK_ICD_FILENAMES=${process.env.VK_ICD_FILENAMES ?? '(unset)'}): install chromium and libvulkan1 for SwiftShader.`,
        );
      }
      const device = await adapter.requestDevice({ label: 'doc examples' });
      return { ...(globals as Record<string, unknown>), gpu, device };
    },
    dispose: ({ device }) => (device as GPUDevice).destroy(),
  },
});
