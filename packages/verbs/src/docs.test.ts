/// <reference types="node" />
// Every ```ts example in the doc comments of src/ (the examples' kernels included) and in
// README.md type-checks, runs, and prints what its comments say; every public export appears in one.
import { docExamples, webAssemblyGlobals } from '@pol/doc-examples';

docExamples({
  root: new URL('..', import.meta.url),
  imports: { '@pol/verbs': 'src/index.ts', '@pol/verbs/examples': 'src/examples/index.ts' },
  coverage: ['src/index.ts', 'src/examples/index.ts'],
  globals: webAssemblyGlobals,
});
