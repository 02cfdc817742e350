import type { DocGlobals } from './index.js';

/**
 * The part of the `WebAssembly` global the packages' examples use, declared for their type check.
 * Every runtime Pol supports has the global; its types come from the DOM lib or a newer
 * @types/node than this repository's (20.x declares none), so an example that makes a memory or an
 * instance needs them declared. Nothing is added at run time.
 */
export const webAssemblyGlobals: DocGlobals = {
  declarations: [
    'declare namespace WebAssembly {',
    '  class Memory {',
    '    constructor(descriptor: { initial: number; maximum?: number; shared?: boolean });',
    '    readonly buffer: ArrayBuffer;',
    '    grow(delta: number): number;',
    '  }',
    '  class Module {',
    '    constructor(bytes: Uint8Array);',
    '  }',
    '  class Instance {',
    '    constructor(module: Module, imports: object);',
    '    readonly exports: object;',
    '  }',
    '}',
  ].join('\n'),
  values: () => ({}),
};
