import { defineConfig } from 'vitest/config';

/**
 * The one vitest configuration every package uses: behaviour tests beside their modules
 * (`*.test.ts`), type tests beside them too (`*.test-d.ts`, checked by tsc), and a JSON report per
 * package that `scripts/test-summary.mjs` adds up.
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
      reporters: ['default', ['json', { outputFile: '.vitest-report.json' }]],
    },
  });
}
