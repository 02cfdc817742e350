/// <reference types="node" />
// Every ```ts example in the doc comments of src/ and in README.md type-checks, runs, and prints
// what its comments say; every public export appears in one.
import { docExamples } from '@pol/doc-examples';

docExamples({
  root: new URL('..', import.meta.url),
  imports: { '@pol/core': 'src/index.ts', '@pol/core/backend': 'src/backend.ts' },
  coverage: ['src/index.ts', 'src/backend.ts'],
});
