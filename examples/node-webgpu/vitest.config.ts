import { mergeConfig } from 'vitest/config';
// The repository's shared configuration: a JSON report that the root test script adds up. Copied
// out of the repository, replace this file with `export default { test: { pool: 'forks' } };`.
import { polVitestConfig } from '../../vitest.shared.ts';

// Forks, not worker threads: Dawn is a native module, and each test file gets a process of its own.
export default mergeConfig(polVitestConfig({ testTimeout: 60_000 }), { test: { pool: 'forks' } });
