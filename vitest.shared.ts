import { defineConfig } from 'vitest/config';

/**
 * The vitest configuration of the repository's packages, benchmarks and tools (the starter
 * templates under examples/ have their own, which stand alone): behaviour tests beside their
 * modules (`*.test.ts`), type tests beside them too (`*.test-d.ts`, checked by tsc). The JSON
 * report that `npm test` adds up is asked for on the command line (scripts/pol.mjs), for every
 * package alike.
 */
export function polVitestConfig(options: { testTimeout?: number } = {}) {
  return defineConfig({
    test: {
      include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
      testTimeout: options.testTimeout ?? 20_000,
      typecheck: {
        enabled: true,
        include: ['src/**/*.test-d.ts', 'test/**/*.test-d.ts'],
        tsconfig: './tsconfig.json',
      },
    },
  });
}
