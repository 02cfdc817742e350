/// <reference types="node" />
// Every ```ts example in the doc comments of src/ and in README.md type-checks, runs, and prints
// what its comments say; every public export appears in one.
import { docExamples, webAssemblyGlobals } from '@pol/doc-examples';

docExamples({
  root: new URL('..', import.meta.url),
  imports: { '@pol/arena': 'src/index.ts', '@pol/arena/backend': 'src/backend.ts' },
  coverage: ['src/index.ts', 'src/backend.ts'],
  globals: webAssemblyGlobals,
});
