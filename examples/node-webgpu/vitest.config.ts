import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    // Forks, not worker threads: Dawn is a native module, and each test file gets a process of its own.
    pool: 'forks',
    // A WebGPU device on SwiftShader (a CPU driver) compiles shaders slowly.
    testTimeout: 60_000,
  },
});
