import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    // Forks with the garbage collector exposed (the pool's workers inherit the flag): the tests
    // measure the bytes a steady task allocates between two full collections. The workers run the
    // built files (dist/): `npm test` builds first.
    pool: 'forks',
    execArgv: ['--expose-gc'],
    testTimeout: 60_000,
  },
});
