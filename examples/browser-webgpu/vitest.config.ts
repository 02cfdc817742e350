import { defineConfig } from 'vitest/config';

export default defineConfig({
  // Building the page and driving a headless browser take longer than unit tests.
  test: { include: ['src/**/*.test.ts'], testTimeout: 60_000 },
});
