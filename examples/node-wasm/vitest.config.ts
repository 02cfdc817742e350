import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    // Forks with the garbage collector exposed: the steady-loop test measures the bytes a loop of
    // calls allocates between two full collections.
    pool: 'forks',
    execArgv: ['--expose-gc'],
    testTimeout: 30_000,
  },
});
